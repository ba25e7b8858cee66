/**
 * Macro definitions and their expansion, as the C preprocessor does it (C++17 [cpp.replace]):
 * object-like and function-like macros, arguments macro-expanded before substitution unless next to
 * `#` or `##`, stringizing, token pasting, `__VA_ARGS__` and `__VA_OPT__`, and the result rescanned
 * with the macros being expanded hidden from it (Prosser's hide sets). Every token keeps where it
 * stands in the file it was read from: an argument's tokens their own place, a body's tokens the
 * place of the use, so that what an expansion yields can be pointed at.
 *
 * Bounded: input can nest without end (a 1,000-deep chain of macros, an argument that doubles at
 * every step), so past a depth or a size the expansion stops with ExpansionLimit, and the caller
 * takes the value as unknown.
 */
import { tokenize, type PpToken, type TokenKind } from './tokens';

export interface MacroDef {
  name: string;
  /** Parameter names of a function-like macro (`__VA_ARGS__` for `...`), or null for an object-like one. */
  params: readonly string[] | null;
  variadic: boolean;
  /** The replacement list, or null when the macro is defined but its value is not known (a compiler's own, of unknown version). */
  body: readonly PpToken[] | null;
  /** Where it is defined: a file of the unit (its path) or `<command line>` / `<built-in>`. */
  file: string;
  /** Offset of its `#define` in that file (0 for flags and built-ins). */
  at: number;
}

/** A token of an expansion: where it comes from in the file of the use, and the macros hidden from it. */
export interface XToken {
  kind: TokenKind;
  text: string;
  space: boolean;
  /** Offsets in the file where the expansion was asked for: the token's own, or the whole use's for a body's tokens. */
  start: number;
  end: number;
  /** Names not to expand in this token (its hide set), shared between the tokens of one expansion. */
  hide: ReadonlySet<string> | null;
  /** Marked never to be expanded again (a macro's name met inside its own expansion). */
  blue?: boolean;
  /** Came from a macro's body (not verbatim from the text at the use). */
  expanded?: boolean;
}

/** The expansion went past its bounds (too deep or too long): whatever it would give is unknown here. */
export class ExpansionLimit extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ExpansionLimit';
  }
}

/** Nesting of argument pre-expansion: a 1,000-deep chain `M(M(M(...)))` stops here, with no value. */
export const MAX_EXPANSION_DEPTH = 128;
/** Tokens one expansion may produce: `#define A B B` chains double at each step. */
export const MAX_EXPANSION_TOKENS = 50_000;
/** Macro replacements one expansion may perform. */
export const MAX_EXPANSION_STEPS = 20_000;

/** The macro a name stands for here, or null (not a macro, or nothing known of it). */
export type MacroLookup = (name: string) => MacroDef | null;

/** The definition written by a `#define`'s tokens (its name first), or null when they do not make one. */
export function defineFrom(tokens: readonly PpToken[], file: string, at: number): MacroDef | null {
  const name = tokens[0];
  if (!name || name.kind !== 'ident') return null;
  const open = tokens[1];
  if (!open || open.text !== '(' || open.space)
    return { name: name.text, params: null, variadic: false, body: tokens.slice(1), file, at };
  const params: string[] = [];
  let variadic = false;
  let k = 2;
  for (; k < tokens.length && tokens[k].text !== ')'; k++) {
    const t = tokens[k];
    if (t.text === ',') continue;
    if (t.text === '...') {
      variadic = true;
      params.push('__VA_ARGS__');
    } else if (t.kind === 'ident') {
      // GNU named variadic parameter: `args...`.
      if (tokens[k + 1]?.text === '...') {
        variadic = true;
        k++;
      }
      params.push(t.text);
    } else return null;
  }
  if (k >= tokens.length) return null;
  return { name: name.text, params, variadic, body: tokens.slice(k + 1), file, at };
}

/** A definition given on the command line (`-DNAME=value`, `-DNAME` is 1), or built in. */
export function commandLineDefine(name: string, value: string | null, file = '<command line>'): MacroDef | null {
  const toks = tokenize(`${name} ${value ?? '1'}`);
  const def = defineFrom(
    toks.map((t, k) => (k === 1 ? { ...t, space: true } : t)),
    file,
    0,
  );
  return def;
}

/** A macro the compiler defines with a value not known here (`__GNUC__` of an unknown version). */
export function opaqueDefine(name: string): MacroDef {
  return { name, params: null, variadic: false, body: null, file: '<built-in>', at: 0 };
}

