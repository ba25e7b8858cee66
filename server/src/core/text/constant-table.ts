/**
 * Named integer constants a launch configuration can refer to: object-like
 * `#define`s, `const`/`constexpr`/`static const` variables, enumerators, and
 * `dim3` variables, at file scope or inside one function. A non-const local
 * counts only when nothing assigns to it after its declaration: null beats wrong.
 */
import type { Dim3 } from '../types';
import { evaluateInteger, type Lookup } from './const-eval';
import {
  isIdentCharAt,
  isSpaceAt,
  lastComponent,
  matchingClose,
  positionAt,
  splitTopLevel,
  type SourceText,
} from './source-text';
import { findScopes, scopesAt, type Scope } from './scopes';
import { findInactiveRanges, isInactive, type InactiveRanges } from './preprocessor-branches';
import { collectMacros, type MacroDefinition } from './macros';
import { memoByText } from '../incremental/kept-tables';

export interface ConstantDefinition {
  name: string;
  /** The expression text, evaluated lazily (it may name other constants). */
  expr: string;
  /** `macro`: a function-like macro, in a chunk's definitions only (they key what its uses expand to); the table keeps it in `macros`. */
  kind: 'define' | 'const' | 'enumerator' | 'local' | 'macro' | 'argument';
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
  /** In a function body: the names declared more than once (in several blocks), each declaration with where it is in view (see tableAt). */
  scoped?: Map<string, ScopedDeclaration[]>;
  /** At file scope: the function-like macros (`#define LAUNCH(k, b) ...`), for the launches their uses expand to. */
  macros?: Map<string, MacroDefinition>;
  /** In a function body: locals assigned again after their declaration, with their initializer and the part of the body they live in (see value-sets.ts). */
  reassigned?: Map<string, ReassignedLocal[]>;
}

export interface ReassignedLocal {
  /** The initializer as written. */
  init: string;
  /** Where the declaration ends, and the `}` closing its block. */
  from: number;
  until: number;
}

const INTEGER_TYPE = String.raw`(?:(?:unsigned|signed)\s+)?(?:int|long\s+long|long|short|char|size_t|unsigned|int32_t|uint32_t|int64_t|uint64_t|std::size_t|auto)`;
/**
 * Words that stand where a type would but are none (`return x = 1;`, `else y = 2;`), or that the
 * patterns read apart (`dim3`, the specifiers).
 */
const NOT_TYPES =
  'return|else|case|goto|throw|delete|using|typedef|new|co_return|co_yield|co_await|do|struct|class|enum|union|namespace|template|typename|public|private|protected|friend|operator|sizeof|static_assert|if|while|for|switch|dim3|const|constexpr|static|inline|volatile|extern|register|mutable|thread_local|default';
/**
 * A type named by one (qualified) name: a typedef (`uint`, `idx_t`, `std::uint32_t`), a template
 * parameter, a class. The value decides what is an integer: `const float f = 0.5f;` has none.
 */
const NAMED_TYPE = String.raw`(?:(?!(?:${NOT_TYPES})\b)(?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)`;
const ANY_TYPE = String.raw`(?:${INTEGER_TYPE}(?![\w:])|${NAMED_TYPE})`;

// Built once (collectConstants runs for every chunk and function body); global: each scan sets `lastIndex`.
const CONST_VAR = new RegExp(
  String.raw`\b(?:static\s+|inline\s+)*(const|constexpr)\s+(?:static\s+)?(?:const\s+)?${ANY_TYPE}\s+(?:const\s+)?([A-Za-z_]\w*)\s*(?:=\s*([^;{}]+?)|\{([^;{}]*)\}|\(([^;{}]*)\))\s*;`,
  'g',
);
// Sticky: tried at each `const` that follows a type's word (see constAfterType).
const CONST_VAR_LEADING = /(?:const|constexpr)\s+(?:static\s+)?([A-Za-z_]\w*)\s*(?:=\s*([^;{}]+?)|\{([^;{}]*)\})\s*;/y;
const PLAIN_VAR = new RegExp(String.raw`(?:^|[;{}])\s*${ANY_TYPE}\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+?)\s*;`, 'g');
const ANY_VAR = new RegExp(String.raw`(?:^|[;{}(])\s*(?:const\s+)?${ANY_TYPE}\s+([A-Za-z_]\w*)\s*(?=[;=,)\[{(])`, 'g');

