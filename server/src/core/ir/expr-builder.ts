/**
 * Expressions of the syntax tree as IR (expr.ts). A name that is a macro in the unit at that point
 * is read as its expansion (parsed apart, its positions mapped back to the use); one the unit knows
 * several definitions of becomes `alternatives`, one per definition.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { MAX_DEPTH, type Expr, type MacroOrigin, type Range, type TemplateArg } from './expr';
import type { ExpandedSnippetLike } from './function-ir';
import type { BuildArm } from '../preprocess/build-choices';

/** A macro use expanded and parsed: the expression's node and where its pieces come from in the file. */
export interface ExpandedExpression {
  node: SyntaxNode;
  map: (start: number, end: number) => Range;
  /** The macro the use names, and where this configuration's definition is. */
  origin: MacroOrigin | null;
}

export interface MacroHooks {
  /** `name` at `offset` of the file is a macro with a definition the unit knows (one, or several). */
  isMacro(name: string, offset: number): boolean;
  /** The use in file[start, end) expanded and parsed as an expression, once per definition it may have; null when it cannot be. */
  expandExpression(start: number, end: number): ExpandedExpression[] | null;
  /** The use in file[start, end) expanded and parsed as statements (with `body` as the body of a block macro). */
  expand(start: number, end: number, kind: 'statements', body?: SyntaxNode): ExpandedSnippetLike[] | null;
}

export interface BuildHooks {
  /** The text the tree was parsed from (the unit's view of the file, or a piece of it). */
  text: string;
  /** Where that text's offset 0 is in the file (a function parsed apart from its file), default 0. */
  base?: number;
  /** The unit's macros; null reads the tree as it is. */
  macros: MacroHooks | null;
  /**
   * The arms of `#if` groups the unit cannot decide, where the text holds every arm (see
   * function-ir.ts, lowerBuildChoice): each a choice the build makes, in file offsets.
   */
  arms?: readonly BuildArm[];
}

export interface ScopeHooks {
  resolve(name: string): number | null;
  lambda(at: Range): void;
  statements(root: SyntaxNode, map: (start: number, end: number) => Range): void;
}

/** A node's named children that are code (comments, which may sit anywhere, are not). */
export function codeChildren(node: SyntaxNode | null | undefined): SyntaxNode[] {
  if (!node) return [];
  return node.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== 'comment');
}

/** Identifier text that marks where a block macro's body goes in its expansion. */
export const BODY_PLACEHOLDER = '__occupancy_lens_body__';

const CASTS: ReadonlySet<string> = new Set(['static_cast', 'reinterpret_cast', 'const_cast', 'dynamic_cast']);

export class ExprBuilder {
  private map: ((start: number, end: number) => Range) | null = null;
  /** Inside a macro's expansion: names there are already expanded. */
  private expanded = 0;
  private depth = 0;
  body: SyntaxNode | null = null;

  constructor(
    private readonly hooks: BuildHooks,
    private readonly scope: ScopeHooks,
  ) {}

  /** Runs `f` reading nodes of an expansion (positions through `map`), with `body` as a block macro's body. */
  withMap<T>(
    map: ((start: number, end: number) => Range) | null,
    body: SyntaxNode | null,
    f: () => T,
    origin: MacroOrigin | null = this.origin,
  ): T {
    const saved = { map: this.map, body: this.body, expanded: this.expanded, origin: this.origin };
    this.map = map;
    this.body = body;
    this.expanded = map ? this.expanded + 1 : 0;
    this.origin = map ? origin : null;
    try {
      return f();
    } finally {
      this.map = saved.map;
      this.body = saved.body;
      this.expanded = saved.expanded;
      this.origin = saved.origin;
    }
  }

  private nextId = 0;

  /** The macro whose expansion is being read (a launch written in it says so), or null. */
  origin: MacroOrigin | null = null;

  /** Reading the nodes of a macro's expansion. */
  get inExpansion(): boolean {
    return this.expanded > 0;
  }

  at(node: SyntaxNode): Range {
    if (this.map) return this.map(node.startIndex, node.endIndex);
    const base = this.hooks.base ?? 0;
    return [node.startIndex + base, node.endIndex + base];
  }

  /** Where a node of the main tree starts in the file. */
  fileOffset(node: SyntaxNode): number {
    return node.startIndex + (this.hooks.base ?? 0);
  }

  /** A node's text, in the main tree or in an expansion. */
  text(node: SyntaxNode): string {
    return this.map ? node.text : this.hooks.text.slice(node.startIndex, node.endIndex);
  }

