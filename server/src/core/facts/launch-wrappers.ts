/**
 * Launch wrappers: functions that launch the kernel, or with the block size, they are given
 * (`launch(kernel, grid, block, smem, stream, args...)`, `executeKernel(kernel, args, n, 128)`,
 * `LaunchN<ITEMS, BLOCK = 256>(n, lambda)`), and classes whose call operator launches with what
 * their constructor was given (`Launcher{grid, block, smem, stream}(kernel, args...)`).
 *
 * A launch in a function body whose kernel, block, shared memory or template arguments name the
 * function's parameters makes the function a wrapper; so does a call of a wrapper that passes
 * them on. At each call of a wrapper, its parameters are bound to the call's arguments (read with
 * the constants in view at the call) or their defaults, and the launch is read again in the
 * wrapper's body with those values: the call is a launch of the kernel it passes, reported there.
 *
 * Plain data in, plain data out: the definitions are kept in the workspace index for other files.
 */
import type { Dim3, LaunchVia, ResolvedValue } from '../types';
import {
  isIdentCharAt,
  isSpaceAt,
  lastComponent,
  positionAt,
  splitTopLevel,
  type SourceText,
} from '../text/source-text';
import {
  collectConstants,
  explainNames,
  makeLookup,
  resolveDim3,
  tableAt,
  type ConstantDefinition,
  type ConstantTable,
  type Dim3Definition,
} from '../text/constant-table';
import { evaluateInteger, type Lookup } from '../text/const-eval';
import { findDirectiveRanges, inRanges } from '../text/preprocessor-lines';
import { memoByObject } from '../incremental/kept-tables';

/** A launch as written, before its values are read. */
export interface LaunchTexts {
  via: LaunchVia;
  kernel: string;
  templateArgs: string[] | null;
  grid?: string;
  block?: string;
  smem?: string;
  stream?: string;
}

export interface WrapperParam {
  name: string;
  /** The default argument as written, or null. */
  defaultText: string | null;
  /** A parameter pack (`Args... args`): takes any number of arguments. */
  pack?: boolean;
}

/** A constant table as plain data (JSON-safe: the index keeps copies of it). */
export interface PlainTable {
  constants: Array<[string, ConstantDefinition]>;
  dim3s: Array<[string, Dim3Definition]>;
  shadowed: Array<[string, string]>;
}

/** An assignment to a parameter in the wrapper's body: under `if (guard)`, of `value` (null: not a plain `=`). */
export interface ParamAssignment {
  guard: string | null;
  value: string | null;
}

/** What a wrapper does with its parameters: launches, or passes them to another wrapper. */
export type WrapperStep =
  | ({ kind: 'launch' } & LaunchTexts)
  | { kind: 'call'; callee: string; templateArgs: string[] | null; ctorArgs: string[] | null; args: string[] };

export interface WrapperDefinition {
  /** What calls name it by: the function's last name component, or the class's name for a call operator. */
  name: string;
  /** As written at the definition: `dh::LaunchN`, `Context::executeKernel`, `Launcher::operator()`. */
  written: string;
  /** One function: its steps are separate definitions with the same `fn`. */
  fn: string;
  templateParams: WrapperParam[];
  params: WrapperParam[];
  /** A class whose call operator this is: its constructors and the members each initializes from what. */
  constructors: Array<{ params: WrapperParam[]; members: Array<[string, string]> }> | null;
  /** The body's constants where the step is written (the parameters shadowed). */
  locals: PlainTable;
  assigned: Array<[string, ParamAssignment[]]>;
  step: WrapperStep;
  /** The parameters, template parameters and members what the step launches depends on (its kernel, block, shared memory). */
  relevant: string[];
  /** 0-based line of the function's name. */
  line: number;
  /** The file it is in, for notes (set by the workspace index). */
  origin?: string;
}

/** A wrapper with the constants of its own file, to read its body with. */
export interface WrapperRef {
  def: WrapperDefinition;
  tables: readonly ConstantTable[];
  lookup: Lookup;
}

/** The function a launch is written in, with what a wrapper needs of it. */
export interface NamedFunction {
  /** As written: `dh::LaunchN`, `operator()`. */
  written: string;
  nameStart: number;
  open: number;
  close: number;
  params: WrapperParam[];
  templateParams: WrapperParam[];
  /** For a member function written in its class: the class's name and braces. */
  className: string | null;
  classOpen: number;
  classClose: number;
}

/**
 * The innermost named function around `at` (a lambda or a control statement's block is passed
 * through: a launch in it still reads the function's parameters), or null at file scope.
 */
export function enclosingNamedFunction(source: SourceText, at: number): NamedFunction | null {
  const { masked } = source;
  for (let open = enclosingOpen(masked, at); open >= 0; open = enclosingOpen(masked, open)) {
    const head = functionHead(masked, open);
    if (head === 'class' || head === null) return null;
    if (head === 'block') continue;
    const close = matchingBrace(masked, open);
    const cls = classAround(masked, open);
    return {
      written: head.name,
      nameStart: head.nameStart,
      open,
      close: close < 0 ? masked.length : close,
      params: readParams(source, head.paramsOpen, head.paramsClose),
      templateParams: readTemplateParams(source, head.nameStart),
      className: cls?.name ?? null,
      classOpen: cls?.open ?? -1,
      classClose: cls?.close ?? -1,
    };
  }
  return null;
}