/**
 * A declaration in a function body and the part of it where it is in view: from its name to the
 * end of the block it is declared in. A name declared in several blocks (both branches of an
 * `if`) is read, at each place, from the one in view there (see tableAt).
 */
export interface ScopedDeclaration {
  /** The offset of the declared name (-1: a parameter, in view in the whole body). */
  offset: number;
  /** The offset of the `}` closing its block. */
  until: number;
  def?: ConstantDefinition;
  dim3?: Dim3Definition;
  /** Why its value is not known statically. */
  shadow?: string;
}

/** Constants declared in `[from, to)` of the source (the whole file, or one function body). */
export interface CollectOptions {
  /** Only `const`/`constexpr` locals count (file scope); false in a function body, where unreassigned locals count too. */
  localsMustBeConst?: boolean;
  /** The function's parameters: in view in the whole body, unless a block declares the name again. */
  parameters?: readonly string[];
  /** Why a parameter's value is unknown, for notes. */
  parameterNote?: (name: string) => string;
  /** (Internal) the names whose every declaration is listed, with where it is in view: those declared more than once. */
  declareOnly?: ReadonlySet<string>;
}

export function collectConstants(
  source: SourceText,
  from = 0,
  to = source.masked.length,
  options: CollectOptions = {},
): ConstantTable {
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
  options: CollectOptions = {},
): { table: ConstantTable; definitions: ConstantDefinition[] } {
  const {
    localsMustBeConst = true,
    parameters = [],
    parameterNote = (name) => `\`${name}\` is a parameter`,
    declareOnly,
  } = options;
  const masked = source.masked.slice(0, to);
  const constants = new Map<string, ConstantDefinition>();
  const dim3s = new Map<string, Dim3Definition>();
  const definitions: ConstantDefinition[] = [];
  // In a function body, where each name is first declared, and the names declared again elsewhere: those are
  // read once more, every declaration listed by where its name stands (several patterns read one). Most bodies have none.
  const firstAt = localsMustBeConst || declareOnly ? null : new Map<string, number>(parameters.map((p) => [p, -1]));
  const again = new Set<string>();
  const note = (name: string, at: number) => {
    if (!firstAt) return;
    const first = firstAt.get(name);
    if (first === undefined) firstAt.set(name, at);
    else if (first !== at) again.add(name);
  };
  const scoped = declareOnly ? new Map<number, { name: string } & ScopedDeclaration>() : null;
  const declare = (name: string, at: number, what: Omit<ScopedDeclaration, 'offset' | 'until'>, strong: boolean) => {
    note(name, at);
    if (!scoped || !declareOnly!.has(name)) return;
    const prior = scoped.get(at);
    if (prior && (!strong || prior.name !== name)) return;
    scoped.set(at, { name, offset: at, until: -1, ...what });
  };
  const add = (def: ConstantDefinition) => {
    def.line = positionAt(source, def.offset).line;
    definitions.push(def);
    if (!constants.has(def.name)) constants.set(def.name, def);
    else constants.set(def.name, { ...def, expr: '' }); // defined twice: ambiguous
    if (def.kind !== 'define' && (firstAt || scoped)) declare(def.name, def.offset, { def }, true);
  };
  // Namespace-qualified names (`cfg::threads`) of file-scope constants: read as written even where the plain name is ambiguous.
  // The namespaces are found once per text (the kernel and launch finders read them too).
  const scopes = localsMustBeConst ? namespacesIn(findScopes(source), from, to) : NO_SCOPES;
  const addQualified = (def: ConstantDefinition) => {
    if (scopes.length === 0) return;
    const names = scopesAt(scopes, def.offset).map((s) => s.name);
    for (let k = names.length - 1, prefix = ''; k >= 0; k--) {
      prefix = prefix ? `${names[k]}::${prefix}` : names[k];
      add({ ...def, name: `${prefix}::${def.name}` });
    }
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
    const parts =
      m[3] !== undefined && init.includes(',')
        ? splitTopLevel(init, 0, init.length).map(([a, b]) => init.slice(a, b))
        : [init];
    const at = wordAt(masked, m[2], m.index);
    const first: ConstantDefinition = { name: m[2], expr: parts[0] ?? '', kind: 'const', offset: at }; // `= ;` half-typed: no parts
    add(first);
    addQualified(first);
    for (const part of parts.slice(1)) {
      const d = /^([A-Za-z_]\w*)\s*(?:=\s*(.+)|\{(.*)\})$/s.exec(part.trim());
      if (!d) continue;
      const def: ConstantDefinition = {
        name: d[1],
        expr: (d[2] ?? d[3]).trim(),
        kind: 'const',
        offset: wordAt(masked, d[1], at + 1),
      };
      add(def);
      addQualified(def);
    }
  }
  // `int const N = 4;`, `uint32_t constexpr N = 4;`: tried at each `const` written after a word (few are).
  for (
    let i = hasConst && hasConstAfterType(masked, from, firstConst) ? firstConst : -1;
    i >= 0;
    i = masked.indexOf('const', i + 5)
  ) {
    if (!constAfterType(masked, from, i)) continue;
    CONST_VAR_LEADING.lastIndex = i;
    const m = CONST_VAR_LEADING.exec(masked);
    if (!m) continue;
    const def: ConstantDefinition = {
      name: m[1],
      expr: (m[2] ?? m[3]).trim(),
      kind: 'const',
      offset: wordAt(masked, m[1], i),
    };
    add(def);
    addQualified(def);
  }

  const shadowed = new Map<string, string>();
  const reassigned: Record<string, ReassignedLocal[]> = {};
  if (!localsMustBeConst) {
    PLAIN_VAR.lastIndex = from;
    for (let m = masked.includes('=', from) ? PLAIN_VAR.exec(masked) : null; m; m = PLAIN_VAR.exec(masked)) {
      const at = wordAt(masked, m[1], m.index);
      if (isReassigned(masked, m[1], m.index + m[0].length, to)) {
        const why = `\`${m[1]}\` is assigned again after its declaration, so its value here is not known statically`;
        shadowed.set(m[1], why);
        declare(m[1], at, { shadow: why }, true);
        const from = m.index + m[0].length;
        (reassigned[m[1]] ??= []).push({ init: m[2].trim(), from, until: blockEnd(masked, from, to) });
        continue;
      }
      add({ name: m[1], expr: m[2].trim(), kind: 'local', offset: at });
    }
    // Any other local declaration (`int bs;`, `for (int t = ...)`, `int bs = f();` read later) hides outer constants.
    ANY_VAR.lastIndex = from;
    for (let m = ANY_VAR.exec(masked); m; m = ANY_VAR.exec(masked)) {
      if (!constants.has(m[1]) && !shadowed.has(m[1])) shadowed.set(m[1], unknownLocal(m[1]));
      // The match ends after the name and the blanks after it.
      let end = m.index + m[0].length;
      while (isSpaceAt(masked, end - 1)) end--;
      const at = end - m[1].length;
      note(m[1], at);
      if (scoped && declareOnly!.has(m[1]) && !scoped.has(at))
        scoped.set(at, { name: m[1], offset: at, until: -1, shadow: unknownLocal(m[1]) });
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
      const def: ConstantDefinition = { name: e[1], expr, kind: 'enumerator', offset: a };
      add(def);
      addQualified(def);
      if (enumName) {
        const scopedName: ConstantDefinition = { name: `${enumName}::${e[1]}`, expr, kind: 'enumerator', offset: a };
        add(scopedName);
        addQualified(scopedName);
      }
      previous = e[1];
    }
  }

  const dim3At = (name: string, args: string[], at: number, end: number) => {
    const reassigned = isReassigned(masked, name, end, to, true);
    const known = !dim3s.has(name) && !reassigned;
    dim3s.set(name, { name, args: known ? args : [], offset: at });
    // Scoped by its own declaration: assigned again in its block, it has no value there.
    declare(
      name,
      at,
      reassigned
        ? { shadow: `\`${name}\` is assigned again after its declaration, so its value here is not known statically` }
        : { dim3: { name, args, offset: at } },
      true,
    );
  };
  const hasDim3 = masked.includes('dim3', from);
  DIM3.lastIndex = from;
  for (let m = hasDim3 ? DIM3.exec(masked) : null; m; m = DIM3.exec(masked)) {
    const inner = m[2] ?? m[3] ?? m[4] ?? m[5] ?? '';
    const innerStart = m.index + m[0].indexOf(inner);
    const args = splitTopLevel(masked, innerStart, innerStart + inner.length)
      .filter(([a, b]) => b > a)
      .map(([a, b]) => masked.slice(a, b));
    dim3At(m[1], args, wordAt(masked, m[1], m.index), m.index + m[0].length);
  }
  // `auto block = dim3(threads);`: read back from each `= dim3` (few are written).
  for (let at = hasDim3 ? masked.indexOf('dim3', from) : -1; at >= 0; at = masked.indexOf('dim3', at + 4)) {
    let e = at - 1;
    while (e >= from && isSpaceAt(masked, e)) e--;
    if (masked.charCodeAt(e) !== 61 /* = */) continue;
    // Only `auto name =` (or `auto const name =`) before this `= dim3`: not another declaration's.
    const start = masked.lastIndexOf('auto', e);
    if (start < from || isIdentCharAt(masked, start - 1) || !AUTO_HEAD.test(masked.slice(start, e))) continue;
    AUTO_DIM3.lastIndex = start;
    const m = AUTO_DIM3.exec(masked);
    if (!m) continue;
    const innerStart = m.index + m[0].lastIndexOf(m[2]);
    const args = splitTopLevel(masked, innerStart, innerStart + m[2].length)
      .filter(([a, b]) => b > a)
      .map(([a, b]) => masked.slice(a, b));
    dim3At(m[1], args, wordAt(masked, m[1], m.index), m.index + m[0].length);
  }
  // A name declared as a dim3 is not hidden by the general declaration pattern that read it too.
  for (const name of dim3s.keys())
    if (shadowed.get(name)?.endsWith('whose value is not known statically') && !constants.has(name))
      shadowed.delete(name);
  for (const def of functionConstants(source, masked, from)) {
    add(def);
    addQualified(def);
  }
  let macros: Map<string, MacroDefinition> | undefined;
  if (localsMustBeConst) {
    for (const def of collectMacros(source, from, to)) {
      definitions.push({
        name: def.name,
        expr: `(${def.params.join(',')}${def.variadic ? ',...' : ''})${def.body}`,
        kind: 'macro',
        offset: def.offset,
        line: def.line,
      });
      (macros ??= new Map()).set(
        def.name,
        macros.has(def.name) && macros.get(def.name)!.body !== def.body ? { ...def, body: '' } : def,
      );
    }
    // Definitions in `#if` branches that are off: dropped, and where a name is defined in several branches, the one a build without `-D` flags compiles.
    const inactive = findInactiveRanges(source);
    if (inactive.certain.length || inactive.assumed.length) {
      decideBranches(constants, definitions, inactive);
      if (macros) decideMacroBranches(macros, collectMacros(source, from, to), inactive);
    }
  }
  const table: ConstantTable = { constants, dim3s, shadowed };
  if (macros) table.macros = macros;
  const names = Object.keys(reassigned);
  if (names.length) table.reassigned = new Map(names.map((n) => [n, reassigned[n]]));
  if (again.size) table.scoped = scopedDeclarations(source, from, to, options, again);
  if (scoped)
    table.scoped = listed(
      scoped,
      masked,
      to,
      parameters.filter((p) => declareOnly!.has(p)),
      parameterNote,
    );
  return { table, definitions };
}