  /** The expression `node` is; `listType` names the type a bare initializer list initialises (`dim3 b{...}`). */
  build(node: SyntaxNode, listType?: string): Expr {
    if (++this.depth > MAX_DEPTH) {
      this.depth--;
      return { k: 'unknown', text: 'too deep', at: this.at(node) };
    }
    try {
      return this.read(node, listType);
    } finally {
      this.depth--;
    }
  }

  private read(node: SyntaxNode, listType?: string): Expr {
    const at = this.at(node);
    const child = (field: string) => node.childForFieldName(field);
    switch (node.type) {
      case 'parenthesized_expression': {
        const inner = codeChildren(node)[0];
        return inner ? this.build(inner) : { k: 'unknown', text: '()', at };
      }
      case 'number_literal':
        return numberLiteral(this.text(node), at);
      case 'char_literal':
        return charLiteral(this.text(node), at);
      case 'true':
        return { k: 'num', value: 1, integer: true, text: 'true', at };
      case 'false':
      case 'null':
      case 'nullptr':
        return { k: 'num', value: 0, integer: true, text: this.text(node), at };
      case 'string_literal':
      case 'raw_string_literal':
      case 'concatenated_string':
        return { k: 'str', at };
      case 'this':
        return { k: 'this', at };
      case 'identifier':
      case 'field_identifier':
      case 'namespace_identifier':
      case 'type_identifier':
      case 'primitive_type':
        return this.name(node, this.text(node), null, at);
      case 'qualified_identifier': {
        // `ns::k<float, 4>`: the name without its last component's template arguments, which are read apart.
        let last: SyntaxNode = node;
        for (let n: SyntaxNode | null = node; n?.type === 'qualified_identifier'; n = n.childForFieldName('name'))
          last = n;
        const tail = last.childForFieldName('name');
        if (tail?.type === 'template_function') {
          const inner = tail.childForFieldName('name');
          const prefix = this.text(node).slice(0, tail.startIndex - node.startIndex);
          return {
            k: 'name',
            name: (prefix + (inner ? this.text(inner) : '')).replace(/\s+/g, ''),
            local: null,
            templateArgs: this.templateArgs(tail.childForFieldName('arguments')),
            at,
          };
        }
        return this.name(node, this.text(node).replace(/\s+/g, ''), null, at);
      }
      case 'template_function': {
        const name = child('name');
        return {
          k: 'name',
          name: name ? this.text(name).replace(/\s+/g, '') : '',
          local: null,
          templateArgs: this.templateArgs(child('arguments')),
          at,
        };
      }
      case 'field_expression': {
        const object = child('argument');
        const written = child('field');
        const op = node.children.find((c) => c && (c.type === '.' || c.type === '->'));
        // `o.template m<A>` (a dependent name) or `o.m<A>`: the member's name, its template arguments apart.
        const inner = written?.type === 'dependent_name' ? written.namedChildren[0] : written;
        const method = inner?.type === 'template_method' ? inner : null;
        const name = method ? method.childForFieldName('name') : written;
        const templateArgs = method ? this.templateArgs(method.childForFieldName('arguments')) : null;
        return {
          k: 'field',
          object: object ? this.build(object) : { k: 'unknown', text: '', at },
          field: name ? this.text(name).replace(/\s+/g, '') : '',
          arrow: op?.type === '->',
          at,
          ...(templateArgs ? { templateArgs } : {}),
        };
      }
      case 'subscript_expression': {
        const object = child('argument');
        const indices = child('indices');
        const index = codeChildren(indices)[0] ?? child('index');
        return {
          k: 'index',
          object: object ? this.build(object) : { k: 'unknown', text: '', at },
          index: index ? this.build(index) : { k: 'unknown', text: '', at },
          at,
        };
      }
      case 'call_expression':
        return this.call(node, at);
      case 'binary_expression': {
        const op = child('operator');
        const left = child('left');
        const right = child('right');
        return {
          k: 'binary',
          op: op ? op.type : '?',
          left: left ? this.build(left) : unknown(at),
          right: right ? this.build(right) : unknown(at),
          at,
        };
      }
      case 'unary_expression':
      case 'pointer_expression': {
        const op = child('operator');
        const arg = child('argument');
        return { k: 'unary', op: op ? op.type : '?', arg: arg ? this.build(arg) : unknown(at), at };
      }
      case 'update_expression': {
        const op = child('operator');
        const arg = child('argument');
        const prefix = !!op && !!arg && op.startIndex < arg.startIndex;
        return {
          k: 'update',
          op: op?.type === '--' ? '--' : '++',
          prefix,
          arg: arg ? this.build(arg) : unknown(at),
          at,
        };
      }
      case 'assignment_expression': {
        const op = child('operator');
        const left = child('left');
        const right = child('right');
        return {
          k: 'assign',
          op: op ? op.type : '=',
          target: left ? this.build(left) : unknown(at),
          value: right ? this.build(right) : unknown(at),
          at,
        };
      }
      case 'conditional_expression': {
        const c = child('condition');
        const a = child('consequence');
        const b = child('alternative');
        return {
          k: 'cond',
          cond: c ? this.build(c) : unknown(at),
          then: a ? this.build(a) : unknown(at),
          else: b ? this.build(b) : unknown(at),
          at,
        };
      }
      case 'cast_expression': {
        const type = child('type');
        const value = child('value');
        return {
          k: 'cast',
          type: type ? normal(this.text(type)) : '',
          arg: value ? this.build(value) : unknown(at),
          at,
        };
      }
      case 'sizeof_expression': {
        const type = child('type');
        const value = child('value');
        if (type) return { k: 'sizeof', type: normal(this.text(type)), arg: null, at };
        // `sizeof(T)` parses as the size of a parenthesised name: a type or a variable, the evaluator tells.
        return { k: 'sizeof', type: null, arg: value ? this.build(value) : null, at };
      }
      case 'compound_literal_expression': {
        const type = child('type');
        const value = child('value');
        const list = value ? this.build(value, type ? normal(this.text(type)) : undefined) : null;
        return list && list.k === 'init'
          ? list
          : {
              k: 'init',
              type: type ? normal(this.text(type)) : null,
              items: list ? [list] : [],
              designators: null,
              at,
            };
      }
      case 'initializer_list': {
        const items: Expr[] = [];
        const designators: Array<string | null> = [];
        let designated = false;
        for (const c of codeChildren(node)) {
          if (c.type === 'initializer_pair') {
            const d = c.childForFieldName('designator');
            const v = c.childForFieldName('value');
            designated = true;
            designators.push(d ? this.text(d).replace(/^\./, '').trim() : null);
            items.push(v ? this.build(v) : unknown(at));
          } else {
            designators.push(null);
            items.push(this.build(c));
          }
        }
        return { k: 'init', type: listType ?? null, items, designators: designated ? designators : null, at };
      }
      case 'comma_expression': {
        const items: Expr[] = [];
        for (let n: SyntaxNode | null = node; n;) {
          if (n.type !== 'comma_expression') {
            items.push(this.build(n));
            break;
          }
          const l = n.childForFieldName('left');
          if (l) items.push(this.build(l));
          n = n.childForFieldName('right');
        }
        return { k: 'comma', items, at };
      }
      case 'lambda_expression':
        this.scope.lambda(at);
        return { k: 'lambda', at };
      case 'gnu_asm_expression':
        return this.asm(node, at);
      case 'initializer_pair': {
        const v = child('value');
        return v ? this.build(v) : unknown(at);
      }
      default:
        return { k: 'unknown', text: node.type, at };
    }
  }