/** The `{` of the innermost brace block around `at` (not counting one opening at `at`), or -1. */
function enclosingOpen(masked: string, at: number): number {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const c = masked.charCodeAt(i);
    if (c === CLOSE_BRACE) depth++;
    else if (c === OPEN_BRACE) {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

function matchingBrace(masked: string, open: number): number {
  let depth = 0;
  for (let i = open; i < masked.length; i++) {
    const c = masked.charCodeAt(i);
    if (c === OPEN_BRACE) depth++;
    else if (c === CLOSE_BRACE && --depth === 0) return i;
  }
  return -1;
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const CONTROL: ReadonlySet<string> = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'sizeof',
  'decltype',
  'return',
  'alignas',
  '__launch_bounds__',
]);
const TRAILERS: ReadonlySet<string> = new Set([
  'const',
  'noexcept',
  'override',
  'final',
  'mutable',
  'volatile',
  '__host__',
  '__device__',
  '__forceinline__',
  'inline',
]);

/**
 * What opens the block at `open`: a named function's body (its name and parameter list), a class
 * or namespace ('class': nothing further out is read), or another block ('block': a lambda, a
 * control statement, a plain block).
 */
function functionHead(
  masked: string,
  open: number,
): { name: string; nameStart: number; paramsOpen: number; paramsClose: number } | 'class' | 'block' | null {
  let j = open - 1;
  for (;;) {
    while (j >= 0 && isSpaceAt(masked, j)) j--;
    let k = j;
    while (k >= 0 && isIdentCharAt(masked, k)) k--;
    const word = masked.slice(k + 1, j + 1);
    if (word && TRAILERS.has(word)) {
      j = k;
      continue;
    }
    if (word && /^(class|struct|union|namespace|enum)$/.test(word)) return 'class';
    break;
  }
  if (masked[j] !== ')') {
    // `class Name : public Base {`, `struct Name {`: a class; `else {`, `= {`, `do {`: a block.
    const line = masked.slice(Math.max(0, j - 200), j + 1);
    if (/\b(?:class|struct|union|namespace)\b[^;{}()]*$/.test(line)) return 'class';
    return 'block';
  }
  const paramsClose = j;
  const paramsOpen = matchingParenBackward(masked, j);
  if (paramsOpen < 0) return null;
  let e = paramsOpen - 1;
  while (e >= 0 && isSpaceAt(masked, e)) e--;
  // `operator()(...)`
  if (masked[e] === ')' && masked[e - 1] === '(') {
    let s = e - 2;
    while (s >= 0 && isSpaceAt(masked, s)) s--;
    if (masked.slice(s - 7, s + 1) === 'operator') {
      const start = qualifiedStart(masked, s - 7);
      return {
        name: `${masked.slice(start, s - 7).replace(/\s+/g, '')}operator()`,
        nameStart: start,
        paramsOpen,
        paramsClose,
      };
    }
  }
  if (masked[e] === ']' || masked[e] === '(' || masked[e] === ',' || masked[e] === '=') return 'block';
  let s = e;
  while (s >= 0 && isIdentCharAt(masked, s)) s--;
  const word = masked.slice(s + 1, e + 1);
  if (!/^[A-Za-z_]\w*$/.test(word) || CONTROL.has(word)) return 'block';
  // A lambda's attributes: `[=] __device__ (size_t i) {`.
  if (word === '__device__' || word === '__host__' || word === 'mutable') return 'block';
  const start = qualifiedStart(masked, s + 1);
  return { name: masked.slice(start, e + 1).replace(/\s+/g, ''), nameStart: start, paramsOpen, paramsClose };
}

/** Where `a::b::name` starts, given where `name` starts. */
function qualifiedStart(masked: string, at: number): number {
  let start = at;
  for (;;) {
    let i = start - 1;
    while (i >= 0 && isSpaceAt(masked, i)) i--;
    if (masked[i] !== ':' || masked[i - 1] !== ':') return start;
    i -= 2;
    while (i >= 0 && isSpaceAt(masked, i)) i--;
    // `A<T>::name`: the template arguments of a class written out of it.
    if (masked[i] === '>') {
      let depth = 0;
      for (; i >= 0; i--) {
        if (masked[i] === '>') depth++;
        else if (masked[i] === '<' && --depth === 0) break;
      }
      i--;
    }
    let k = i;
    while (k >= 0 && isIdentCharAt(masked, k)) k--;
    if (k === i) return start;
    start = k + 1;
  }
}

function matchingParenBackward(masked: string, close: number): number {
  let depth = 0;
  for (let i = close; i >= 0; i--) {
    const c = masked[i];
    if (c === ')') depth++;
    else if (c === '(' && --depth === 0) return i;
    else if (c === ';' || c === '{' || c === '}') return -1;
  }
  return -1;
}

/** The class whose body holds the block at `open`, when that is the next block out. */
function classAround(masked: string, open: number): { name: string; open: number; close: number } | null {
  const outer = enclosingOpen(masked, open);
  if (outer < 0) return null;
  const before = masked.slice(Math.max(0, outer - 300), outer);
  const m =
    /\b(?:class|struct)\s+(?:__\w+\s+|alignas\s*\([^)]*\)\s*)*([A-Za-z_]\w*)(?:\s+final)?\s*(?::[^;{}]*)?$/.exec(
      before,
    );
  if (!m) return null;
  const close = matchingBrace(masked, outer);
  return { name: m[1], open: outer, close: close < 0 ? masked.length : close };
}

