/** The function IR written out, one block a paragraph: for tests and for reading what the builder made. */
import type { Expr } from './expr';
import type { FunctionIR } from './function-ir';

export function printExpr(e: Expr, locals?: FunctionIR['locals']): string {
  const p = (x: Expr) => printExpr(x, locals);
  switch (e.k) {
    case 'num':
      return e.text;
    case 'str':
      return '"…"';
    case 'name':
      return `${e.name}${e.local !== null && locals ? `#${e.local}` : ''}${e.templateArgs ? `<${e.templateArgs.map((t) => ('type' in t ? t.type : p(t.expr))).join(', ')}>` : ''}`;
    case 'this':
      return 'this';
    case 'unary':
      return `${e.op}${p(e.arg)}`;
    case 'update':
      return e.prefix ? `${e.op}${p(e.arg)}` : `${p(e.arg)}${e.op}`;
    case 'binary':
      return `(${p(e.left)} ${e.op} ${p(e.right)})`;
    case 'assign':
      return `${p(e.target)} ${e.op} ${p(e.value)}`;
    case 'cond':
      return `(${p(e.cond)} ? ${p(e.then)} : ${p(e.else)})`;
    case 'call':
      return `${p(e.callee)}(${e.args.map(p).join(', ')})`;
    case 'launch':
      return `${p(e.callee)}<<<${e.config.map(p).join(', ')}>>>(${e.args.map(p).join(', ')})`;
    case 'field':
      return `${p(e.object)}${e.arrow ? '->' : '.'}${e.field}${e.templateArgs ? `<${e.templateArgs.map((t) => ('type' in t ? t.type : p(t.expr))).join(', ')}>` : ''}`;
    case 'index':
      return `${p(e.object)}[${p(e.index)}]`;
    case 'cast':
      return `(${e.type})${p(e.arg)}`;
    case 'sizeof':
      return `sizeof(${e.type ?? (e.arg ? p(e.arg) : '?')})`;
    case 'init':
      return `${e.type ?? ''}{${e.items.map((x, k) => (e.designators?.[k] ? `.${e.designators[k]}=` : '') + p(x)).join(', ')}}`;
    case 'comma':
      return `(${e.items.map(p).join(', ')})`;
    case 'lambda':
      return '[lambda]';
    case 'asm':
      return `asm(${JSON.stringify(e.template)})`;
    case 'alternatives':
      return `one of {${e.options.map(p).join(' | ')}}`;
    case 'unknown':
      return `?${e.text}`;
  }
}

export function printIR(ir: FunctionIR): string {
  const lines: string[] = [];
  for (const b of ir.blocks) {
    lines.push(`B${b.id}:${b.loop ? ' (loop)' : ''}`);
    for (const s of b.stmts) {
      if (s.k === 'decl') {
        const l = ir.locals[s.local];
        lines.push(`  ${l.type} ${l.name}#${l.id}${s.init ? ` = ${printExpr(s.init, ir.locals)}` : ''}`);
      } else lines.push(`  ${printExpr(s.expr, ir.locals)}`);
    }
    const x = b.exit;
    switch (x.k) {
      case 'goto':
        lines.push(`  -> B${x.to}`);
        break;
      case 'branch':
        lines.push(
          `  if ${printExpr(x.cond, ir.locals)} -> B${x.then} else B${x.else}${x.site ? ` [${x.site.construct}]` : ''}`,
        );
        break;
      case 'switch':
        lines.push(
          `  switch ${printExpr(x.value, ir.locals)}: ${x.cases.map((c) => `${c.value ? printExpr(c.value, ir.locals) : 'default'} -> B${c.to}`).join(', ')}`,
        );
        break;
      case 'return':
        lines.push(`  return${x.value ? ` ${printExpr(x.value, ir.locals)}` : ''}`);
        break;
      case 'end':
        lines.push('  end');
        break;
    }
  }
  return lines.join('\n');
}
