/**
 * Named integer constants a launch configuration can refer to: object-like
 * `#define`s, `const`/`constexpr`/`static const` variables, enumerators, and
 * `dim3` variables, at file scope or inside one function. A non-const local
 * counts only when nothing assigns to it after its declaration: null beats wrong.
 */
import type { Dim3 } from '../types';
import { evaluateInteger, type Lookup } from './const-eval';
import { isIdentCharAt, isSpaceAt, lastComponent, matchingClose, positionAt, splitTopLevel, type SourceText } from './source-text';
import { memoByText } from '../incremental/kept-tables';

export interface ConstantDefinition {
  name: string;
  /** The expression text, evaluated lazily (it may name other constants). */
  expr: string;
  kind: 'define' | 'const' | 'enumerator' | 'local';
  offset: number;
  /** 0-based line of the definition. */
  line?: number;
  /** Where it lives, for notes: a file name (set by the workspace index). */
  origin?: string;
}

export interface Dim3Definition {
  name: string;
  args: string[];
  offset: number;
}

export interface ConstantTable {
  constants: Map<string, ConstantDefinition>;
  dim3s: Map<string, Dim3Definition>;
  /**
   * Names declared here whose value is not a compile-time constant (function
   * parameters, locals assigned again): they hide constants of the same name
   * further out. The value says why.
   */
  shadowed?: Map<string, string>;
}

const INTEGER_TYPE = String.raw`(?:(?:unsigned|signed)\s+)?(?:int|long\s+long|long|short|char|size_t|unsigned|int32_t|uint32_t|int64_t|uint64_t|std::size_t|auto)`;

// Built once (collectConstants runs for every chunk and function body); global: each scan sets `lastIndex`.
const CONST_VAR = new RegExp(String.raw`\b(?:static\s+|inline\s+)*(const|constexpr)\s+(?:static\s+)?(?:const\s+)?${INTEGER_TYPE}\s+(?:const\s+)?([A-Za-z_]\w*)\s*(?:=\s*([^;{}]+?)|\{([^;{}]*)\}|\(([^;{}]*)\))\s*;`, 'g');
const CONST_VAR_LEADING = new RegExp(String.raw`\b${INTEGER_TYPE}\s+const\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+?)\s*;`, 'g');
const PLAIN_VAR = new RegExp(String.raw`(?:^|[;{}])\s*${INTEGER_TYPE}\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+?)\s*;`, 'g');
const ANY_VAR = new RegExp(String.raw`(?:^|[;{}(])\s*(?:const\s+)?${INTEGER_TYPE}\s+([A-Za-z_]\w*)\s*(?=[;=,)\[{(])`, 'g');

/** Constants declared in `[from, to)` of the source (the whole file, or one function body). */
export function collectConstants(source: SourceText, from = 0, to = source.masked.length, options: { localsMustBeConst?: boolean } = {}): ConstantTable {
  return collectConstantDefinitions(source, from, to, options).table;
}

/**
 * collectConstants, and every definition it read in the order read: a name written twice is there
 * twice (the table keeps it once, ambiguous). What a text defines then adds up the same however
 * the text is cut into parts.
 */