/** The declarations of `names` in a function body, each with where it is in view (read once more, listing them). */
function scopedDeclarations(
  source: SourceText,
  from: number,
  to: number,
  options: CollectOptions,
  names: ReadonlySet<string>,
): Map<string, ScopedDeclaration[]> | undefined {
  return collectConstantDefinitions(source, from, to, { ...options, declareOnly: names }).table.scoped;
}

function listed(
  scoped: ReadonlyMap<number, { name: string } & ScopedDeclaration>,
  masked: string,
  to: number,
  parameters: readonly string[],
  parameterNote: (name: string) => string,
): Map<string, ScopedDeclaration[]> {
  const byName = new Map<string, ScopedDeclaration[]>();
  for (const name of parameters) byName.set(name, [{ offset: -1, until: to, shadow: parameterNote(name) }]);
  for (const d of scoped.values()) {
    const list = byName.get(d.name) ?? [];
    list.push({ offset: d.offset, until: blockEnd(masked, d.offset, to), def: d.def, dim3: d.dim3, shadow: d.shadow });
    byName.set(d.name, list);
  }
  return byName;
}

/**
 * `constants` (read as if every branch were on) with the definitions that `inactive`'s branches hold
 * (offsets of `definitions` less `base`) decided: a definition in a branch that is certainly off is
 * no definition; of several definitions of one name, the one not off in a build without `-D` flags,
 * when there is exactly one.
 */
