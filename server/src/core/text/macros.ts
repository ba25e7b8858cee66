/**
 * Function-like macros: their definitions (`#define LAUNCH(K, B) K<<<g, B>>>(p)`), their uses in
 * code, and what a use expands to, so that a launch written in a macro body is read at each use
 * with the use's arguments. The expansion follows the C preprocessor closely enough for launch
 * configurations: parameters replaced by the arguments as written, `#` and `##`, `__VA_ARGS__`,
 * and the result scanned again for other macros (a macro is not expanded inside its own
 * expansion). Object-like macros are left to the constant lookup.
 */
import { findDirectiveRanges, inRanges } from './preprocessor-lines';
import { isIdentCharAt, isSpaceAt, positionAt, type SourceText } from './source-text';

export interface MacroDefinition {
  name: string;
  params: string[];
  /** The last parameter is `...` (`__VA_ARGS__`). */
  variadic: boolean;
  /** The replacement text: comments and literals blanked, line continuations joined. */
  body: string;
  offset: number;
  /** 0-based line of the definition. */
  line?: number;
  /** Where it lives, for notes: a file name (set by the workspace index). */
  origin?: string;
}

export interface MacroUse {
  name: string;
  /** Offsets of the name, of its end, and one past the closing parenthesis. */
  start: number;
  nameEnd: number;
  end: number;
  args: string[];
}

/** The function-like macros `#define`d in [from, to) of the source, in order. */
export function collectMacros(source: SourceText, from = 0, to = source.masked.length): MacroDefinition[] {
  const { masked } = source;
  const out: MacroDefinition[] = [];
  if (!masked.includes('define', from)) return out;
  for (const [start, end] of findDirectiveRanges(source)) {
    if (end <= from || start >= to) continue;
    FUNCTION_DEFINE.lastIndex = start;
    const m = FUNCTION_DEFINE.exec(masked);
    if (!m) continue;
    const paramsOpen = start + m[0].length - 1;
    const paramsClose = masked.indexOf(')', paramsOpen);
    if (paramsClose < 0 || paramsClose >= end) continue;
    const params = masked
      .slice(paramsOpen + 1, paramsClose)
      .split(',')
      .map((p) => p.replace(/\\\r?\n/g, ' ').trim())
      .filter((p) => p.length > 0);
    const variadic = params.length > 0 && params[params.length - 1].endsWith('...');
    if (variadic) params.pop();
    if (!params.every((p) => /^[A-Za-z_]\w*$/.test(p))) continue;
    const body = masked
      .slice(paramsClose + 1, end)
      .replace(/\\\r?\n/g, '\n')
      .trim();
    out.push({ name: m[1], params, variadic, body, offset: start, line: positionAt(source, start).line });
  }
  return out;
}