export function collectConstantDefinitions(
  source: SourceText,
  from = 0,
  to = source.masked.length,
  { localsMustBeConst = true }: { localsMustBeConst?: boolean } = {},
): { table: ConstantTable; definitions: ConstantDefinition[] } {
  const masked = source.masked.slice(0, to);
  const constants = new Map<string, ConstantDefinition>();
  const dim3s = new Map<string, Dim3Definition>();
  const definitions: ConstantDefinition[] = [];
  const add = (def: ConstantDefinition) => {
    def.line = positionAt(source, def.offset).line;
    definitions.push(def);
    if (!constants.has(def.name)) constants.set(def.name, def);
    else constants.set(def.name, { ...def, expr: '' }); // defined twice: ambiguous
  };

  // Each pattern runs only where the word it needs is written: a function body seldom has a
  // `#define` or an `enum`, and most chunks no `const` before their type (`int const N = 4;`).
  // Not `#` alone: kernels write `#pragma unroll`.
  DEFINE.lastIndex = from;
  for (let m = masked.includes('define', from) ? DEFINE.exec(masked) : null; m; m = DEFINE.exec(masked)) {
    if (m[2].endsWith('\\')) continue;
    add({ name: m[1], expr: m[2], kind: 'define', offset: m.index });
  }

  const firstConst = masked.indexOf('const', from);
  const hasConst = firstConst >= 0;
  CONST_VAR.lastIndex = from;
  for (let m = hasConst ? CONST_VAR.exec(masked) : null; m; m = CONST_VAR.exec(masked)) {
    const init = (m[3] ?? m[4] ?? m[5] ?? '').trim();
    // `const int A = 1, B = A * 2;`: one declaration, several constants
    const parts = m[3] !== undefined && init.includes(',') ? splitTopLevel(init, 0, init.length).map(([a, b]) => init.slice(a, b)) : [init];
    add({ name: m[2], expr: parts[0] ?? '', kind: 'const', offset: m.index }); // `= ;` half-typed: no parts
    for (const part of parts.slice(1)) {
      const d = /^([A-Za-z_]\w*)\s*(?:=\s*(.+)|\{(.*)\})$/s.exec(part.trim());
      if (d) add({ name: d[1], expr: (d[2] ?? d[3]).trim(), kind: 'const', offset: m.index });
    }
  }
  CONST_VAR_LEADING.lastIndex = from;
  for (let m = hasConst && hasConstAfterType(masked, from, firstConst) ? CONST_VAR_LEADING.exec(masked) : null; m; m = CONST_VAR_LEADING.exec(masked)) {
    add({ name: m[1], expr: m[2].trim(), kind: 'const', offset: m.index });
  }

  const shadowed = new Map<string, string>();
  if (!localsMustBeConst) {
    PLAIN_VAR.lastIndex = from;
    for (let m = masked.includes('=', from) ? PLAIN_VAR.exec(masked) : null; m; m = PLAIN_VAR.exec(masked)) {
      if (isReassigned(masked, m[1], m.index + m[0].length, to)) {
        shadowed.set(m[1], `\`${m[1]}\` is assigned again after its declaration, so its value here is not known statically`);
        continue;
      }
      add({ name: m[1], expr: m[2].trim(), kind: 'local', offset: m.index });
    }
    // Any other local declaration (`int bs;`, `for (int t = ...)`, `int bs = f();` read later) hides outer constants.
    ANY_VAR.lastIndex = from;
    for (let m = ANY_VAR.exec(masked); m; m = ANY_VAR.exec(masked)) {
      if (!constants.has(m[1]) && !shadowed.has(m[1])) shadowed.set(m[1], `\`${m[1]}\` is a local variable whose value is not known statically`);
    }
  }

  ENUM.lastIndex = from;
  for (let m = masked.includes('enum', from) ? ENUM.exec(masked) : null; m; m = ENUM.exec(masked)) {
    const open = m.index + m[0].length - 1;
    const close = matchingClose(masked, open);
    if (close < 0) continue;
    const enumName = /\benum\b(?:\s+(?:class|struct))?\s+([A-Za-z_]\w*)/.exec(m[0])?.[1];
    let previous: string | null = null;
    for (const [a, b] of splitTopLevel(masked, open + 1, close)) {
      const item = masked.slice(a, b);
      const e = /^([A-Za-z_]\w*)\s*(?:=\s*(.+))?$/s.exec(item);
      if (!e) continue;
      const expr = e[2]?.trim() ?? (previous === null ? '0' : `(${previous}) + 1`);
      add({ name: e[1], expr, kind: 'enumerator', offset: a });
      if (enumName) add({ name: `${enumName}::${e[1]}`, expr, kind: 'enumerator', offset: a });
      previous = e[1];
    }
  }

  DIM3.lastIndex = from;
  for (let m = masked.includes('dim3', from) ? DIM3.exec(masked) : null; m; m = DIM3.exec(masked)) {
    const inner = m[2] ?? m[3] ?? m[4] ?? m[5] ?? '';
    const innerStart = m.index + m[0].indexOf(inner);
    const args = splitTopLevel(masked, innerStart, innerStart + inner.length).filter(([a, b]) => b > a).map(([a, b]) => masked.slice(a, b));
    const reassigned = isReassigned(masked, m[1], m.index + m[0].length, to, true);
    if (!dim3s.has(m[1]) && !reassigned) dim3s.set(m[1], { name: m[1], args, offset: m.index });
    else dim3s.set(m[1], { name: m[1], args: [], offset: m.index });
  }
  return { table: { constants, dim3s, shadowed }, definitions };
}