export function decideBranches(
  constants: Map<string, ConstantDefinition>,
  definitions: readonly ConstantDefinition[],
  inactive: InactiveRanges,
  base = 0,
): void {
  const byName = new Map<string, ConstantDefinition[]>();
  for (const def of definitions) {
    if (def.kind === 'local' || def.kind === 'macro') continue;
    const list = byName.get(def.name);
    if (list) list.push(def);
    else byName.set(def.name, [def]);
  }
  for (const [name, defs] of byName) {
    const live = defs.filter((d) => !isInactive(inactive.certain, d.offset - base));
    if (live.length === defs.length && defs.length === 1) continue;
    if (live.length === 0) {
      constants.delete(name);
      continue;
    }
    const chosen = live.length === 1 ? live : live.filter((d) => !isInactive(inactive.assumed, d.offset - base));
    constants.set(name, chosen.length === 1 ? chosen[0] : { ...live[live.length - 1], expr: '' });
  }
}

/** decideBranches for function-like macros: `definitions` every one written, `macros` the table read as if every branch were on. */
export function decideMacroBranches(
  macros: Map<string, MacroDefinition>,
  definitions: readonly MacroDefinition[],
  inactive: InactiveRanges,
  base = 0,
): void {
  const byName = new Map<string, MacroDefinition[]>();
  for (const def of definitions) byName.set(def.name, [...(byName.get(def.name) ?? []), def]);
  for (const [name, defs] of byName) {
    const live = defs.filter((d) => !isInactive(inactive.certain, d.offset - base));
    if (live.length === 0) {
      macros.delete(name);
      continue;
    }
    const chosen = new Set(
      (live.length === 1 ? live : live.filter((d) => !isInactive(inactive.assumed, d.offset - base))).map(
        (d) => d.body,
      ),
    );
    const last = live[live.length - 1];
    macros.set(name, chosen.size === 1 ? live.find((d) => chosen.has(d.body))! : { ...last, body: '' });
  }
}