/** Two definitions are the same when their parameters and replacement lists are (C++17 [cpp.replace]/2). */
export function sameDefinition(a: MacroDef, b: MacroDef): boolean {
  if (a === b) return true;
  if (a.name !== b.name || a.variadic !== b.variadic) return false;
  if ((a.params === null) !== (b.params === null)) return false;
  if (a.params && b.params && (a.params.length !== b.params.length || a.params.some((p, k) => p !== b.params![k])))
    return false;
  if (a.body === null || b.body === null) return a.body === b.body;
  if (a.body.length !== b.body.length) return false;
  return a.body.every((t, k) => t.text === b.body![k].text && (k === 0 || t.space === b.body![k].space));
}

/** The tokens of a piece of the file, ready to expand. */
export function toExpand(tokens: readonly PpToken[]): XToken[] {
  return tokens.map((t) => ({ kind: t.kind, text: t.text, space: t.space, start: t.start, end: t.end, hide: null }));
}

interface Budget {
  steps: number;
  tokens: number;
}

/**
 * `tokens` with every macro use replaced by its expansion, rescanned until none is left.
 * Throws ExpansionLimit past the bounds above.
 */
export function expandTokens(tokens: readonly XToken[], lookup: MacroLookup): XToken[] {
  return expandWithin(tokens, lookup, { steps: 0, tokens: 0 }, 0);
}

function expandWithin(input: readonly XToken[], lookup: MacroLookup, budget: Budget, depth: number): XToken[] {
  if (depth > MAX_EXPANSION_DEPTH) throw new ExpansionLimit('macro arguments nest too deeply');
  const out: XToken[] = [];
  // The tokens still to read, last first: a replacement is pushed back to be read again.
  const pending: XToken[] = [];
  for (let k = input.length - 1; k >= 0; k--) pending.push(input[k]);
  while (pending.length > 0) {
    const t = pending.pop()!;
    if (t.kind !== 'ident' || t.blue) {
      out.push(t);
      continue;
    }
    if (t.hide?.has(t.text)) {
      out.push({ ...t, blue: true });
      continue;
    }
    const def = lookup(t.text);
    if (!def || def.body === null) {
      out.push(t);
      continue;
    }
    if (++budget.steps > MAX_EXPANSION_STEPS) throw new ExpansionLimit('too many macro replacements');
    if (def.params === null) {
      const hide = withName(t.hide, def.name);
      pushBack(pending, substitute(def, [], hide, t, t, lookup, budget, depth), t.space);
      continue;
    }
    // A function-like macro's name not followed by `(` is just a name.
    const open = pending[pending.length - 1];
    if (!open || open.text !== '(') {
      out.push(t);
      continue;
    }
    const call = readArguments(pending, def);
    if (!call) {
      // An unclosed call: the rest of the input is its arguments; nothing to expand.
      out.push(t);
      continue;
    }
    const hide = withName(intersect(t.hide, call.close.hide), def.name);
    pushBack(pending, substitute(def, call.args, hide, t, call.close, lookup, budget, depth), t.space);
    budget.tokens += call.consumed;
  }
  budget.tokens += out.length;
  if (budget.tokens > MAX_EXPANSION_TOKENS) throw new ExpansionLimit('the expansion is too long');
  return out;
}

function pushBack(pending: XToken[], tokens: XToken[], space: boolean): void {
  for (let k = tokens.length - 1; k >= 0; k--) pending.push(k === 0 ? { ...tokens[0], space } : tokens[k]);
}

/** The arguments of a call whose `(` is next in `pending` (taken out of it), or null when it is not closed. */
function readArguments(pending: XToken[], def: MacroDef): { args: XToken[][]; close: XToken; consumed: number } | null {
  const taken: XToken[] = [];
  let depth = 0;
  const args: XToken[][] = [[]];
  while (pending.length > 0) {
    const t = pending.pop()!;
    taken.push(t);
    if (t.text === '(') {
      if (depth++ === 0) continue;
    } else if (t.text === ')') {
      if (--depth === 0) {
        const params = def.params!;
        // `M()` of a one-parameter macro is one empty argument; of none, no arguments.
        if (params.length === 0 && args.length === 1 && args[0].length === 0) args.pop();
        // The variadic parameter takes the rest, commas included.
        if (def.variadic && args.length > params.length) {
          const rest = args.splice(params.length - 1);
          const joined: XToken[] = [];
          rest.forEach((a, k) => {
            if (k > 0) joined.push({ ...rest[k - 1][rest[k - 1].length - 1], kind: 'punct', text: ',', space: false });
            joined.push(...a);
          });
          args.push(joined);
        }
        while (def.variadic && args.length < params.length) args.push([]);
        return { args, close: t, consumed: taken.length };
      }
    } else if (t.text === ',' && depth === 1) {
      args.push([]);
      continue;
    }
    args[args.length - 1].push(t);
  }
  for (let k = taken.length - 1; k >= 0; k--) pending.push(taken[k]);
  return null;
}