// Built once, as the patterns above.
const DEFINE = /^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]*?)[ \t]*$/gm;
const ENUM = /\benum\b(?:\s+(?:class|struct))?(?:\s+[A-Za-z_]\w*)?(?:\s*:\s*[\w:\s]+?)?\s*\{/g;
const DIM3 = /\b(?:const\s+)?dim3\s+(?:const\s+)?([A-Za-z_]\w*)\s*(?:\(([^;]*)\)|\{([^;]*)\}|=\s*(?:dim3\s*)?[({]([^;]*)[)}]|=\s*([^;(){}]+))\s*;/g;

/** A word, blanks, `const`, a blank, somewhere at or after `from` (the first `const` there is at `first`): what CONST_VAR_LEADING needs (`int const N`). */
function hasConstAfterType(masked: string, from: number, first: number): boolean {
  for (let i = first; i >= 0; i = masked.indexOf('const', i + 5)) {
    if (!isSpaceAt(masked, i + 5)) continue;
    let j = i - 1;
    while (j >= from && isSpaceAt(masked, j)) j--;
    if (j < i - 1 && j >= from && isIdentCharAt(masked, j)) return true;
  }
  return false;
}

/** `name = …`, `name += …`, `name++`, `&name`, or (for dim3) `name.x = …` after `from`. */
export function isReassigned(masked: string, name: string, from: number, to: number, members = false): boolean {
  // A name declared in a block can only be assigned before that block closes: search no further.
  const body = masked.slice(from, blockEnd(masked, from, to));
  return body.includes(name) && assignmentPattern(name, members).test(body);
}

/** Patterns by name, built once: the same locals and dim3s are checked in every version of a file. */
const assignmentPattern = memoByText(
  'assignment patterns',
  (name: string, members: boolean) => (members ? `${name}.` : name),
  (name: string, members: boolean): RegExp => {
    const member = members ? String.raw`(?:\s*\.\s*[xyz])?` : '';
    return new RegExp(String.raw`(?<![\w.>])${name}${member}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*${name}\b|(?<![\w.>])${name}\s*(?:\+\+|--)|&\s*${name}\b|>>\s*${name}\b`);
  },
);

/** The offset of the `}` closing the block that `from` is in, or `to` at file scope. */
function blockEnd(masked: string, from: number, to: number): number {
  let depth = 0;
  BRACES.lastIndex = from;
  for (let m = BRACES.exec(masked); m && m.index < to; m = BRACES.exec(masked)) {
    if (m[0] === '{') depth++;
    else if (--depth < 0) return m.index;
  }
  return to;
}

/** Global: searched from `lastIndex`, to jump from brace to brace. */
const BRACES = /[{}]/g;

/**
 * A lookup over several tables, innermost first, with a fallback (the workspace index).
 * It remembers its answers: make it once the tables are complete, and a new one when they change.
 */
export function makeLookup(tables: readonly ConstantTable[], fallback: Lookup = () => null): Lookup {
  const seen = new Set<string>();
  const known = new Map<string, number | null>();
  const lookup: Lookup = (name) => {
    const remembered = known.get(name);
    if (remembered !== undefined) return remembered;
    // A value never depends on the names being evaluated around it (reaching one of them is a
    // cycle, which fails from any start), but a null found inside a cycle is kept only at the top.
    const topLevel = seen.size === 0;
    const value = resolve(name);
    if (value !== null || topLevel) known.set(name, value);
    return value;
  };
  const resolve: Lookup = (name) => {
    for (const table of tables) {
      if (table.shadowed?.has(name)) return null;
      const def = table.constants.get(name);
      if (!def) continue;
      if (def.expr === '' || seen.has(name)) return null;
      seen.add(name);
      try {
        return evaluateInteger(def.expr, lookup);
      } finally {
        seen.delete(name);
      }
    }
    const outer = fallback(name);
    if (outer !== null || !name.includes('::')) return outer;
    // `detail::kBlock` names the `kBlock` a namespace block declares (the tables key by the plain name; two
    // different definitions of it make it ambiguous, so this never picks one of several).
    const last = lastComponent(name);
    return tables.some((t) => t.constants.get(last)?.kind === 'const' || t.constants.get(last)?.kind === 'define') ? lookup(last) : fallback(last);
  };
  return lookup;
}

export function resolveDim3(text: string, tables: readonly ConstantTable[], lookup: Lookup): Dim3 | null {
  const parts = dim3Parts(text, tables, lookup);
  if (!parts || parts.some((v) => v === null)) return null;
  const [x, y, z] = parts as number[];
  return { x, y, z };
}

/**
 * What is known of a block or grid that does not resolve: `32 × ? × 1` for `{32u, ROWS, 1}` with
 * `ROWS` unknown. Null when nothing or everything is known, or when the text is not a dim3.
 */
export function partialDim3(text: string, tables: readonly ConstantTable[], lookup: Lookup): string | null {
  const parts = dim3Parts(text, tables, lookup);
  if (!parts || parts.every((v) => v === null) || parts.every((v) => v !== null)) return null;
  return parts.map((v) => (v === null ? '?' : String(v))).join(' × ');
}

/** The three components of a dim3 text (missing ones are 1), null each where unknown; null when it is not a dim3 at all. */
function dim3Parts(text: string, tables: readonly ConstantTable[], lookup: Lookup): Array<number | null> | null {
  const trimmed = text.trim();
  const ctor = trimmed.startsWith('dim3') ? /^dim3\s*[({](.*)[)}]$/s.exec(trimmed) : null;
  const brace = trimmed.startsWith('{') ? /^\{(.*)\}$/s.exec(trimmed) : null;
  let args: string[] | null = null;
  if (ctor || brace) args = splitArgs((ctor ?? brace)![1]);
  else if (/^[A-Za-z_]\w*$/.test(trimmed)) {
    for (const table of tables) {
      const def = table.dim3s.get(trimmed);
      if (def) {
        args = def.args.length === 1 && /^[A-Za-z_]\w*$/.test(def.args[0]) && tables.some((t) => t.dim3s.has(def.args[0])) ? null : def.args;
        if (def.args.length === 1 && args === null) return dim3Parts(def.args[0], tables, lookup);
        break;
      }
    }
  }
  if (args === null) {
    const scalar = evaluateInteger(trimmed, lookup);
    return scalar === null ? null : [scalar, 1, 1];
  }
  if (args.length === 0 || args.length > 3) return null;
  const values = args.map((a) => evaluateInteger(a, lookup));
  while (values.length < 3) values.push(1);
  return values;
}

function splitArgs(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last || parts.length) parts.push(last);
  return parts;
}