function unknownLocal(name: string): string {
  return `\`${name}\` is a local variable whose value is not known statically`;
}

/** The offset of the first whole-word `name` at or after `from`. */
function wordAt(masked: string, name: string, from: number): number {
  for (let i = masked.indexOf(name, from); i >= 0; i = masked.indexOf(name, i + 1)) {
    if (!isIdentCharAt(masked, i - 1) && !isIdentCharAt(masked, i + name.length)) return i;
  }
  return from;
}

/**
 * Functions without parameters that return a constant: `constexpr int threads() { return 256; }`,
 * as constants named `threads()` (const-eval asks for that name at a call). Any other body
 * (`static int ws() { ...; return ws; }`) is a definition whose value is unknown, so that a second
 * definition in another `#if` branch makes the name ambiguous rather than wrongly known.
 */
function functionConstants(source: SourceText, masked: string, from: number): ConstantDefinition[] {
  const out: ConstantDefinition[] = [];
  EMPTY_PARAMS_BODY.lastIndex = from;
  for (
    let m =
      masked.includes('()', from) || masked.includes('( )', from) || masked.includes('void)', from)
        ? EMPTY_PARAMS_BODY.exec(masked)
        : null;
    m;
    m = EMPTY_PARAMS_BODY.exec(masked)
  ) {
    let end = m.index;
    while (end > 0 && isSpaceAt(masked, end - 1)) end--;
    let start = end;
    while (
      start > 0 &&
      (isIdentCharAt(masked, start - 1) ||
        (masked[start - 1] === ':' && masked[start - 2] === ':' && isIdentCharAt(masked, start - 3)))
    )
      start -= masked[start - 1] === ':' ? 2 : 1;
    const name = masked.slice(start, end);
    if (!/^[A-Za-z_]/.test(name) || FUNCTION_NOT_NAMES.has(name)) continue;
    // A call followed by a block (`f() {` after `if (g())`) has an operator or `(` before the name, a definition a type.
    let before = start - 1;
    while (before >= 0 && isSpaceAt(masked, before)) before--;
    if (
      before < 0 ||
      !(isIdentCharAt(masked, before) || masked[before] === '>' || masked[before] === '*' || masked[before] === '&')
    )
      continue;
    const open = m.index + m[0].length - 1;
    const body = RETURN_ONLY.exec(masked.slice(open, Math.min(masked.length, open + 400)));
    out.push({
      name: `${name}()`,
      expr: body ? body[1].trim() : '',
      kind: 'const',
      offset: start,
      line: positionAt(source, start).line,
    });
  }
  return out;
}