/** `#define NAME(`: the name and its parameter list's `(`, with no blank between. */
const FUNCTION_DEFINE = /[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(/y;

/** The macros among `macros` whose expansion may launch a kernel: `launches` says it of a body, directly; a macro that uses one of them launches too. */
export function launchingMacros(
  macros: ReadonlyMap<string, MacroDefinition>,
  launches: (body: string) => boolean,
): Map<string, MacroDefinition> {
  const found = new Map<string, MacroDefinition>();
  for (const [name, def] of macros) if (launches(def.body)) found.set(name, def);
  // Then the macros that use one, until no more are found (a chain of macros is short).
  for (let grew = found.size > 0; grew;) {
    grew = false;
    for (const [name, def] of macros) {
      if (found.has(name)) continue;
      if (usesAny(def.body, found)) {
        found.set(name, def);
        grew = true;
      }
    }
  }
  return found;
}

function usesAny(body: string, names: ReadonlyMap<string, unknown>): boolean {
  for (const name of names.keys()) if (wordIndex(body, name, 0) >= 0) return true;
  return false;
}

/** The offset of the first whole-word `name` in `text` at or after `from`, or -1. */
function wordIndex(text: string, name: string, from: number): number {
  for (let i = text.indexOf(name, from); i >= 0; i = text.indexOf(name, i + 1)) {
    if (!isIdentCharAt(text, i - 1) && !isIdentCharAt(text, i + name.length)) return i;
  }
  return -1;
}

/** Uses of the macros in `names` in the masked text, outside directives (a use in another macro's body is read where that one is used). */
export function findMacroUses(source: SourceText, names: ReadonlyMap<string, MacroDefinition>): MacroUse[] {
  const { masked } = source;
  const directives = findDirectiveRanges(source);
  const uses: MacroUse[] = [];
  for (const [name, def] of names) {
    for (let i = wordIndex(masked, name, 0); i >= 0; i = wordIndex(masked, name, i + name.length)) {
      if (inRanges(directives, i)) continue;
      const open = skipBlanks(masked, i + name.length);
      if (masked[open] !== '(') continue;
      const args = readMacroArgs(masked, open);
      if (!args) continue;
      if (!argsFit(def, args.args.length)) continue;
      uses.push({ name, start: i, nameEnd: i + name.length, end: args.end, args: args.args });
    }
  }
  return uses.sort((a, b) => a.start - b.start);
}

function argsFit(def: MacroDefinition, count: number): boolean {
  // `F()` passes one empty argument to a macro of one parameter, none to one of none.
  return def.variadic
    ? count >= def.params.length
    : count === def.params.length || (def.params.length === 0 && count === 1);
}

function skipBlanks(text: string, i: number): number {
  while (i < text.length && isSpaceAt(text, i)) i++;
  return i;
}

/**
 * A macro use's arguments, from its `(`: split at commas outside parentheses (only parentheses
 * group a macro's arguments: `F(a<b, c>)` has two), each trimmed; and one past the `)`.
 */
export function readMacroArgs(text: string, open: number, limit = text.length): { args: string[]; end: number } | null {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c === OPEN) depth++;
    else if (c === CLOSE) {
      if (--depth === 0) {
        args.push(text.slice(start, i).trim());
        return { args: args.length === 1 && args[0] === '' ? [''] : args, end: i + 1 };
      }
    } else if (c === COMMA && depth === 1) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  return null;
}

const OPEN = 40;
const CLOSE = 41;
const COMMA = 44;

/** Nesting and size limits: real macro chains are a few levels deep and a few KB long. */
const MAX_DEPTH = 16;
const MAX_LENGTH = 256 * 1024;

/**
 * What a use of `def` with `args` expands to, macros in its result expanded in turn (a macro is not
 * expanded again inside its own expansion). Null when the expansion runs past the limits.
 */
export function expandUse(
  def: MacroDefinition,
  args: readonly string[],
  macros: ReadonlyMap<string, MacroDefinition>,
): string | null {
  const budget = { left: MAX_LENGTH };
  return expandOne(def, args, macros, new Set(), budget, 0);
}

function expandOne(
  def: MacroDefinition,
  args: readonly string[],
  macros: ReadonlyMap<string, MacroDefinition>,
  active: ReadonlySet<string>,
  budget: { left: number },
  depth: number,
): string | null {
  if (depth > MAX_DEPTH) return null;
  const substituted = substitute(def, args);
  budget.left -= substituted.length;
  if (budget.left < 0) return null;
  const inner = new Set(active).add(def.name);
  return rescan(substituted, macros, inner, budget, depth + 1);
}

/** `text` with the uses of `macros` not in `active` expanded. */
function rescan(
  text: string,
  macros: ReadonlyMap<string, MacroDefinition>,
  active: ReadonlySet<string>,
  budget: { left: number },
  depth: number,
): string | null {
  let out = '';
  let copied = 0;
  IDENTIFIER.lastIndex = 0;
  for (let m = IDENTIFIER.exec(text); m; m = IDENTIFIER.exec(text)) {
    const def = macros.get(m[0]);
    if (!def || active.has(m[0])) continue;
    const open = skipBlanks(text, m.index + m[0].length);
    if (text[open] !== '(') continue;
    const args = readMacroArgs(text, open);
    if (!args || !argsFit(def, args.args.length)) continue;
    const expanded = expandOne(def, args.args, macros, active, budget, depth);
    if (expanded === null) return null;
    out += text.slice(copied, m.index) + expanded;
    copied = args.end;
    IDENTIFIER.lastIndex = args.end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** Global: each scan sets `lastIndex`. */
const IDENTIFIER = /[A-Za-z_]\w*/g;

/** The body with its parameters replaced: `#p` becomes a string, `a ## b` one token. */
function substitute(def: MacroDefinition, args: readonly string[]): string {
  const value = (name: string): string | undefined => {
    if (name === '__VA_ARGS__' && def.variadic) return args.slice(def.params.length).join(', ');
    const k = def.params.indexOf(name);
    return k < 0 ? undefined : (args[k] ?? '');
  };
  const body = def.body;
  let out = '';
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === '#' && body[i + 1] !== '#' && (i === 0 || body[i - 1] !== '#')) {
      // Stringizing `#param`: a string literal (its content does not matter here).
      const j = skipBlanks(body, i + 1);
      const name = /^[A-Za-z_]\w*/.exec(body.slice(j, j + 64))?.[0];
      if (name && value(name) !== undefined) {
        out += '""';
        i = j + name.length;
        continue;
      }
    }
    if (/[A-Za-z_]/.test(c) && !isIdentCharAt(body, i - 1)) {
      const name = /^[A-Za-z_]\w*/.exec(body.slice(i, i + 128))![0];
      const v = value(name);
      out += v ?? name;
      i += name.length;
      continue;
    }
    out += c;
    i++;
  }
  // Token pasting: `a ## b` is `ab`.
  return out.includes('##') ? out.replace(/\s*##\s*/g, '') : out;
}