const NAME_START = /[A-Za-z_]/;
const RUNTIME_BUILTINS: ReadonlySet<string> = new Set(['blockDim', 'gridDim', 'threadIdx', 'blockIdx', 'warpSize']);
const NOT_NAMES: ReadonlySet<string> = new Set(['dim3', 'sizeof', 'static_cast', 'int', 'unsigned', 'long', 'short', 'char', 'signed', 'size_t', 'float', 'double', 'const', 'true', 'false', 'x', 'y', 'z']);

/**
 * A note for a value: where each name in `text` got its number
 * (`BLOCK = 256 (#define, line 4)`), or why one has none. Null when the text names nothing.
 */
export function explainNames(text: string, tables: readonly ConstantTable[], lookup: Lookup, describeOuter: (name: string) => string | null = () => null): string | null {
  if (!NAME_START.test(text)) return null; // `256`, `(1 << 10) * 4`: no name to explain
  const parts: string[] = [];
  // Each name as first written (`a :: b` and `a::b` are two writings of one name, each explained).
  const written = new Set<string>();
  for (const match of text.match(NAMES) ?? []) {
    if (written.has(match)) continue;
    written.add(match);
    // Only `::` can have blanks around it.
    const name = match.includes(':') ? match.replace(/\s+/g, '') : match;
    if (NOT_NAMES.has(name)) continue;
    if (RUNTIME_BUILTINS.has(name)) {
      parts.push(`\`${name}\` is known only at run time`);
      continue;
    }
    const inner = innermostNaming(tables, name);
    if (inner?.shadowed?.has(name)) {
      parts.push(inner.shadowed.get(name)!);
      continue;
    }
    if (inner?.dim3s.has(name)) continue;
    const def = inner?.constants.get(name);
    const value = lookup(name);
    if (def) {
      const where = `${kindWord(def.kind)}, ${def.origin ? `${def.origin}:${(def.line ?? 0) + 1}` : `line ${(def.line ?? 0) + 1}`}`;
      parts.push(value === null ? `\`${name}\` (${where}) is not a compile-time integer` : `${name} = ${value} (${where})`);
      continue;
    }
    const outer = describeOuter(name);
    if (outer) parts.push(outer);
    else if (value === null) parts.push(`\`${name}\` is not a compile-time constant here`);
  }
  return parts.length ? parts.join('; ') : null;
}

// Not the suffix of a number (`32u`, `1e5f`, `0x1F`): a name starts where no word character precedes it.
const NAMES = /(?<![\w.])[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*/g;

/** The first of `tables` (innermost first) that shadows, defines or declares a dim3 named `name`. */
function innermostNaming(tables: readonly ConstantTable[], name: string): ConstantTable | undefined {
  for (const t of tables) if (t.shadowed?.has(name) || t.constants.has(name) || t.dim3s.has(name)) return t;
  return undefined;
}

function kindWord(kind: ConstantDefinition['kind']): string {
  return kind === 'define' ? '#define' : kind === 'enumerator' ? 'enumerator' : kind === 'local' ? 'local' : 'const';
}
