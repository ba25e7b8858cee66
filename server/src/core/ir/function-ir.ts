/**
 * The function IR: one function's body as a control-flow graph of basic blocks, statements in
 * order, each name resolved to the local it means (scopes and shadowing as C++ has them), and
 * every branch, loop, `switch`, `break`, `continue`, `goto` and early `return` an edge. The value
 * and uniformity analyses run over it; nothing in it depends on how the code was written beyond
 * what it means.
 *
 * Built from the syntax tree of the unit's view (expr-builder.ts turns expressions into IR). Where
 * the tree holds a macro use the grammar could not read as code (`CUDA_KERNEL_LOOP(i, n) { ... }`
 * parses as a nested function; `LAUNCH(k, 256);` as a call of an unknown function), the builder
 * expands it through the unit's macros and reads the expansion instead.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Expr, MacroOrigin, Range } from './expr';
import { BODY_PLACEHOLDER, codeChildren, ExprBuilder, type BuildHooks } from './expr-builder';
import type { BuildArm } from '../preprocess/build-choices';

export interface Local {
  id: number;
  name: string;
  /** The declared type as written (`const int`, `dim3`, `float*`), blanks normalised. */
  type: string;
  at: Range;
  param: boolean;
  /** `__shared__` (block-wide storage). */
  shared: boolean;
  /** `extern` (an `extern __shared__` array is the dynamic shared memory). */
  isExtern: boolean;
  /** The whole declaration it is in. */
  declAt: Range;
  isConst: boolean;
  isStatic: boolean;
  /** Array dimensions as written (`float s[32][33]`), or null. */
  dims: Expr[] | null;
  /** A reference (`T&`): what it aliases is not followed. */
  reference: boolean;
  /** Pointer levels of its declarator (`float* p`: 1; `float** q`: 2); absent for none. */
  pointers?: number;
}

export type Stmt = { k: 'decl'; local: number; init: Expr | null; at: Range } | { k: 'expr'; expr: Expr; at: Range };

export type BranchConstruct = 'if' | 'else-if' | 'switch' | 'loop';

/** A branch as written: what the analyses report it as. */
export interface BranchSite {
  construct: BranchConstruct;
  /** The whole statement. */
  at: Range;
  /** The condition (for a loop, its condition; for a switch, its value). */
  condAt: Range;
  /** The arms' statements (then, else; a loop's body; each case), for path lengths. */
  arms: Range[];
}

export type Exit =
  | { k: 'goto'; to: number }
  | { k: 'branch'; cond: Expr; then: number; else: number; site: BranchSite | null }
  | { k: 'switch'; value: Expr; cases: Array<{ value: Expr | null; to: number }>; site: BranchSite | null }
  | { k: 'return'; value: Expr | null; at: Range }
  | { k: 'end' };

export interface Block {
  id: number;
  stmts: Stmt[];
  exit: Exit;
  /** Loop headers: the loop's range (for widening and trip counts). */
  loop?: { at: Range; unroll: boolean };
}

export interface FunctionIR {
  /** Block 0 is the entry; `exit` the one block every return reaches. */
  blocks: Block[];
  exit: number;
  locals: Local[];
  /** Local ids of the parameters, in order. */
  params: number[];
  /** Lambdas written in the body (their ranges): built when an analysis follows a call of one. */
  lambdas: Range[];
  /** Type names the body declares (`using AgentT = Agent<128>;`, `typedef float T2;`): what each names. */
  typeAliases?: ReadonlyMap<string, string>;
  /** A lambda's own template parameters (`[&]<int N>() { ... }`), by name, in order. */
  templateParams?: readonly string[];
}

/** Statements nest at most this deep; deeper code (generated, or half typed) is cut there. */
const MAX_STATEMENT_DEPTH = 300;

interface LoopTargets {
  breakTo: number;
  continueTo: number | null;
}

export function buildFunctionIR(
  definition: SyntaxNode,
  hooks: BuildHooks,
  options: {
    lambdaParams?: SyntaxNode | null;
    /** The function is a macro's expansion parsed apart: where its pieces are in the file, and the macro. */
    expansion?: { map: (start: number, end: number) => Range; origin: MacroOrigin | null } | null;
  } = {},
): FunctionIR {
  const builder = new CfgBuilder(hooks);
  const build = () => builder.build(definition, options.lambdaParams ?? null);
  return options.expansion
    ? builder.expression.withMap(options.expansion.map, null, build, options.expansion.origin)
    : build();
}

class CfgBuilder {
  private readonly blocks: Block[] = [];
  private readonly locals: Local[] = [];
  private readonly scopes: Array<Map<string, number>> = [new Map()];
  private readonly targets: LoopTargets[] = [];
  private readonly labels = new Map<string, number>();
  private readonly gotos: Array<{ block: number; label: string }> = [];
  private readonly lambdas: Range[] = [];
  private readonly typeAliases = new Map<string, string>();
  private readonly expr: ExprBuilder;
  private current = 0;
  private exitBlock = -1;
  private depth = 0;
  private pendingUnroll = false;
  /** The `#if` groups whose arms are being lowered (lowerBuildChoice). */
  private readonly choosing = new Set<number>();
  /** While an arm after the first is lowered: the locals earlier arms declared in the group's scope, and that scope's depth. */
  private redeclared: { names: Map<string, number>; depth: number } | null = null;