/** The body of `def` with its parameters replaced, every token given `hide` and placed at the use (name to closing token). */
function substitute(
  def: MacroDef,
  args: XToken[][],
  hide: ReadonlySet<string>,
  name: XToken,
  close: XToken,
  lookup: MacroLookup,
  budget: Budget,
  depth: number,
): XToken[] {
  const body = def.body!;
  const params = def.params ?? [];
  const at = (t: PpToken): XToken => ({
    kind: t.kind,
    text: t.text,
    space: t.space,
    start: name.start,
    end: close.end,
    hide,
    expanded: true,
  });
  const paramIndex = (t: PpToken | undefined): number => (t && t.kind === 'ident' ? params.indexOf(t.text) : -1);
  const expandedArgs = new Map<number, XToken[]>();
  const expandedArg = (k: number): XToken[] => {
    let e = expandedArgs.get(k);
    if (!e) {
      e = expandWithin(args[k] ?? [], lookup, budget, depth + 1);
      expandedArgs.set(k, e);
    }
    return e;
  };
  const vaIndex = def.variadic ? params.length - 1 : -1;
  const out: XToken[] = [];
  for (let k = 0; k < body.length; k++) {
    const t = body[k];
    // `#param`: the argument as a string literal.
    if (def.params && t.text === '#' && paramIndex(body[k + 1]) >= 0) {
      const arg = args[paramIndex(body[k + 1])] ?? [];
      out.push({ ...at(t), kind: 'string', text: stringize(arg), space: t.space });
      k++;
      continue;
    }
    // `__VA_OPT__(x)`: x when the variadic argument has tokens.
    if (t.text === '__VA_OPT__' && def.variadic && body[k + 1]?.text === '(') {
      let d = 0;
      let j = k + 1;
      for (; j < body.length; j++) {
        if (body[j].text === '(') d++;
        else if (body[j].text === ')' && --d === 0) break;
      }
      if ((args[vaIndex] ?? []).length > 0) {
        const inner = { ...def, body: body.slice(k + 2, j) };
        out.push(...substitute(inner, args, hide, name, close, lookup, budget, depth));
      }
      k = j;
      continue;
    }
    const p = paramIndex(t);
    if (p >= 0) {
      const pasted = body[k + 1]?.text === '##' || body[k - 1]?.text === '##';
      const replacement = pasted ? (args[p] ?? []) : expandedArg(p);
      const placed = replacement.map((r, j) => ({
        ...r,
        space: j === 0 ? t.space : r.space,
        hide: union(r.hide, hide),
      }));
      if (pasted && placed.length === 0) out.push({ ...at(t), kind: 'other', text: '', space: t.space });
      else out.push(...placed);
      continue;
    }
    out.push(at(t));
  }
  return paste(out);
}

/** Applies each `##` of a substituted body: the tokens on its sides become one (an empty side is the placemarker). */
function paste(tokens: XToken[]): XToken[] {
  if (!tokens.some((t) => t.text === '##' && t.expanded))
    return tokens.filter((t) => t.text !== '' || t.kind !== 'other');
  const out: XToken[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.text === '##' && t.expanded && out.length > 0 && k + 1 < tokens.length) {
      const left = out.pop()!;
      const right = tokens[++k];
      const text = left.text + right.text;
      const retoken = tokenize(text);
      const kind: TokenKind = retoken.length === 1 ? retoken[0].kind : 'other';
      out.push({ ...left, kind, text, end: Math.max(left.end, right.end), blue: false });
      continue;
    }
    out.push(t);
  }
  return out.filter((t) => t.text !== '' || t.kind !== 'other');
}

function stringize(arg: readonly XToken[]): string {
  let s = '';
  arg.forEach((t, k) => {
    if (k > 0 && t.space) s += ' ';
    s += t.kind === 'string' || t.kind === 'char' ? t.text.replace(/[\\"]/g, (c) => `\\${c}`) : t.text;
  });
  return `"${s}"`;
}

function withName(hide: ReadonlySet<string> | null, name: string): ReadonlySet<string> {
  if (hide?.has(name)) return hide;
  const s = new Set(hide ?? []);
  s.add(name);
  return s;
}

function union(a: ReadonlySet<string> | null, b: ReadonlySet<string>): ReadonlySet<string> {
  if (!a || a === b || a.size === 0) return b;
  let s: Set<string> | null = null;
  for (const n of a)
    if (!b.has(n)) {
      s ??= new Set(b);
      s.add(n);
    }
  return s ?? b;
}

function intersect(a: ReadonlySet<string> | null, b: ReadonlySet<string> | null): ReadonlySet<string> | null {
  if (!a || !b) return null;
  const s = new Set<string>();
  for (const n of a) if (b.has(n)) s.add(n);
  return s;
}