/** A parameter list's names and defaults: `(int n, dim3 block = dim3(256), Args... args)`. */
function readParams(source: SourceText, open: number, close: number): WrapperParam[] {
  const params: WrapperParam[] = [];
  for (const [a, b] of splitTopLevel(source.masked, open + 1, close)) {
    if (b <= a) continue;
    const text = source.masked.slice(a, b);
    const eq = topLevelEquals(text);
    const decl = (eq < 0 ? text : text.slice(0, eq)).replace(/\[[^\]]*\]/g, '').trim();
    if (decl === 'void') continue;
    // `void (*k)(float*)`: a function pointer's name is in its first parentheses.
    const name = /\(\s*[*&]\s*([A-Za-z_]\w*)\s*\)\s*\(/.exec(decl)?.[1] ?? /([A-Za-z_]\w*)\s*$/.exec(decl)?.[1];
    // A parameter not read keeps its place (the arguments are matched by position), nameless.
    const named = name !== undefined && /[\s*&.)]/.test(decl);
    params.push({
      name: named ? name : '',
      defaultText: eq < 0 ? null : source.text.slice(a + eq + 1, b).trim(),
      ...(decl.includes('...') ? { pack: true } : {}),
    });
  }
  return params;
}

/** The first `=` of a declaration outside brackets that is not part of `==`, `<=`, `>=`, `!=`. */
function topLevelEquals(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{' || c === '<') depth++;
    else if (c === ')' || c === ']' || c === '}' || c === '>') depth--;
    else if (c === '=' && depth === 0 && text[i + 1] !== '=' && !'<>!='.includes(text[i - 1] ?? '')) return i;
  }
  return -1;
}

/** `template <int A = 8, int B = 256, typename L>` before the declaration whose name starts at `nameStart`. */
function readTemplateParams(source: SourceText, nameStart: number): WrapperParam[] {
  const { masked } = source;
  // The declaration starts after the previous `;`, `{`, `}` or access label.
  let i = nameStart - 1;
  let angle = 0;
  for (; i >= 0; i--) {
    const c = masked[i];
    if (c === '>') angle++;
    else if (c === '<') angle--;
    else if (angle <= 0 && (c === ';' || c === '{' || c === '}')) break;
    else if (angle <= 0 && c === ':' && masked[i - 1] !== ':' && masked[i + 1] !== ':') break;
  }
  const head = masked.slice(i + 1, nameStart);
  const m = /\btemplate\s*</.exec(head);
  if (!m) return [];
  const open = i + 1 + m.index + m[0].length - 1;
  let depth = 0;
  let close = -1;
  for (let k = open; k < nameStart; k++) {
    if (masked[k] === '<') depth++;
    else if (masked[k] === '>' && --depth === 0) {
      close = k;
      break;
    }
  }
  if (close < 0) return [];
  const out: WrapperParam[] = [];
  for (const [a, b] of splitTopLevel(masked, open + 1, close)) {
    if (b <= a) continue;
    const text = masked.slice(a, b);
    const eq = topLevelEquals(text);
    const decl = (eq < 0 ? text : text.slice(0, eq)).trim();
    const name = /([A-Za-z_]\w*)\s*$/.exec(decl)?.[1] ?? '';
    out.push({
      name: /\s/.test(decl) ? name : '',
      defaultText: eq < 0 ? null : source.text.slice(a + eq + 1, b).trim(),
    });
  }
  return out;
}

/** The words of `text` that are names (for which parameters a launch mentions). */
function namesIn(text: string | undefined): string[] {
  return text ? (text.match(WORDS) ?? []) : [];
}

const WORDS = /[A-Za-z_]\w*/g;

/**
 * The wrapper a launch (or a wrapper call) at `at` makes of its function, or null when what it
 * launches names none of the function's parameters (nor, in a call operator, members its
 * constructors set).
 */
export function wrapperAt(
  source: SourceText,
  at: number,
  step: WrapperStep,
  relevantTexts: ReadonlyArray<string | undefined>,
): WrapperDefinition | null {
  const fn = enclosingNamedFunction(source, at);
  if (!fn) return null;
  const names = new Set<string>();
  for (const p of fn.params) names.add(p.name);
  for (const p of fn.templateParams) if (p.name) names.add(p.name);
  const constructors =
    fn.written.endsWith('operator()') && fn.className
      ? readConstructors(source, fn.className, fn.classOpen, fn.classClose)
      : null;
  for (const c of constructors ?? []) for (const [member] of c.members) names.add(member);
  const relevant = [...new Set(relevantTexts.flatMap((t) => namesIn(t).filter((n) => names.has(n))))];
  if (relevant.length === 0) return null;
  const parameters = fn.params.map((p) => p.name).filter((n) => n !== '');
  const table = tableAt(
    collectConstants(source, fn.open, fn.close, {
      localsMustBeConst: false,
      parameters,
      parameterNote: (n) => `\`${n}\` is a parameter of \`${fn.written}\``,
    }),
    at,
  );
  for (const p of [...fn.params, ...fn.templateParams]) {
    table.constants.delete(p.name);
    table.dim3s.delete(p.name);
    table.shadowed?.delete(p.name);
  }
  const name = fn.written.endsWith('operator()') && fn.className ? fn.className : lastComponent(fn.written);
  return {
    name,
    written: fn.written,
    fn: functionKey(fn.written, positionAt(source, fn.nameStart).line),
    templateParams: fn.templateParams,
    params: fn.params,
    constructors,
    locals: plainTable(table),
    assigned: paramAssignments(source, fn),
    step,
    relevant,
    line: positionAt(source, fn.nameStart).line,
  };
}