  get expression(): ExprBuilder {
    return this.expr;
  }

  constructor(private readonly hooks: BuildHooks) {
    this.expr = new ExprBuilder(hooks, {
      resolve: (name) => this.resolve(name),
      lambda: (at) => this.lambdas.push(at),
      statements: (root, map) => this.lowerExpanded(root, map),
    });
  }

  build(definition: SyntaxNode, lambdaParams: SyntaxNode | null): FunctionIR {
    this.current = this.newBlock();
    this.exitBlock = this.newBlockDetached();
    const params: number[] = [];
    const declarator = lambdaParams ?? functionDeclaratorOf(definition)?.childForFieldName('parameters') ?? null;
    for (const p of declarator?.namedChildren ?? []) {
      if (!p || !/parameter_declaration/.test(p.type)) continue;
      const name = declaredName(p.childForFieldName('declarator'));
      if (!name) continue;
      params.push(this.declare(name.text, p, true));
    }
    const body = definition.type === 'compound_statement' ? definition : definition.childForFieldName('body');
    // Constructors: member initialisers run first (`: grid_(g), block_(b)`).
    for (const c of definition.namedChildren)
      if (c?.type === 'field_initializer_list')
        for (const init of c.namedChildren) if (init) this.emitExpr(this.memberInit(init), this.at(init));
    if (body) this.lowerStatement(body);
    this.finish({ k: 'goto', to: this.exitBlock });
    for (const g of this.gotos) {
      const to = this.labels.get(g.label);
      this.blocks[g.block].exit = { k: 'goto', to: to ?? this.exitBlock };
    }
    // The exit block goes last so that block ids grow along the body.
    const exit = this.blocks.length;
    this.blocks.push({ id: exit, stmts: [], exit: { k: 'end' } });
    for (const b of this.blocks) remapExit(b, this.exitBlock, exit);
    // A lambda with a template head (C++20) is a function template: its calls name the arguments.
    const templateHead = lambdaParams ? definition.childForFieldName('template_parameters') : null;
    const templateParams = (templateHead?.namedChildren ?? []).map(templateParamName);
    return {
      blocks: this.blocks,
      exit,
      locals: this.locals,
      params,
      lambdas: this.lambdas,
      ...(this.typeAliases.size ? { typeAliases: this.typeAliases } : {}),
      ...(templateParams.length ? { templateParams } : {}),
    };
  }

  // --- blocks ---

  private at(node: SyntaxNode): Range {
    return this.expr.at(node);
  }

  private newBlock(): number {
    const id = this.blocks.length;
    this.blocks.push({ id, stmts: [], exit: { k: 'end' } });
    return id;
  }

  /** A placeholder id for the exit (remapped at the end). */
  private newBlockDetached(): number {
    return -2;
  }

  private finish(exit: Exit): void {
    this.blocks[this.current].exit = exit;
  }

  private startNew(): number {
    this.current = this.newBlock();
    return this.current;
  }

  private emit(stmt: Stmt): void {
    this.blocks[this.current].stmts.push(stmt);
  }

  private emitExpr(e: Expr, at: Range): void {
    this.emit({ k: 'expr', expr: e, at });
  }

  // --- names ---

  private resolve(name: string): number | null {
    for (let k = this.scopes.length - 1; k >= 0; k--) {
      const id = this.scopes[k].get(name);
      if (id !== undefined) return id;
    }
    return null;
  }

  private declare(name: string, decl: SyntaxNode, param: boolean, declarator?: SyntaxNode | null): number {
    // The same declaration in another arm of an `#if` the build decides is the same variable after it.
    const again = this.redeclared?.depth === this.scopes.length ? this.redeclared.names.get(name) : undefined;
    if (again !== undefined) {
      this.scopes[this.scopes.length - 1].set(name, again);
      return again;
    }
    const id = this.locals.length;
    const specifiers = specifierText(decl, (n) => this.expr.text(n));
    const d = declarator ?? decl.childForFieldName('declarator');
    this.locals.push({
      id,
      name,
      type: typeText(decl, (n) => this.expr.text(n)),
      at: this.at(d ?? decl),
      param,
      shared: /\b__shared__\b/.test(specifiers),
      isExtern: /\bextern\b/.test(specifiers),
      declAt: this.at(decl),
      isConst: /\b(const|constexpr)\b/.test(specifiers),
      isStatic: /\bstatic\b/.test(specifiers),
      dims: d ? this.arrayDims(d) : null,
      reference: d ? hasReference(d) : false,
      ...(d && pointerLevels(d) > 0 ? { pointers: pointerLevels(d) } : {}),
    });
    this.scopes[this.scopes.length - 1].set(name, id);
    return id;
  }