  private name(node: SyntaxNode, name: string, templateArgs: TemplateArg[] | null, at: Range): Expr {
    if (
      !this.expanded &&
      this.hooks.macros &&
      (node.type === 'identifier' || node.type === 'type_identifier') &&
      this.hooks.macros.isMacro(name, this.fileOffset(node))
    ) {
      const e = this.expandUse(this.fileOffset(node), node.endIndex + (this.hooks.base ?? 0), at);
      if (e) return e;
    }
    return { k: 'name', name, local: name.includes('::') ? null : this.scope.resolve(name), templateArgs, at };
  }

  private call(node: SyntaxNode, at: Range): Expr {
    const fn = node.childForFieldName('function');
    const argsNode = node.childForFieldName('arguments');
    const launch = node.namedChildren.find((c) => c?.type === 'kernel_call_syntax');
    if (
      fn &&
      !launch &&
      !this.expanded &&
      this.hooks.macros &&
      fn.type === 'identifier' &&
      this.hooks.macros.isMacro(this.text(fn), this.fileOffset(fn))
    ) {
      const e = this.expandUse(this.fileOffset(node), node.endIndex + (this.hooks.base ?? 0), at);
      if (e) return e;
    }
    const args = codeChildren(argsNode).map((c) => this.build(c));
    if (fn?.type === 'template_function') {
      const name = fn.childForFieldName('name');
      const n = name ? this.text(name) : '';
      if (CASTS.has(n)) {
        const targs = fn.childForFieldName('arguments');
        return {
          k: 'cast',
          type: targs ? normal(this.text(targs)).replace(/^<|>$/g, '') : '',
          arg: args[0] ?? unknown(at),
          at,
        };
      }
    }
    const callee = fn ? this.build(fn) : unknown(at);
    const from = this.origin ? { from: this.origin } : {};
    const id = this.nextId++;
    if (launch) {
      const config = codeChildren(launch).map((c) => this.build(c));
      return { k: 'launch', callee, config, args, at, id, ...from };
    }
    return { k: 'call', callee, args, at, id, ...from };
  }