/** Which function a definition's step is in: steps of one function share the key. */
function functionKey(written: string, line: number): string {
  return `${written}@${line}`;
}

/** `def` as read from a text `delta` lines further down (a chunk that moved). */
export function movedWrapper(def: WrapperDefinition, delta: number): WrapperDefinition {
  if (delta === 0) return def;
  const constants = def.locals.constants.map(([name, d]): [string, ConstantDefinition] => [
    name,
    d.line === undefined ? d : { ...d, line: d.line + delta },
  ]);
  return {
    ...def,
    line: def.line + delta,
    fn: functionKey(def.written, def.line + delta),
    locals: { ...def.locals, constants },
  };
}

function plainTable(table: ConstantTable): PlainTable {
  return { constants: [...table.constants], dim3s: [...table.dim3s], shadowed: [...(table.shadowed ?? [])] };
}

/** A plain table as a constant table, made once per table. */
const tableOf = memoByObject('wrapper locals', (plain: PlainTable): ConstantTable => ({
  constants: new Map(plain.constants),
  dim3s: new Map(plain.dim3s),
  shadowed: new Map(plain.shadowed),
}));

/** A class's constructors written in its body: their parameters and what each member initializer reads. */
function readConstructors(
  source: SourceText,
  className: string,
  open: number,
  close: number,
): Array<{ params: WrapperParam[]; members: Array<[string, string]> }> {
  const { masked } = source;
  const out: Array<{ params: WrapperParam[]; members: Array<[string, string]> }> = [];
  const re = new RegExp(String.raw`(?<![\w:~])${className}\s*\(`, 'g');
  re.lastIndex = open + 1;
  const body = masked.slice(0, close);
  for (let m = re.exec(body); m; m = re.exec(body)) {
    const paramsOpen = m.index + m[0].length - 1;
    const paramsClose = matchingParen(masked, paramsOpen);
    if (paramsClose < 0) continue;
    let i = skipBlanks(masked, paramsClose + 1);
    const members: Array<[string, string]> = [];
    if (masked[i] === ':') {
      // `: grid_{g, 1, 1}, block_(b) {`
      i = skipBlanks(masked, i + 1);
      for (;;) {
        const member = /^[A-Za-z_]\w*/.exec(masked.slice(i, i + 128))?.[0];
        if (!member) break;
        const o = skipBlanks(masked, i + member.length);
        if (masked[o] !== '(' && masked[o] !== '{') break;
        const c = masked[o] === '(' ? matchingParen(masked, o) : matchingBrace(masked, o);
        if (c < 0) break;
        members.push([member, source.text.slice(o + 1, c).trim()]);
        i = skipBlanks(masked, c + 1);
        if (masked[i] !== ',') break;
        i = skipBlanks(masked, i + 1);
      }
    }
    if (masked[i] !== '{' && members.length === 0) continue;
    out.push({ params: readParams(source, paramsOpen, paramsClose), members });
  }
  return out;
}

function skipBlanks(text: string, i: number): number {
  while (i < text.length && isSpaceAt(text, i)) i++;
  return i;
}