/** `( )`, `(void)`, trailers, then the body's `{`. Global: searched from `lastIndex`. */
const EMPTY_PARAMS_BODY = /\(\s*(?:void\s*)?\)\s*(?:const\s*|noexcept\s*|override\s*|final\s*|->\s*[\w:]+\s*)*\{/g;
const RETURN_ONLY = /^\{\s*return\s+([^;{}]+);\s*\}/;
const FUNCTION_NOT_NAMES: ReadonlySet<string> = new Set([
  'if',
  'while',
  'for',
  'switch',
  'catch',
  'return',
  'sizeof',
  'decltype',
  'noexcept',
  'alignof',
  'operator',
  'else',
  'do',
  'main',
]);

/**
 * The table as code at `offset` sees it: each name declared in several blocks of the function is
 * read from the declaration in view there, or from outer tables when none is.
 */
export function tableAt(table: ConstantTable, offset: number): ConstantTable {
  if (!table.scoped) return table;
  const constants = new Map(table.constants);
  const dim3s = new Map(table.dim3s);
  const shadowed = new Map(table.shadowed ?? []);
  for (const [name, list] of table.scoped) {
    constants.delete(name);
    dim3s.delete(name);
    shadowed.delete(name);
    let best: ScopedDeclaration | null = null;
    for (const d of list) if (d.offset < offset && offset <= d.until && (!best || d.offset > best.offset)) best = d;
    // Declared twice in one block: only `#if`/`#else` branches make that legal, and which one compiles is not known here.
    const twice =
      best !== null && list.some((d) => d !== best && d.offset >= 0 && d.offset < offset && d.until === best!.until);
    if (best?.def) constants.set(name, twice ? { ...best.def, expr: '' } : best.def);
    else if (best?.dim3) dim3s.set(name, twice ? { ...best.dim3, args: [] } : best.dim3);
    else if (best?.shadow) shadowed.set(name, best.shadow);
  }
  const out: ConstantTable = { constants, dim3s, shadowed };
  if (table.reassigned) out.reassigned = table.reassigned;
  return out;
}

/** Which of the table's scoped declarations `offset` sees, as a key: equal keys, equal tables. */
export function scopeKeyAt(table: ConstantTable, offset: number): string {
  if (!table.scoped) return '';
  let key = '';
  for (const list of table.scoped.values()) {
    let best = -2;
    for (const d of list) if (d.offset < offset && offset <= d.until && d.offset > best) best = d.offset;
    key += `${best},`;
  }
  return key;
}

// Built once, as the patterns above.
const DEFINE = /^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]*?)[ \t]*$/gm;
const ENUM = /\benum\b(?:\s+(?:class|struct))?(?:\s+[A-Za-z_]\w*)?(?:\s*:\s*[\w:\s]+?)?\s*\{/g;
const DIM3 =
  /\b(?:const\s+)?dim3\s+(?:const\s+)?([A-Za-z_]\w*)\s*(?:\(([^;]*)\)|\{([^;]*)\}|=\s*(?:dim3\s*)?[({]([^;]*)[)}]|=\s*([^;(){}]+))\s*;/g;
const AUTO_DIM3 = /auto\s+(?:const\s+)?([A-Za-z_]\w*)\s*=\s*dim3\s*[({]([^;]*)[)}]\s*;/y;
/** What stands between `auto` and the `=` of an `auto name = dim3(…)`. */
const AUTO_HEAD = /^auto\s+(?:const\s+)?[A-Za-z_]\w*\s*$/;

/** A `const` that constAfterType accepts, at or after `first` (the first `const` at or after `from`). */
function hasConstAfterType(masked: string, from: number, first: number): boolean {
  for (let i = first; i >= 0; i = masked.indexOf('const', i + 5)) if (constAfterType(masked, from, i)) return true;
  return false;
}

const NO_SCOPES: readonly Scope[] = [];

/** The namespace blocks among `scopes` that overlap [from, to), or NO_SCOPES. */
function namespacesIn(scopes: readonly Scope[], from: number, to: number): readonly Scope[] {
  if (scopes.length === 0) return NO_SCOPES;
  const found = scopes.filter((s) => s.kind === 'namespace' && s.close > from && s.open < to);
  return found.length ? found : NO_SCOPES;
}

/**
 * At `i`, `const` or `constexpr` then a blank, after a type's word and blanks, at or after `from`:
 * where CONST_VAR_LEADING may match (`int const N`, `uint32_t constexpr N`, `cfg::idx_t const N`).
 */
function constAfterType(masked: string, from: number, i: number): boolean {
  if (!isSpaceAt(masked, i + 5) && !(masked.startsWith('expr', i + 5) && isSpaceAt(masked, i + 9))) return false;
  if (isIdentCharAt(masked, i - 1)) return false;
  let j = i - 1;
  while (j >= from && isSpaceAt(masked, j)) j--;
  if (j === i - 1 || j < from || !isIdentCharAt(masked, j)) return false;
  let k = j;
  while (k > from && isIdentCharAt(masked, k - 1)) k--;
  const word = masked.slice(k, j + 1);
  return /^[A-Za-z_]/.test(word) && !NOT_TYPE_WORDS.has(word);
}

/** NOT_TYPES, as a set of words. */
const NOT_TYPE_WORDS: ReadonlySet<string> = new Set(NOT_TYPES.split('|'));

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
    return new RegExp(
      String.raw`(?<![\w.>])${name}${member}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*${name}\b|(?<![\w.>])${name}\s*(?:\+\+|--)|&\s*${name}\b|>>\s*${name}\b`,
    );
  },
);