  private expandUse(start: number, end: number, at: Range): Expr | null {
    const expansions = this.hooks.macros!.expandExpression(start, end);
    if (!expansions || expansions.length === 0) return null;
    const options = expansions.map((x): Expr => {
      const e = this.withMap(x.map, null, () => this.build(x.node));
      return x.origin ? { ...e, from: x.origin } : e;
    });
    if (options.length === 1) return options[0];
    const first = expansions[0].origin;
    return { k: 'alternatives', options, at, ...(first ? { from: { ...first, several: true } } : {}) };
  }

  private templateArgs(list: SyntaxNode | null): TemplateArg[] | null {
    if (!list) return null;
    const out: TemplateArg[] = [];
    for (const c of codeChildren(list)) {
      if (c.type === 'type_descriptor') {
        // `N` in `k<N>` parses as a type: a name the evaluator may know as a value.
        const only = c.namedChildren.length === 1 ? c.namedChildren[0] : null;
        if (only?.type === 'type_identifier') out.push({ expr: this.name(only, this.text(only), null, this.at(only)) });
        else out.push({ type: normal(this.text(c)) });
      } else out.push({ expr: this.build(c) });
    }
    return out;
  }

  private asm(node: SyntaxNode, at: Range): Expr {
    const template = node.childForFieldName('assembly_code');
    const outputs: Expr[] = [];
    const inputs: Expr[] = [];
    for (const c of node.namedChildren) {
      if (c?.type === 'gnu_asm_output_operand_list')
        for (const o of c.namedChildren) {
          const v = o?.childForFieldName('value');
          if (v) outputs.push(this.build(v));
        }
      if (c?.type === 'gnu_asm_input_operand_list')
        for (const i of c.namedChildren) {
          const v = i?.childForFieldName('value');
          if (v) inputs.push(this.build(v));
        }
    }
    return { k: 'asm', template: template ? this.text(template) : '', outputs, inputs, at };
  }
}

function unknown(at: Range): Expr {
  return { k: 'unknown', text: '', at };
}

function normal(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** An integer or floating literal (`0x10`, `1'000`, `256u`, `1.5f`, `1e3`); a malformed one is unknown. */
export function numberLiteral(text: string, at: Range): Expr {
  // The grammar reads a sign written against a literal as part of it (`-1`).
  const sign = /^\s*-/.test(text) ? -1 : 1;
  const t = text.replace(/'/g, '').replace(/^\s*[-+]\s*/, '');
  const int = /^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uU]?[lL]{0,2}[uU]?|[zZ])?$/.exec(t);
  if (int) {
    const digits = int[1];
    const value = /^0[0-7]+$/.test(digits)
      ? parseInt(digits.slice(1), 8)
      : /^0[bB]/.test(digits)
        ? parseInt(digits.slice(2), 2)
        : Number(digits);
    return Number.isSafeInteger(value)
      ? { k: 'num', value: sign * value, integer: true, text, at }
      : { k: 'unknown', text, at };
  }
  const float = /^((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F.]+[pP][+-]?\d+)[fFlL]?$/.exec(t);
  if (float) {
    const value = sign * Number(float[1]);
    return Number.isFinite(value) ? { k: 'num', value, integer: false, text, at } : { k: 'unknown', text, at };
  }
  return { k: 'unknown', text, at };
}

function charLiteral(text: string, at: Range): Expr {
  const m = /^[uUL]?'(\\?.)'$/.exec(text);
  const escapes: Record<string, number> = { '\\n': 10, '\\t': 9, '\\0': 0, '\\r': 13, "\\'": 39, '\\\\': 92 };
  const c = m?.[1];
  const code = c === undefined ? undefined : c.length === 1 ? c.charCodeAt(0) : escapes[c];
  return code === undefined ? { k: 'unknown', text, at } : { k: 'num', value: code, integer: true, text, at };
}