/** The `)` matching the `(` at `open`, through brackets of every kind (a lambda's braces in an argument), or -1. */
export function matchingParen(masked: string, open: number): number {
  let depth = 0;
  for (let i = open; i < masked.length; i++) {
    const c = masked[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (--depth === 0) return c === ')' ? i : -1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/** How the function's body assigns its parameters (`if (bs == -1) bs = kDefault;`). */
function paramAssignments(source: SourceText, fn: NamedFunction): Array<[string, ParamAssignment[]]> {
  const { masked } = source;
  const body = masked.slice(fn.open + 1, fn.close);
  const out: Array<[string, ParamAssignment[]]> = [];
  for (const p of fn.params) {
    if (!body.includes(p.name)) continue;
    const re = new RegExp(
      String.raw`(?<![\w.>])${p.name}\s*((?:[-+*/%&|^]|<<|>>)?=)(?!=)|(?:\+\+|--)\s*${p.name}\b|(?<![\w.>])${p.name}\s*(?:\+\+|--)|&\s*${p.name}\b`,
      'g',
    );
    const found: ParamAssignment[] = [];
    for (let m = re.exec(body); m; m = re.exec(body)) {
      const at = fn.open + 1 + m.index;
      if (m[1] !== '=') {
        found.push({ guard: null, value: null });
        continue;
      }
      const end = masked.indexOf(';', at);
      const value = end < 0 ? null : source.text.slice(at + m[0].length, end).trim();
      found.push({ guard: guardOf(source, at), value });
    }
    if (found.length) out.push([p.name, found]);
  }
  return out;
}

/** The condition of the `if` whose only statement starts at `at` (`if (c) x = 1;`, `if (c) { x = 1; }`), or null. */
function guardOf(source: SourceText, at: number): string | null {
  const { masked } = source;
  let i = at - 1;
  while (i >= 0 && isSpaceAt(masked, i)) i--;
  if (masked[i] === '{') {
    // The block must hold this one statement.
    const close = matchingBrace(masked, i);
    const end = masked.indexOf(';', at);
    if (close < 0 || end < 0 || masked.slice(end + 1, close).trim() !== '') return null;
    i--;
    while (i >= 0 && isSpaceAt(masked, i)) i--;
  }
  if (masked[i] !== ')') return null;
  const open = matchingParenBackward(masked, i);
  if (open < 0) return null;
  let w = open - 1;
  while (w >= 0 && isSpaceAt(masked, w)) w--;
  if (masked.slice(w - 1, w + 1) !== 'if' || isIdentCharAt(masked, w - 2)) return null;
  return source.text.slice(open + 1, i).trim();
}

/** A call of a wrapper, as written. */
export interface WrapperCall {
  /** The name calls are matched by (last component). */
  name: string;
  /** As written: `dh::LaunchN`, `ctx.run`. */
  written: string;
  start: number;
  nameEnd: number;
  end: number;
  templateArgs: string[] | null;
  /** `Launcher{grid, block}(...)`: the constructor's arguments. */
  ctorArgs: string[] | null;
  args: string[];
}

/** The calls in the text of the wrappers in `wrappers` (by name), outside directives, not their definitions or declarations. */
export function findWrapperCalls(
  source: SourceText,
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>,
): WrapperCall[] {
  const { masked, text } = source;
  const directives = findDirectiveRanges(source);
  const calls: WrapperCall[] = [];
  for (const [name, refs] of wrappers) {
    const functor = refs.some((r) => r.def.constructors !== null);
    for (let i = wordIndex(masked, name, 0); i >= 0; i = wordIndex(masked, name, i + name.length)) {
      if (inRanges(directives, i)) continue;
      const start = callStart(masked, i);
      if (start < 0) continue;
      let j = skipBlanks(masked, i + name.length);
      let templateArgs: string[] | null = null;
      if (masked[j] === '<') {
        const close = matchingAngle(masked, j);
        if (close < 0) continue;
        templateArgs = splitTopLevel(masked, j + 1, close).map(([a, b]) =>
          text.slice(a, b).replace(/\s+/g, ' ').trim(),
        );
        j = skipBlanks(masked, close + 1);
      }
      let ctorArgs: string[] | null = null;
      if (functor && (masked[j] === '{' || masked[j] === '(')) {
        const close = masked[j] === '{' ? matchingBrace(masked, j) : matchingParen(masked, j);
        const next = close < 0 ? -1 : skipBlanks(masked, close + 1);
        if (next >= 0 && masked[next] === '(') {
          ctorArgs = splitTopLevel(masked, j + 1, close).map(([a, b]) => text.slice(a, b).trim());
          j = next;
        }
      }
      if (masked[j] !== '(') continue;
      const close = matchingParen(masked, j);
      if (close < 0) continue;
      // A definition or a declaration of it: `name(params) {`, `name(params) const;` after a type.
      const after = skipBlanks(masked, close + 1);
      if (masked[after] === '{' || (masked[after] === ':' && masked[after + 1] !== ':')) continue;
      const args = splitTopLevel(masked, j + 1, close)
        .map(([a, b]) => text.slice(a, b).trim())
        .filter((a, k, all) => a !== '' || all.length > 1);
      calls.push({
        name,
        written: masked.slice(start, i + name.length).replace(/\s+/g, ''),
        start,
        nameEnd: i + name.length,
        end: close + 1,
        templateArgs,
        ctorArgs,
        args,
      });
    }
  }
  return calls.sort((a, b) => a.start - b.start);
}

/** What may stand before a call's name: an operator, `(`, `,`, `;`, a brace, `return`; not a type (a declaration). Returns where the qualified name starts, or -1. */
function callStart(masked: string, at: number): number {
  const start = qualifiedStart(masked, at);
  let i = start - 1;
  while (i >= 0 && isSpaceAt(masked, i)) i--;
  if (i < 0) return start;
  const c = masked[i];
  if (c === '.' || (c === '>' && masked[i - 1] === '-')) {
    // `ctx.run(...)`, `ctx->run(...)`: the object's name starts the call.
    let k = c === '.' ? i - 1 : i - 2;
    while (k >= 0 && isSpaceAt(masked, k)) k--;
    while (k >= 0 && (isIdentCharAt(masked, k) || masked[k] === '.' || masked[k] === ']' || masked[k] === '[')) k--;
    return k + 1;
  }
  if (isIdentCharAt(masked, i)) {
    let k = i;
    while (k >= 0 && isIdentCharAt(masked, k)) k--;
    const word = masked.slice(k + 1, i + 1);
    return CALL_AFTER.has(word) ? start : -1;
  }
  // `Type* name(`, `Type& name(`, `>` of a template return type: a declaration.
  if (c === '*' || c === '&' || c === '>' || c === '~') return c === '&' && masked[i - 1] === '&' ? start : -1;
  return start;
}

const CALL_AFTER: ReadonlySet<string> = new Set([
  'return',
  'else',
  'do',
  'case',
  'throw',
  'co_return',
  'co_await',
  'co_yield',
]);

function matchingAngle(masked: string, open: number): number {
  let depth = 0;
  for (let i = open; i < masked.length; i++) {
    const c = masked[i];
    if (c === '<') depth++;
    else if (c === '>') {
      if (--depth === 0) return i;
    } else if (c === ';' || c === '{' || c === '}') return -1;
  }
  return -1;
}

function wordIndex(text: string, name: string, from: number): number {
  for (let i = text.indexOf(name, from); i >= 0; i = text.indexOf(name, i + 1)) {
    if (!isIdentCharAt(text, i - 1) && !isIdentCharAt(text, i + name.length)) return i;
  }
  return -1;
}

/** The kernel a launch names, with its template arguments' values where they are constants. */
export interface KernelBinding {
  name: string;
  templateArgs: string[] | null;
  templateArgValues: Array<number | null> | null;
  calledThrough: string | null;
}

/** Where a call is read: the constants in view, and how an argument names a kernel there. */
export interface CallScope {
  tables: readonly ConstantTable[];
  lookup: Lookup;
  kernelOf: (text: string) => KernelBinding | null;
  /** 0-based line of the call, for notes. */
  line: number;
}

/** A launch a wrapper call makes, its values read. */
export interface WrapperLaunch {
  via: LaunchVia;
  kernel: KernelBinding;
  grid: ResolvedValue<Dim3>;
  block: ResolvedValue<Dim3>;
  dynamicSmem: ResolvedValue<number>;
  stream: string | null;
  /** The wrapper as written at its definition. */
  wrapper: string;
  /** The kernel as the wrapper's own launch writes it (a parameter's name when the call passes the kernel). */
  writtenKernel: string;
  /** Read through a wrapper that calls another (not the wrapper whose body launches). */
  nested: boolean;
}

/** Calls of wrappers inside wrappers nest this deep at most (a recursive wrapper stops there). */
const MAX_DEPTH = 4;

/**
 * The launches a call makes: the wrapper it calls (of the definitions by that name, the one
 * function whose parameters fit the arguments; none when several do), its parameters bound to
 * the arguments, each step read with them.
 */
export function resolveWrapperCall(
  call: Pick<WrapperCall, 'name' | 'templateArgs' | 'ctorArgs' | 'args'>,
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>,
  scope: CallScope,
  depth = 0,
): WrapperLaunch[] {
  if (depth > MAX_DEPTH) return [];
  const steps = calledFunction(call, wrappers);
  if (!steps) return [];
  const binding = bind(steps[0], call, scope);
  if (!binding) return [];
  const out: WrapperLaunch[] = [];
  for (const ref of steps) {
    const tables = [binding.table, tableOf(ref.def.locals), ...ref.tables];
    const lookup = makeLookup(tables, ref.lookup);
    const step = ref.def.step;
    if (step.kind === 'launch') {
      out.push(readLaunch(step, tables, lookup, binding.kernels, ref.def.written));
    } else {
      const inner: CallScope = {
        tables,
        lookup,
        line: scope.line,
        kernelOf: (text) => binding.kernels.get(text.trim()) ?? kernelIn(text, lookup),
      };
      for (const launch of resolveWrapperCall(
        { name: lastComponent(step.callee), templateArgs: step.templateArgs, ctorArgs: step.ctorArgs, args: step.args },
        wrappers,
        inner,
        depth + 1,
      ))
        out.push({ ...launch, wrapper: ref.def.written, nested: true });
    }
  }
  return out;
}

/** The steps of the one wrapper function a call can be (its arguments fit), or null when none or several can. */
function calledFunction(
  call: Pick<WrapperCall, 'name' | 'ctorArgs' | 'args'>,
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>,
): WrapperRef[] | null {
  const exact = new Map<string, WrapperRef[]>();
  // Fewer arguments than the definition has parameters without defaults: a declaration elsewhere (a header) gives the rest defaults.
  const short = new Map<string, WrapperRef[]>();
  for (const ref of wrappers.get(call.name) ?? []) {
    const fit = fits(ref.def, call);
    if (fit === 'no') continue;
    const into = fit === 'yes' ? exact : short;
    const key = `${ref.def.origin ?? ''}|${ref.def.fn}`;
    into.set(key, [...(into.get(key) ?? []), ref]);
  }
  const chosen = exact.size ? exact : short;
  if (chosen.size !== 1) return null;
  const [steps] = chosen.values();
  return steps;
}

/** The arguments of a call that what the called wrapper launches depends on (see WrapperDefinition.relevant). */
export function relevantArguments(
  call: Pick<WrapperCall, 'name' | 'templateArgs' | 'ctorArgs' | 'args'>,
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>,
): string[] {
  const steps = calledFunction(call, wrappers);
  if (!steps) return [];
  const out: string[] = [];
  for (const { def } of steps) {
    // The kernel passes through when the argument is a name (a parameter handed on), not a kernel named at the call.
    const kernelParam = def.step.kind === 'launch' ? def.step.kernel : null;
    for (const name of def.relevant) {
      const t = def.templateParams.findIndex((p) => p.name === name);
      if (t >= 0 && call.templateArgs?.[t] !== undefined) out.push(call.templateArgs[t]);
      const k = def.params.findIndex((p) => p.name === name);
      if (k >= 0 && call.args[k] !== undefined && (name !== kernelParam || /^[A-Za-z_]\w*$/.test(call.args[k])))
        out.push(call.args[k]);
      for (const ctor of def.constructors ?? []) {
        const init = ctor.members.find(([member]) => member === name)?.[1];
        if (init === undefined) continue;
        ctor.params.forEach((p, j) => {
          if (call.ctorArgs?.[j] !== undefined && namesIn(init).includes(p.name)) out.push(call.ctorArgs[j]);
        });
      }
    }
  }
  return out;
}

/** The call's arguments fit the function's parameters (and, for a class, one of its constructors). */
function fits(def: WrapperDefinition, call: Pick<WrapperCall, 'args' | 'ctorArgs'>): 'yes' | 'short' | 'no' {
  if ((def.constructors !== null) !== (call.ctorArgs !== null)) return 'no';
  if (call.ctorArgs && !def.constructors!.some((c) => arity(c.params, call.ctorArgs!.length))) return 'no';
  if (arity(def.params, call.args.length)) return 'yes';
  return call.args.length < def.params.length && !def.params.some((p) => p.pack) ? 'short' : 'no';
}

function arity(params: readonly WrapperParam[], count: number): boolean {
  const pack = params.some((p) => p.pack);
  const required = params.filter((p) => p.defaultText === null && !p.pack).length;
  return count >= required && (pack || count <= params.length);
}

interface Binding {
  table: ConstantTable;
  /** Parameters holding a kernel (a function the call passes). */
  kernels: Map<string, KernelBinding>;
}

/** The wrapper's parameters (template parameters, parameters, a class's members) as the call sets them. */
function bind(
  ref: WrapperRef,
  call: Pick<WrapperCall, 'templateArgs' | 'ctorArgs' | 'args'>,
  scope: CallScope,
): Binding | null {
  const { def } = ref;
  const table = emptyTable();
  const kernels = new Map<string, KernelBinding>();
  const inWrapper = (first: ConstantTable) => {
    const tables = [first, ...ref.tables];
    return { tables, lookup: makeLookup(tables, ref.lookup) };
  };
  const argument = (name: string, value: number): ConstantDefinition => ({
    name,
    expr: String(value),
    kind: 'argument',
    offset: 0,
    line: scope.line,
  });
  /** Bind `name` in `into` to `text` read with `read` (the call's scope, or the wrapper's for a default), or to nothing known (`why`). */
  const set = (
    into: ConstantTable,
    name: string,
    text: string | null,
    read: { tables: readonly ConstantTable[]; lookup: Lookup } | null,
    why: string,
  ) => {
    if (!name) return;
    if (text === null || read === null) {
      into.shadowed!.set(name, why);
      return;
    }
    if (read === scope) {
      const kernel = scope.kernelOf(text);
      if (kernel) kernels.set(name, kernel);
    }
    const scalar = evaluateInteger(text, read.lookup);
    if (scalar !== null) {
      into.constants.set(name, argument(name, scalar));
      return;
    }
    const dims = resolveDim3(text, read.tables, read.lookup);
    if (dims) into.dim3s.set(name, dim3Of(name, dims));
    else into.shadowed!.set(name, `\`${name}\` is \`${text}\` at this call, not a compile-time constant`);
  };
  def.templateParams.forEach((p, k) => {
    const given = call.templateArgs?.[k];
    if (given !== undefined) set(table, p.name, given, scope, '');
    else
      set(
        table,
        p.name,
        p.defaultText,
        p.defaultText === null ? null : inWrapper(table),
        `\`${p.name}\` is deduced at this call`,
      );
  });
  def.params.forEach((p, k) => {
    const given = p.pack ? undefined : call.args[k];
    if (given !== undefined) set(table, p.name, given, scope, '');
    else
      set(
        table,
        p.name,
        p.defaultText,
        p.defaultText === null ? null : inWrapper(table),
        `\`${p.name}\` has no argument at this call`,
      );
  });
  if (call.ctorArgs && def.constructors)
    bindMembers(def, call.ctorArgs, table, (into, name, text, fromCall) =>
      set(into, name, text, fromCall ? scope : inWrapper(into), ''),
    );
  // A parameter the body assigns: known only when every assignment is under a condition that is false at this call.
  const bound = makeLookup([table], () => null);
  for (const [name, assignments] of def.assigned) {
    for (const a of assignments) {
      const holds = a.guard === null ? 1 : evaluateInteger(a.guard, bound);
      if (holds === 0) continue;
      const value =
        holds !== null && a.value !== null
          ? evaluateInteger(a.value, makeLookup([tableOf(def.locals), ...ref.tables], ref.lookup))
          : null;
      table.constants.delete(name);
      table.dim3s.delete(name);
      if (value !== null) table.constants.set(name, argument(name, value));
      else table.shadowed!.set(name, `\`${name}\` is assigned in \`${def.written}\` to a value not known statically`);
    }
  }
  return { table, kernels };
}

function emptyTable(): ConstantTable {
  return { constants: new Map(), dim3s: new Map(), shadowed: new Map() };
}

function dim3Of(name: string, dims: Dim3): Dim3Definition {
  return { name, args: [String(dims.x), String(dims.y), String(dims.z)], offset: 0 };
}

/**
 * A class's members as its constructors set them from `ctorArgs`: each constructor whose
 * parameters fit is read (an overload taking `dim3`, one taking `unsigned`), and a member is the
 * value those that know it agree on.
 */
function bindMembers(
  def: WrapperDefinition,
  ctorArgs: readonly string[],
  into: ConstantTable,
  set: (table: ConstantTable, name: string, text: string | null, fromCall: boolean) => void,
): void {
  const members = new Map<string, Array<ConstantDefinition | Dim3Definition | null>>();
  for (const ctor of def.constructors ?? []) {
    if (!arity(ctor.params, ctorArgs.length)) continue;
    const params = emptyTable();
    ctor.params.forEach((p, k) => set(params, p.name, ctorArgs[k] ?? p.defaultText, ctorArgs[k] !== undefined));
    const lookup = makeLookup([params], () => null);
    for (const [member, init] of ctor.members) {
      const list = members.get(member) ?? [];
      members.set(member, list);
      if (/^[A-Za-z_]\w*$/.test(init) && (params.constants.has(init) || params.dim3s.has(init))) {
        const known = params.constants.get(init) ?? params.dim3s.get(init)!;
        list.push({ ...known, name: member });
        continue;
      }
      const scalar = evaluateInteger(init, lookup);
      const dims = scalar === null ? resolveDim3(`{${init}}`, [params], lookup) : null;
      list.push(
        scalar !== null
          ? { name: member, expr: String(scalar), kind: 'argument', offset: 0 }
          : dims
            ? dim3Of(member, dims)
            : null,
      );
    }
  }
  for (const [member, values] of members) {
    const known = values.filter((v): v is ConstantDefinition | Dim3Definition => v !== null);
    // `n` and `dim3(n, 1, 1)` are one value.
    const texts = new Set(known.map((v) => ('expr' in v ? `${v.expr},1,1` : v.args.join(','))));
    if (texts.size !== 1) {
      into.shadowed!.set(
        member,
        `\`${member}\` is set by \`${def.name}\`'s constructor from values not known statically here`,
      );
      continue;
    }
    const dims = known.find((v): v is Dim3Definition => !('expr' in v));
    if (dims) into.dim3s.set(member, dims);
    else into.constants.set(member, known[0] as ConstantDefinition);
  }
}

/** A wrapper's launch read with its parameters bound. */
function readLaunch(
  step: LaunchTexts,
  tables: readonly ConstantTable[],
  lookup: Lookup,
  kernels: ReadonlyMap<string, KernelBinding>,
  wrapper: string,
): WrapperLaunch {
  const dim = (text: string | undefined): ResolvedValue<Dim3> => {
    if (text === undefined) return { text: '', value: null, note: 'not given' };
    const value = resolveDim3(text, tables, lookup);
    const note = explainNames(text, tables, lookup);
    return { text: text.trim(), value, note: value ? note : (note ?? 'not a compile-time constant here') };
  };
  let dynamicSmem: ResolvedValue<number>;
  if (step.smem === undefined || step.smem.trim() === '') dynamicSmem = { text: '0', value: 0, note: 'not given (0)' };
  else {
    const value = evaluateInteger(step.smem, lookup);
    const note = explainNames(step.smem, tables, lookup);
    dynamicSmem = {
      text: step.smem.trim(),
      value,
      note: value === null ? (note ?? 'not a compile-time constant here') : note,
    };
  }
  const kernel = kernels.get(step.kernel) ?? {
    name: step.kernel,
    templateArgs: step.templateArgs,
    templateArgValues: step.templateArgs ? step.templateArgs.map((a) => evaluateInteger(a, lookup)) : null,
    calledThrough: null,
  };
  return {
    via: step.via,
    kernel,
    grid: dim(step.grid),
    block: dim(step.block),
    dynamicSmem,
    stream: step.stream?.trim() || null,
    wrapper,
    writtenKernel: step.kernel,
    nested: false,
  };
}

/**
 * The kernel a function argument names, casts, parentheses and `&` taken off (`(void*)k`,
 * `reinterpret_cast<const void*>(&ns::k<T, 128>)`): its name without spaces and its template
 * arguments as written (spaces collapsed), or null when the argument names no function.
 */
export function kernelNameIn(text: string): { name: string; templateArgs: string[] | null } | null {
  let t = text.trim();
  for (let changed = true; changed;) {
    const before = t;
    t = t.replace(/^\(\s*(?:const\s+)?void\s*\*\s*\)\s*/, '');
    t = t.replace(/^(?:reinterpret_cast|static_cast|const_cast)\s*<[^>]*>\s*\((.*)\)$/s, '$1').trim();
    t = t.replace(/^\((.*)\)$/s, '$1').trim();
    t = t.replace(/^&\s*/, '');
    changed = t !== before;
  }
  const m = /^((?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)\s*(?:<(.*)>)?$/s.exec(t);
  if (!m) return null;
  const templateArgs =
    m[2] !== undefined
      ? splitTopLevel(m[2], 0, m[2].length).map(([a, b]) => m[2].slice(a, b).replace(/\s+/g, ' '))
      : null;
  return { name: m[1].replace(/\s+/g, '').replace(/^::/, ''), templateArgs };
}

/** A kernel named by an argument (`k`, `&ns::k<T, 128>`), with its template arguments read with `lookup`. */
export function kernelIn(text: string, lookup: Lookup): KernelBinding | null {
  const named = kernelNameIn(text);
  if (!named) return null;
  const templateArgs = named.templateArgs && named.templateArgs.map((a) => a.trim());
  return {
    name: named.name,
    templateArgs,
    templateArgValues: templateArgs ? templateArgs.map((a) => evaluateInteger(a, lookup)) : null,
    calledThrough: null,
  };
}

/** Definitions by the name calls use, each with the tables to read it with. */
export function wrappersByName(
  defs: readonly WrapperDefinition[],
  tables: readonly ConstantTable[],
  lookup: Lookup,
  into = new Map<string, WrapperRef[]>(),
): Map<string, WrapperRef[]> {
  for (const def of defs) {
    const list = into.get(def.name);
    const ref = { def, tables, lookup };
    if (list) list.push(ref);
    else into.set(def.name, [ref]);
  }
  return into;
}

/** What the definitions say, as a key: the uses of a set of wrappers are read again when it changes. */
export function wrappersKey(defs: readonly WrapperDefinition[]): string {
  return defs
    .map((d) =>
      JSON.stringify([
        d.name,
        d.fn,
        d.origin ?? '',
        d.params,
        d.templateParams,
        d.constructors,
        d.locals,
        d.assigned,
        d.step,
      ]),
    )
    .join('\n');
}