/** What changes `name`: `name = …`, `name op= …`, `++name`, `name--`, `&name`. */
export function assignmentPatternOf(name: string): RegExp {
  return assignmentPattern(name, false);
}

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
 * How many names a value may be defined through (`#define M2 M1`, `const int c2 = c1 + 1`): a generated chain
 * 1,000 deep overflowed the stack (each name is several frames); past this the value is unknown.
 */
export const MAX_CONSTANT_DEPTH = 100;

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
      if (def.expr === '' || seen.has(name) || seen.size >= MAX_CONSTANT_DEPTH) return null;
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
    return tables.some((t) => t.constants.get(last)?.kind === 'const' || t.constants.get(last)?.kind === 'define')
      ? lookup(last)
      : fallback(last);
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
function dim3Parts(
  text: string,
  tables: readonly ConstantTable[],
  lookup: Lookup,
  depth = 0,
): Array<number | null> | null {
  // `dim3 a(b); dim3 b(a);` or a chain of copies: past MAX_CONSTANT_DEPTH copies the dim3 is unknown.
  if (depth > MAX_CONSTANT_DEPTH) return null;
  const trimmed = text.trim();
  const ctor = trimmed.startsWith('dim3') ? /^dim3\s*[({](.*)[)}]$/s.exec(trimmed) : null;
  const brace = trimmed.startsWith('{') ? /^\{(.*)\}$/s.exec(trimmed) : null;
  let args: string[] | null = null;
  if (ctor || brace) args = splitArgs((ctor ?? brace)![1]);
  else if (/^[A-Za-z_]\w*$/.test(trimmed)) {
    for (const table of tables) {
      const def = table.dim3s.get(trimmed);
      if (def) {
        args =
          def.args.length === 1 && /^[A-Za-z_]\w*$/.test(def.args[0]) && tables.some((t) => t.dim3s.has(def.args[0]))
            ? null
            : def.args;
        if (def.args.length === 1 && args === null) return dim3Parts(def.args[0], tables, lookup, depth + 1);
        break;
      }
      // The innermost table that declares the name decides (`int block = 256;` here, a `dim3 block` in another function).
      if (table.constants.has(trimmed) || table.shadowed?.has(trimmed)) break;
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
const NOT_NAMES: ReadonlySet<string> = new Set([
  'dim3',
  'sizeof',
  'static_cast',
  'int',
  'unsigned',
  'long',
  'short',
  'char',
  'signed',
  'size_t',
  'float',
  'double',
  'const',
  'true',
  'false',
  'x',
  'y',
  'z',
]);

/**
 * A note for a value: where each name in `text` got its number
 * (`BLOCK = 256 (#define, line 4)`), or why one has none. Null when the text names nothing.
 */
export function explainNames(
  text: string,
  tables: readonly ConstantTable[],
  lookup: Lookup,
  describeOuter: (name: string) => string | null = () => null,
): string | null {
  if (!NAME_START.test(text)) return null; // `256`, `(1 << 10) * 4`: no name to explain
  const parts: string[] = [];
  // Each name as first written (`a :: b` and `a::b` are two writings of one name, each explained).
  const written = new Set<string>();
  for (const match of text.match(NAMES) ?? []) {
    if (written.has(match)) continue;
    written.add(match);
    // Only `::` and an empty call's parentheses can have blanks around them.
    const name = match.includes(':') || match.includes('(') ? match.replace(/\s+/g, '') : match;
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
      parts.push(
        value === null ? `\`${name}\` (${where}) is not a compile-time integer` : `${name} = ${value} (${where})`,
      );
      continue;
    }
    const outer = describeOuter(name);
    if (outer) parts.push(outer);
    else if (value === null) parts.push(`\`${name}\` is not a compile-time constant here`);
  }
  return parts.length ? parts.join('; ') : null;
}

// Not the suffix of a number (`32u`, `1e5f`, `0x1F`): a name starts where no word character precedes it.
const NAMES = /(?<![\w.])[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*(?:\s*\(\s*\))?/g;

/** The first of `tables` (innermost first) that shadows, defines or declares a dim3 named `name`. */
function innermostNaming(tables: readonly ConstantTable[], name: string): ConstantTable | undefined {
  for (const t of tables) if (t.shadowed?.has(name) || t.constants.has(name) || t.dim3s.has(name)) return t;
  return undefined;
}

function kindWord(kind: ConstantDefinition['kind']): string {
  return kind === 'define'
    ? '#define'
    : kind === 'enumerator'
      ? 'enumerator'
      : kind === 'local'
        ? 'local'
        : kind === 'argument'
          ? 'argument at the call'
          : 'const';
}