  private arrayDims(d: SyntaxNode): Expr[] | null {
    const dims: Expr[] = [];
    let n: SyntaxNode | null = d;
    while (n && n.type !== 'identifier') {
      if (n.type === 'array_declarator') {
        const size = n.childForFieldName('size');
        dims.unshift(size ? this.expr.build(size) : { k: 'unknown', text: '', at: this.at(n) });
      }
      n = n.childForFieldName('declarator');
    }
    return dims.length ? dims : null;
  }

  private pushScope(): void {
    this.scopes.push(new Map());
  }

  private popScope(): void {
    this.scopes.pop();
  }

  // --- statements ---

  private lowerStatement(node: SyntaxNode | null): void {
    if (!node) return;
    if (++this.depth > MAX_STATEMENT_DEPTH) {
      this.depth--;
      return;
    }
    try {
      this.lower(node);
    } finally {
      this.depth--;
    }
  }

  private lower(node: SyntaxNode): void {
    switch (node.type) {
      case 'compound_statement':
        this.pushScope();
        this.lowerChildren(node.namedChildren.filter((c): c is SyntaxNode => !!c));
        this.popScope();
        return;
      case 'declaration':
        this.lowerDeclaration(node);
        return;
      case 'expression_statement': {
        const e = codeChildren(node)[0];
        if (!e) return;
        // Where a block macro's expansion takes the block written after the macro.
        if (e.type === 'identifier' && e.text === BODY_PLACEHOLDER && this.expr.body) {
          const original = this.expr.body;
          this.expr.withMap(null, null, () => this.lowerStatement(original));
          return;
        }
        const expanded = this.hooks.macros && !this.expr.inExpansion ? this.expandStatement(node, e) : false;
        if (!expanded) this.emitExpr(this.expr.build(e), this.at(node));
        return;
      }
      case 'if_statement':
        this.lowerIf(node, 'if');
        return;
      case 'for_statement':
        this.lowerFor(node);
        return;
      case 'for_range_loop':
        this.lowerRangeFor(node);
        return;
      case 'while_statement':
        this.lowerWhile(node);
        return;
      case 'do_statement':
        this.lowerDo(node);
        return;
      case 'switch_statement':
        this.lowerSwitch(node);
        return;
      case 'break_statement': {
        const t = this.targets[this.targets.length - 1];
        if (t) this.finish({ k: 'goto', to: t.breakTo });
        this.startNew();
        return;
      }
      case 'continue_statement': {
        const t = [...this.targets].reverse().find((x) => x.continueTo !== null);
        if (t) this.finish({ k: 'goto', to: t.continueTo! });
        this.startNew();
        return;
      }
      case 'return_statement':
      case 'co_return_statement': {
        const value = codeChildren(node)[0];
        this.finish({ k: 'return', value: value ? this.expr.build(value) : null, at: this.at(node) });
        this.startNew();
        return;
      }
      case 'throw_statement':
        this.finish({ k: 'goto', to: this.exitBlock });
        this.startNew();
        return;
      case 'goto_statement': {
        const label = node.childForFieldName('label')?.text;
        if (label) this.gotos.push({ block: this.current, label });
        this.startNew();
        return;
      }
      case 'labeled_statement': {
        const label = node.childForFieldName('label')?.text;
        const at = this.newBlock();
        this.finish({ k: 'goto', to: at });
        this.current = at;
        if (label) this.labels.set(label, at);
        for (const c of node.namedChildren) if (c && c.type !== 'statement_identifier') this.lowerStatement(c);
        return;
      }
      case 'attributed_statement':
        for (const c of node.namedChildren) if (c && c.type !== 'attribute_declaration') this.lowerStatement(c);
        return;
      case 'try_statement': {
        this.lowerStatement(node.childForFieldName('body'));
        return;
      }
      case 'preproc_call':
        if (/^\s*#\s*pragma\s+unroll\b/.test(this.expr.text(node))) this.pendingUnroll = true;
        return;
      case 'function_definition':
        // A macro use followed by a block, read by the grammar as a nested function: `LOOP(i, n) { ... }`.
        if (this.hooks.macros && !this.expr.inExpansion) this.expandBlockMacro(node);
        return;
      case 'alias_declaration': {
        const name = node.childForFieldName('name');
        const type = node.childForFieldName('type');
        if (name && type) this.typeAliases.set(this.expr.text(name), this.expr.text(type).replace(/\s+/g, ' ').trim());
        return;
      }
      case 'type_definition': {
        const type = node.childForFieldName('type');
        for (const d of node.childrenForFieldName('declarator'))
          if (d?.type === 'type_identifier' && type)
            this.typeAliases.set(this.expr.text(d), this.expr.text(type).replace(/\s+/g, ' ').trim());
        return;
      }
      case 'comment':
      case 'using_declaration':
      case 'namespace_alias_definition':
      case 'static_assert_declaration':
      case 'struct_specifier':
      case 'class_specifier':
      case 'enum_specifier':
      case 'union_specifier':
        return;
      case 'ERROR':
        if (this.hooks.macros && !this.expr.inExpansion && this.expandBrokenUse(node)) return;
        for (const c of node.namedChildren) if (c && isStatementLike(c)) this.lowerStatement(c);
        return;
      default:
        // Error recovery and constructs the IR does not model: what they hold that is code still counts.
        for (const c of node.namedChildren) if (c && isStatementLike(c)) this.lowerStatement(c);
    }
  }

  /**
   * `LAUNCH(float, n);`: a macro use with a type keyword among its arguments, which the grammar
   * reads as a broken function declaration (`float` cannot start an expression), read as what it
   * expands to, with the `;` after it.
   */
  private expandBrokenUse(node: SyntaxNode): boolean {
    const d = node.namedChildren[0];
    const name = d?.type === 'function_declarator' ? d.childForFieldName('declarator') : null;
    if (!name || name.type !== 'identifier' || !d || d.endIndex !== node.endIndex) return false;
    if (!this.hooks.macros!.isMacro(this.expr.text(name), this.expr.fileOffset(name))) return false;
    const next = node.nextSibling;
    const end = next && this.expr.text(next).trim() === ';' ? next.endIndex : node.endIndex;
    return this.lowerExpansion(node.startIndex, end);
  }

  private lowerDeclaration(node: SyntaxNode): void {
    for (const d of node.childrenForFieldName('declarator')) {
      if (!d) continue;
      if (d.type === 'function_declarator') {
        // `dim3 block(kTile, kTile);` reads as a function declaration when the arguments are plain
        // names (the grammar cannot tell a type from a value); in a body it is an object made from them.
        const made = this.constructedFromNames(node, d);
        if (made) {
          const id = this.declare(made.name, node, false, d);
          this.emit({ k: 'decl', local: id, init: made.init, at: this.at(d) });
        }
        continue;
      }
      const name = declaredName(d);
      if (!name) continue;
      let init: Expr | null = null;
      if (d.type === 'init_declarator') {
        const value = d.childForFieldName('value');
        if (value?.type === 'argument_list')
          // `dim3 b(256, 1)`: a constructor call.
          init = {
            k: 'init',
            type: typeText(node, (n) => this.expr.text(n)),
            items: codeChildren(value).map((c) => this.expr.build(c)),
            designators: null,
            at: this.at(value),
          };
        else if (value?.type === 'initializer_list')
          init = this.expr.build(
            value,
            typeText(node, (n) => this.expr.text(n)),
          );
        else if (value) init = this.expr.build(value);
      }
      const id = this.declare(name.text, node, false, d);
      this.emit({ k: 'decl', local: id, init, at: this.at(d) });
    }
  }

  /** A declarator `x(a, b)` whose parameters are names only, read as `x` made from those values. */
  private constructedFromNames(decl: SyntaxNode, d: SyntaxNode): { name: string; init: Expr } | null {
    const nameNode = d.childForFieldName('declarator');
    const params = d.childForFieldName('parameters');
    if (nameNode?.type !== 'identifier' || !params) return null;
    const items: Expr[] = [];
    for (const p of params.namedChildren) {
      if (!p) continue;
      const type = p.childForFieldName('type');
      if (p.type !== 'parameter_declaration' || p.childForFieldName('declarator') || !type) return null;
      if (!/^(type_identifier|qualified_identifier)$/.test(type.type)) return null;
      items.push(this.expr.build(type));
    }
    if (items.length === 0) return null;
    return {
      name: this.expr.text(nameNode),
      init: {
        k: 'init',
        type: typeText(decl, (n) => this.expr.text(n)),
        items,
        designators: null,
        at: this.at(params),
      },
    };
  }

  private condition(node: SyntaxNode | null): Expr {
    if (!node) return { k: 'num', value: 1, integer: true, text: '1', at: [0, 0] };
    if (node.type === 'condition_clause') {
      // `if (init; cond)` and `if (T x = e)`.
      let value: Expr | null = null;
      for (const c of node.namedChildren) {
        if (!c) continue;
        if (c.type === 'init_statement') for (const s of c.namedChildren) this.lowerStatement(s);
        else if (c.type === 'declaration') {
          this.lowerDeclaration(c);
          const name = declaredName(c.childForFieldName('declarator'));
          const id = name ? this.resolve(name.text) : null;
          value = { k: 'name', name: name?.text ?? '', local: id, templateArgs: null, at: this.at(c) };
        } else value = this.expr.build(c);
      }
      return value ?? { k: 'unknown', text: '', at: this.at(node) };
    }
    if (node.type === 'parenthesized_expression' && codeChildren(node)[0])
      return this.expr.build(codeChildren(node)[0]);
    return this.expr.build(node);
  }

  private lowerIf(node: SyntaxNode, construct: 'if' | 'else-if'): void {
    this.pushScope();
    const condNode = node.childForFieldName('condition');
    const cond = this.condition(condNode);
    const consequence = node.childForFieldName('consequence');
    const alternative = node.childForFieldName('alternative');
    const elseBody = alternative?.type === 'else_clause' ? codeChildren(alternative)[0] : alternative;
    const head = this.current;
    const thenBlock = this.newBlock();
    const join = this.newBlockDetached();
    const arms = [consequence, elseBody].filter((x): x is SyntaxNode => !!x).map(range);
    const site: BranchSite = { construct, at: this.at(node), condAt: this.at(condNode ?? node), arms };
    this.current = thenBlock;
    this.lowerStatement(consequence);
    const thenEnd = this.current;
    let elseStart: number;
    let elseEnd: number | null = null;
    if (elseBody) {
      elseStart = this.newBlock();
      this.current = elseStart;
      if (elseBody.type === 'if_statement') this.lowerIf(elseBody, 'else-if');
      else this.lowerStatement(elseBody);
      elseEnd = this.current;
    } else elseStart = -1;
    const after = this.newBlock();
    this.blocks[head].exit = { k: 'branch', cond, then: thenBlock, else: elseStart >= 0 ? elseStart : after, site };
    this.blocks[thenEnd].exit = keepOr(this.blocks[thenEnd].exit, { k: 'goto', to: after });
    if (elseEnd !== null) this.blocks[elseEnd].exit = keepOr(this.blocks[elseEnd].exit, { k: 'goto', to: after });
    void join;
    this.current = after;
    this.popScope();
  }

  /**
   * A block's statements in order; a run of them inside the arms of an `#if` group the unit cannot
   * decide (the text holds every arm, see BuildHooks.arms) is a choice the build makes: each arm a
   * path, and none of them when the group has no `#else`.
   */
  private lowerChildren(children: readonly SyntaxNode[]): void {
    for (let k = 0; k < children.length;) {
      const arm = this.outermostArm(children[k]);
      if (!arm) {
        this.lowerStatement(children[k++]);
        continue;
      }
      const group = (this.hooks.arms ?? []).filter((a) => a.group === arm.group);
      const paths: SyntaxNode[][] = group.map(() => []);
      for (; k < children.length; k++) {
        const [start, end] = this.at(children[k]);
        const i = group.findIndex((a) => a.start <= start && end <= a.end);
        if (i < 0) break;
        paths[i].push(children[k]);
      }
      this.lowerBuildChoice(arm.group, arm.exhaustive ? paths : [...paths, []]);
    }
  }

  /** The arm of the outermost group not being lowered already that holds all of `node`, if any. */
  private outermostArm(node: SyntaxNode): BuildArm | null {
    if (!this.hooks.arms?.length) return null;
    const [start, end] = this.at(node);
    let best: BuildArm | null = null;
    for (const a of this.hooks.arms)
      if (
        !this.choosing.has(a.group) &&
        a.start <= start &&
        end <= a.end &&
        (!best || a.end - a.start > best.end - best.start)
      )
        best = a;
    return best;
  }

  private lowerBuildChoice(group: number, paths: SyntaxNode[][]): void {
    const head = this.current;
    const depth = this.scopes.length;
    const before = new Map(this.scopes[depth - 1]);
    const declared = new Map<string, number>();
    const outer = this.redeclared;
    const starts: number[] = [];
    const ends: number[] = [];
    this.choosing.add(group);
    for (const stmts of paths) {
      this.current = this.newBlock();
      starts.push(this.current);
      this.scopes[depth - 1] = new Map(before);
      // A group inside an arm: what the outer group's earlier arms declared is the same variable too.
      this.redeclared = { names: outer?.depth === depth ? new Map([...outer.names, ...declared]) : declared, depth };
      this.lowerChildren(stmts);
      ends.push(this.current);
      for (const [name, id] of this.scopes[depth - 1]) if (before.get(name) !== id) declared.set(name, id);
    }
    this.choosing.delete(group);
    this.redeclared = outer;
    this.scopes[depth - 1] = new Map([...before, ...declared]);
    const after = this.newBlock();
    const at = this.hooks.arms?.find((a) => a.group === group);
    const value: Expr = { k: 'unknown', text: 'the build', at: at ? [at.start, at.end] : [0, 0] };
    this.blocks[head].exit = { k: 'switch', value, cases: starts.map((to) => ({ value: null, to })), site: null };
    for (const end of ends) this.blocks[end].exit = keepOr(this.blocks[end].exit, { k: 'goto', to: after });
    this.current = after;
  }

  private loopHeader(at: Range): number {
    const header = this.newBlock();
    this.finish({ k: 'goto', to: header });
    this.blocks[header].loop = { at, unroll: this.pendingUnroll };
    this.pendingUnroll = false;
    return header;
  }

  private lowerFor(node: SyntaxNode): void {
    this.pushScope();
    const init = node.childForFieldName('initializer');
    if (init) {
      if (init.type === 'declaration') this.lowerDeclaration(init);
      else this.emitExpr(this.expr.build(init), this.at(init));
    }
    const condNode = node.childForFieldName('condition');
    const update = node.childForFieldName('update');
    const body = node.childForFieldName('body');
    const header = this.loopHeader(this.at(node));
    this.current = header;
    const cond = condNode ? this.condition(condNode) : null;
    const condEnd = this.current;
    const bodyStart = this.newBlock();
    const after = this.newBlock();
    const latch = this.newBlock();
    const site: BranchSite = {
      construct: 'loop',
      at: this.at(node),
      condAt: this.at(condNode ?? node),
      arms: body ? [this.at(body)] : [],
    };
    this.blocks[condEnd].exit = cond
      ? { k: 'branch', cond, then: bodyStart, else: after, site }
      : { k: 'goto', to: bodyStart };
    this.targets.push({ breakTo: after, continueTo: latch });
    this.current = bodyStart;
    this.lowerStatement(body);
    this.targets.pop();
    this.blocks[this.current].exit = keepOr(this.blocks[this.current].exit, { k: 'goto', to: latch });
    this.current = latch;
    if (update) this.emitExpr(this.expr.build(update), this.at(update));
    this.finish({ k: 'goto', to: header });
    this.current = after;
    this.popScope();
  }

  private lowerRangeFor(node: SyntaxNode): void {
    this.pushScope();
    const right = node.childForFieldName('right');
    if (right) this.emitExpr(this.expr.build(right), this.at(right));
    const header = this.loopHeader(this.at(node));
    this.current = header;
    const bodyStart = this.newBlock();
    const after = this.newBlock();
    const site: BranchSite = { construct: 'loop', at: this.at(node), condAt: this.at(right ?? node), arms: [] };
    const cond: Expr = { k: 'unknown', text: 'range', at: this.at(right ?? node) };
    this.blocks[header].exit = { k: 'branch', cond, then: bodyStart, else: after, site };
    this.current = bodyStart;
    const declarator = node.childForFieldName('declarator');
    const name = declaredName(declarator);
    if (name) {
      const id = this.declare(name.text, node, false, declarator);
      this.emit({
        k: 'decl',
        local: id,
        init: { k: 'unknown', text: 'element', at: this.at(declarator!) },
        at: this.at(declarator!),
      });
    }
    this.targets.push({ breakTo: after, continueTo: header });
    this.lowerStatement(node.childForFieldName('body'));
    this.targets.pop();
    this.blocks[this.current].exit = keepOr(this.blocks[this.current].exit, { k: 'goto', to: header });
    this.current = after;
    this.popScope();
  }

  private lowerWhile(node: SyntaxNode): void {
    this.pushScope();
    const header = this.loopHeader(this.at(node));
    this.current = header;
    const condNode = node.childForFieldName('condition');
    const cond = this.condition(condNode);
    const condEnd = this.current;
    const body = node.childForFieldName('body');
    const bodyStart = this.newBlock();
    const after = this.newBlock();
    const site: BranchSite = {
      construct: 'loop',
      at: this.at(node),
      condAt: this.at(condNode ?? node),
      arms: body ? [this.at(body)] : [],
    };
    this.blocks[condEnd].exit = { k: 'branch', cond, then: bodyStart, else: after, site };
    this.targets.push({ breakTo: after, continueTo: header });
    this.current = bodyStart;
    this.lowerStatement(body);
    this.targets.pop();
    this.blocks[this.current].exit = keepOr(this.blocks[this.current].exit, { k: 'goto', to: header });
    this.current = after;
    this.popScope();
  }

  private lowerDo(node: SyntaxNode): void {
    const header = this.loopHeader(this.at(node));
    this.current = header;
    const latch = this.newBlock();
    const after = this.newBlock();
    const body = node.childForFieldName('body');
    this.targets.push({ breakTo: after, continueTo: latch });
    this.lowerStatement(body);
    this.targets.pop();
    this.blocks[this.current].exit = keepOr(this.blocks[this.current].exit, { k: 'goto', to: latch });
    this.current = latch;
    const condNode = node.childForFieldName('condition');
    const cond = this.condition(condNode);
    const site: BranchSite = {
      construct: 'loop',
      at: this.at(node),
      condAt: this.at(condNode ?? node),
      arms: body ? [this.at(body)] : [],
    };
    this.finish({ k: 'branch', cond, then: header, else: after, site });
    this.current = after;
  }

  private lowerSwitch(node: SyntaxNode): void {
    this.pushScope();
    const condNode = node.childForFieldName('condition');
    const value = this.condition(condNode);
    const head = this.current;
    const after = this.newBlock();
    const body = node.childForFieldName('body');
    const cases: Array<{ value: Expr | null; to: number }> = [];
    const arms: Range[] = [];
    this.targets.push({ breakTo: after, continueTo: null });
    let previousEnd: number | null = null;
    this.current = this.newBlock(); // statements before the first case: unreachable
    for (const { node: c, snippet } of this.switchItems(body)) {
      const lowerItem = () => {
        if (c.type !== 'case_statement') {
          this.lowerStatement(c);
          return;
        }
        const start = this.newBlock();
        // Falling through from the case before.
        if (previousEnd !== null)
          this.blocks[previousEnd].exit = keepOr(this.blocks[previousEnd].exit, { k: 'goto', to: start });
        const valueNode = c.childForFieldName('value');
        cases.push({ value: valueNode ? this.expr.build(valueNode) : null, to: start });
        arms.push(this.at(c));
        this.current = start;
        for (const s of c.namedChildren) if (s && s !== valueNode) this.lowerStatement(s);
        previousEnd = this.current;
      };
      if (snippet) this.expr.withMap(snippet.map, snippet.body, lowerItem, snippet.origin ?? this.expr.origin);
      else lowerItem();
    }
    if (previousEnd !== null)
      this.blocks[previousEnd].exit = keepOr(this.blocks[previousEnd].exit, { k: 'goto', to: after });
    this.targets.pop();
    if (!cases.some((c) => c.value === null)) cases.push({ value: null, to: after });
    const site: BranchSite = { construct: 'switch', at: this.at(node), condAt: this.at(condNode ?? node), arms };
    this.blocks[head].exit = { k: 'switch', value, cases, site };
    this.current = after;
    this.popScope();
  }

  /**
   * A switch's statements, with macro uses at statement level read as what they expand to: a
   * `CASE_K(1, 128)` that writes `case 1: ...; break;` gives the switch its case.
   */
  private switchItems(body: SyntaxNode | null): Array<{ node: SyntaxNode; snippet: ExpandedSnippetLike | null }> {
    const items: Array<{ node: SyntaxNode; snippet: ExpandedSnippetLike | null }> = [];
    for (const c of body?.namedChildren ?? []) {
      if (!c) continue;
      const e = c.type === 'expression_statement' ? codeChildren(c)[0] : null;
      const head = e ? macroHead(e) : null;
      if (
        e &&
        head &&
        this.hooks.macros &&
        !this.expr.inExpansion &&
        this.hooks.macros.isMacro(this.expr.text(head), this.expr.fileOffset(head))
      ) {
        const base = this.hooks.base ?? 0;
        const expansions = this.hooks.macros.expand(c.startIndex + base, c.endIndex + base, 'statements');
        if (expansions?.length === 1) {
          for (const s of expansions[0].statements) items.push({ node: s, snippet: expansions[0] });
          continue;
        }
      }
      items.push({ node: c, snippet: null });
    }
    return items;
  }

  /** `: member_(value)` of a constructor, as an assignment to the member. */
  private memberInit(init: SyntaxNode): Expr {
    const name = init.namedChildren[0];
    const args = init.namedChildren[1];
    const at = this.at(init);
    const target: Expr = {
      k: 'field',
      object: { k: 'this', at },
      field: name?.text ?? '',
      arrow: true,
      at: this.at(name ?? init),
    };
    const items = codeChildren(args).map((c) => this.expr.build(c));
    const value: Expr = items.length === 1 ? items[0] : { k: 'init', type: null, items, designators: null, at };
    return { k: 'assign', op: '=', target, value, at };
  }

  // --- macros the grammar could not read as code ---

  /** `LAUNCH(k, 256);`, `CUDA_CHECK(...)`: a statement whose expression is a macro use, read as its expansion. */
  private expandStatement(statement: SyntaxNode, e: SyntaxNode): boolean {
    const head = macroHead(e);
    if (!head || !this.hooks.macros!.isMacro(this.expr.text(head), this.expr.fileOffset(head))) return false;
    return this.lowerExpansion(statement.startIndex, statement.endIndex);
  }

  /** The statements the macro use at [start, end) of this text expands to, lowered; false where it expands to none. */
  private lowerExpansion(start: number, end: number): boolean {
    const base = this.hooks.base ?? 0;
    const expansions = this.hooks.macros!.expand(start + base, end + base, 'statements');
    if (!expansions || expansions.length === 0) return false;
    // Several configurations: each is read; their effects join (the analyses see every path).
    if (expansions.length === 1) this.lowerSnippet(expansions[0]);
    else this.lowerAlternatives(expansions);
    return true;
  }

  /** `LOOP(i, n) { body }` read by the grammar as a nested function: the macro's expansion with the block as its body. */
  private expandBlockMacro(node: SyntaxNode): void {
    const declarator = node.childForFieldName('declarator');
    const body = node.childForFieldName('body');
    const name = declarator?.type === 'function_declarator' ? declarator.childForFieldName('declarator') : null;
    if (!name || !body || !this.hooks.macros!.isMacro(this.expr.text(name), this.expr.fileOffset(name))) {
      if (body) this.lowerStatement(body);
      return;
    }
    const base = this.hooks.base ?? 0;
    const expansions = this.hooks.macros!.expand(node.startIndex + base, body.startIndex + base, 'statements', body);
    if (!expansions || expansions.length === 0) {
      this.lowerStatement(body);
      return;
    }
    if (expansions.length === 1) this.lowerSnippet(expansions[0]);
    else this.lowerAlternatives(expansions);
  }

  private lowerSnippet(snippet: ExpandedSnippetLike): void {
    this.expr.withMap(
      snippet.map,
      snippet.body,
      () => {
        for (const s of snippet.statements) this.lowerStatement(s);
      },
      snippet.origin ?? this.expr.origin,
    );
  }

  private lowerAlternatives(snippets: readonly ExpandedSnippetLike[]): void {
    const head = this.current;
    const after = this.newBlock();
    const starts: number[] = [];
    for (const s of snippets) {
      const start = this.newBlock();
      starts.push(start);
      this.current = start;
      this.lowerSnippet(s);
      this.blocks[this.current].exit = keepOr(this.blocks[this.current].exit, { k: 'goto', to: after });
    }
    // Which configuration holds is not a run-time branch: a switch on an unknown value reaches each.
    const at: Range = [0, 0];
    this.blocks[head].exit = {
      k: 'switch',
      value: { k: 'unknown', text: 'configuration', at },
      cases: starts.map((to) => ({ value: null, to })),
      site: null,
    };
    this.current = after;
  }

  /** Statements of an expanded macro (parsed apart), lowered here with their positions mapped to the use. */
  private lowerExpanded(root: SyntaxNode, map: (start: number, end: number) => Range): void {
    this.lowerSnippet({ statements: root.namedChildren.filter((c): c is SyntaxNode => !!c), map, body: null });
  }
}

/** What the hooks give for a macro expanded at statement level. */
export interface ExpandedSnippetLike {
  statements: SyntaxNode[];
  map: (start: number, end: number) => Range;
  /** The macro the use names. */
  origin?: MacroOrigin | null;
  /** The original block a block macro's expansion takes as its body (`LOOP(i, n) { ... }`). */
  body: SyntaxNode | null;
}

function keepOr(exit: Exit, fallback: Exit): Exit {
  // A block that ended with a return or a jump keeps it; one that fell off the end goes on.
  return exit.k === 'end' ? fallback : exit;
}

function remapExit(b: Block, from: number, to: number): void {
  const e = b.exit;
  const m = (x: number) => (x === from ? to : x);
  if (e.k === 'goto') e.to = m(e.to);
  else if (e.k === 'branch') {
    e.then = m(e.then);
    e.else = m(e.else);
  } else if (e.k === 'switch') for (const c of e.cases) c.to = m(c.to);
  else if (e.k === 'return') b.exit = e;
}

export function range(node: SyntaxNode): Range {
  return [node.startIndex, node.endIndex];
}

const STATEMENT_TYPES =
  /_statement$|^declaration$|^compound_statement$|^for_range_loop$|^function_definition$|^ERROR$|^preproc_/;

function isStatementLike(node: SyntaxNode): boolean {
  return STATEMENT_TYPES.test(node.type);
}

/** The identifier a declarator declares (through pointers, references, arrays, init). */
/** The name a template parameter declares (`int N`, `typename T`, `class C = int`); '' for a pack or none. */
function templateParamName(t: SyntaxNode | null): string {
  if (!t) return '';
  const named = t.childForFieldName('declarator') ?? t.childForFieldName('name');
  if (named) return declaredName(named)?.text ?? '';
  return t.namedChildren.find((c) => c?.type === 'type_identifier')?.text ?? '';
}

export function declaredName(d: SyntaxNode | null): SyntaxNode | null {
  let n: SyntaxNode | null = d;
  for (let k = 0; n && k < 32; k++) {
    if (n.type === 'identifier' || n.type === 'field_identifier') return n;
    if (n.type === 'qualified_identifier') return n.childForFieldName('name');
    const inner = n.childForFieldName('declarator');
    if (inner) n = inner;
    else n = n.namedChildren.find((c) => c?.type === 'identifier' || /declarator$/.test(c?.type ?? '')) ?? null;
  }
  return null;
}

function pointerLevels(d: SyntaxNode): number {
  let levels = 0;
  for (let n: SyntaxNode | null = d, k = 0; n && k < 32; n = n.childForFieldName('declarator'), k++)
    if (n.type === 'pointer_declarator') levels++;
  return levels;
}

function hasReference(d: SyntaxNode): boolean {
  for (let n: SyntaxNode | null = d, k = 0; n && k < 32; n = n.childForFieldName('declarator'), k++)
    if (n.type === 'reference_declarator') return true;
  return false;
}

export function functionDeclaratorOf(definition: SyntaxNode): SyntaxNode | null {
  let n = definition.childForFieldName('declarator');
  for (let k = 0; n && k < 16; k++) {
    if (n.type === 'function_declarator') return n;
    n = n.childForFieldName('declarator');
  }
  return null;
}

/** The declaration's text before its first declarator (specifiers, qualifiers, type). */
function specifierText(decl: SyntaxNode, textOf: (n: SyntaxNode) => string): string {
  const d = decl.childForFieldName('declarator');
  const whole = textOf(decl);
  return d ? whole.slice(0, d.startIndex - decl.startIndex) : whole;
}

/** The declared type as written, without storage classes and CUDA memory spaces. */
function typeText(decl: SyntaxNode, textOf: (n: SyntaxNode) => string): string {
  const t = decl.childForFieldName('type');
  const qualifiers = decl.namedChildren
    .filter((c) => c?.type === 'type_qualifier' && /const/.test(textOf(c)))
    .map((c) => textOf(c!));
  const base = t ? textOf(t) : '';
  return [...qualifiers, base].join(' ').replace(/\s+/g, ' ').trim();
}

/** The name a macro use starts with, when the expression is one: `M`, `M(args)`. */
function macroHead(e: SyntaxNode): SyntaxNode | null {
  if (e.type === 'identifier') return e;
  if (e.type === 'call_expression') {
    const f = e.childForFieldName('function');
    return f?.type === 'identifier' ? f : null;
  }
  return null;
}
