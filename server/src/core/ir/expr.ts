/**
 * The expressions of the function IR: a small tree the value and uniformity analyses evaluate,
 * built from the syntax tree (and from macro expansions, parsed the same way). Every node keeps
 * where it stands in its file (`at`: start and end offsets), so findings point at the source.
 */

export type Range = readonly [number, number];

export type TemplateArg = { type: string } | { expr: Expr };

/** Where an expression came from when it is a macro's expansion: the macro, and where it is defined. */
export interface MacroOrigin {
  name: string;
  /** The file of its `#define` (or `<command line>`), and the offset there. */
  file: string;
  defAt: number;
  /** Several definitions the unit cannot choose between. */
  several?: boolean;
}

export type Expr = ExprNode & { from?: MacroOrigin };

type ExprNode =
  | { k: 'num'; value: number; integer: boolean; text: string; at: Range }
  | { k: 'str'; at: Range }
  /** A name as written (`x`, `ns::N`, `Traits<T>::kThreads`), with the local it resolves to in its function, if any. */
  | { k: 'name'; name: string; local: number | null; templateArgs: TemplateArg[] | null; at: Range }
  | { k: 'this'; at: Range }
  | { k: 'unary'; op: string; arg: Expr; at: Range }
  | { k: 'update'; op: '++' | '--'; prefix: boolean; arg: Expr; at: Range }
  | { k: 'binary'; op: string; left: Expr; right: Expr; at: Range }
  | { k: 'assign'; op: string; target: Expr; value: Expr; at: Range }
  | { k: 'cond'; cond: Expr; then: Expr; else: Expr; at: Range }
  /** `id`: unique in its function (two launches one macro use writes stand at the same place). */
  | { k: 'call'; callee: Expr; args: Expr[]; at: Range; id: number }
  /** `k<<<grid, block, smem, stream>>>(args)`. */
  | { k: 'launch'; callee: Expr; config: Expr[]; args: Expr[]; at: Range; id: number }
  /** `o.f`, `o->f`; `o.template operator()<16, 256>` keeps its written template arguments. */
  | { k: 'field'; object: Expr; field: string; arrow: boolean; at: Range; templateArgs?: TemplateArg[] }
  | { k: 'index'; object: Expr; index: Expr; at: Range }
  /** A C cast, `static_cast<T>(x)` and the like. */
  | { k: 'cast'; type: string; arg: Expr; at: Range }
  | { k: 'sizeof'; type: string | null; arg: Expr | null; at: Range }
  /** `T{a, b}`, `{a, b}`, `T(a, b)` of a class type (`dim3(256, 1)`): `type` null for a bare list. */
  | { k: 'init'; type: string | null; items: Expr[]; designators: Array<string | null> | null; at: Range }
  | { k: 'comma'; items: Expr[]; at: Range }
  /** A lambda: its IR is built from its range when a call of it is followed. */
  | { k: 'lambda'; at: Range }
  /** Inline assembly: its template text, outputs and inputs. */
  | { k: 'asm'; template: string; outputs: Expr[]; inputs: Expr[]; at: Range }
  /** A macro whose definition differs between configurations the unit cannot tell apart: one of these. */
  | { k: 'alternatives'; options: Expr[]; at: Range }
  | { k: 'unknown'; text: string; at: Range };

export function isName(e: Expr, name: string): boolean {
  return e.k === 'name' && e.name === name;
}

/** The last component of a written name (`ns::k` → `k`). */
export function baseName(name: string): string {
  const k = name.lastIndexOf('::');
  return k < 0 ? name : name.slice(k + 2);
}

/** The expressions directly inside `e` (a lambda's body is not: it is a function of its own). */
export function childrenOf(e: Expr): Expr[] {
  switch (e.k) {
    case 'unary':
    case 'update':
    case 'cast':
      return [e.arg];
    case 'binary':
      return [e.left, e.right];
    case 'assign':
      return [e.target, e.value];
    case 'cond':
      return [e.cond, e.then, e.else];
    case 'call':
      return [e.callee, ...e.args];
    case 'launch':
      return [e.callee, ...e.config, ...e.args];
    case 'field':
      return [e.object];
    case 'index':
      return [e.object, e.index];
    case 'sizeof':
      return e.arg ? [e.arg] : [];
    case 'init':
    case 'comma':
      return e.items;
    case 'asm':
      return [...e.outputs, ...e.inputs];
    case 'alternatives':
      return e.options;
    case 'name':
      return (e.templateArgs ?? []).flatMap((t) => ('expr' in t ? [t.expr] : []));
    default:
      return [];
  }
}

/** Calls `visit` on `e` and every expression inside it, parents first; `visit` returning false skips the children. */
export function forEachExpr(e: Expr, visit: (e: Expr) => boolean | void, depth = 0): void {
  if (depth > MAX_DEPTH) return;
  if (visit(e) === false) return;
  for (const c of childrenOf(e)) forEachExpr(c, visit, depth + 1);
}

/** Expressions nest at most this deep in the IR; deeper ones (generated code) are cut to unknown. */
export const MAX_DEPTH = 400;
