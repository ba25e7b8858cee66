/**
 * Which `#if`/`#ifdef`/`#elif`/`#else` branches of a file are off, read from the directives alone:
 *
 * - *certainly* off: whatever the build defines, the compiler never sees them (`#if 0`, the
 *   `#else` of an `#ifdef` of a name the file itself defines, an `#if` on a value the file sets);
 * - off *assuming* that the macros the file never defines are undefined, as the C preprocessor
 *   reads them (`#if BNB_HIP`, `#ifdef __HIP_PLATFORM_AMD__`): what a build that passes no `-D`
 *   compiles. Used only to choose between definitions of one name in alternative branches.
 *
 * Code in a certainly-off branch is not reported (a launch there never runs); a definition there
 * is not read.
 */
import { findDirectiveRanges, inRanges } from './preprocessor-lines';
import { evaluateInteger } from './const-eval';
import type { SourceText } from './source-text';
import { memoByObject } from '../incremental/kept-tables';

export interface InactiveRanges {
  /** Sorted [start, end) offsets of branches the compiler never sees. */
  certain: ReadonlyArray<[number, number]>;
  /** Sorted [start, end) offsets of branches off when undefined macros are undefined (the certain ones included). */
  assumed: ReadonlyArray<[number, number]>;
}

/** Macros every CUDA compile defines, or never does (a HIP build is another source). */
const KNOWN: ReadonlyMap<string, string | null> = new Map([
  ['__CUDACC__', '1'],
  ['__NVCC__', '1'],
  ['__HIPCC__', null],
  ['__HIP__', null],
  ['__HIP_PLATFORM_AMD__', null],
  ['__HIP_PLATFORM_HCC__', null],
  ['__HIP_DEVICE_COMPILE__', null],
]);

/** The text's off branches: found once per text, shared by the scanners that ask. */
export const findInactiveRanges: (source: SourceText) => InactiveRanges = memoByObject(
  'inactive branches',
  scanInactiveRanges,
);

export const NO_INACTIVE_RANGES: InactiveRanges = { certain: [], assumed: [] };

/** One reading of the directives: with what the file leaves undefined unknown (certain) or undefined (assumed). */
interface Reading {
  /** Name → its value text, or null when undefined; a name missing is unknown (certain mode) or undefined (assumed mode). */
  macros: Map<string, string | null>;
  /** Names whose state a branch of unknown state changed: unknown from there on. */
  unknown: Set<string>;
  assumeUndefined: boolean;
}

interface Group {
  /** Per reading: the group's enclosing code is on (true), off (false) or either (null). */
  parent: [boolean | null, boolean | null];
  /** Per reading: a branch so far was taken (true), none was (false), unknown (null). */
  taken: [boolean | null, boolean | null];
  /** Per reading: the current branch is on, off, unknown. */
  current: [boolean | null, boolean | null];
  /** Where the current branch's code starts (after its directive line). */
  start: number;
}

function scanInactiveRanges(source: SourceText): InactiveRanges {
  const { masked } = source;
  // Most chunks have no conditional at all: a look at each directive's first word (the directives are found once per text).
  const directives = findDirectiveRanges(source);
  if (!directives.some(([start]) => isConditional(masked, start))) return NO_INACTIVE_RANGES;
  const readings: [Reading, Reading] = [
    { macros: new Map(), unknown: new Set(), assumeUndefined: false },
    { macros: new Map(), unknown: new Set(), assumeUndefined: true },
  ];
  const certain: Array<[number, number]> = [];
  const assumed: Array<[number, number]> = [];
  const stack: Group[] = [];
  const on = (k: 0 | 1): boolean | null => {
    let state: boolean | null = true;
    for (const g of stack) {
      const here = and(g.parent[k], g.current[k]);
      if (here === false) return false;
      if (here === null) state = null;
    }
    return state;
  };
  const close = (g: Group, end: number) => {
    if (and(g.parent[0], g.current[0]) === false && g.parent[0] !== false) certain.push([g.start, end]);
    if (and(g.parent[1], g.current[1]) === false && g.parent[1] !== false) assumed.push([g.start, end]);
  };
  for (const [start, end] of directives) {
    const line = masked.slice(start, end).replace(/\\\r?\n/g, ' ');
    const d = /^\s*#\s*(ifdef|ifndef|if|elifdef|elifndef|elif|else|endif|define|undef)\b\s*(.*?)\s*$/s.exec(line);
    if (!d) continue;
    const [, word, rest] = d;
    if (word === 'define' || word === 'undef') {
      const name = /^([A-Za-z_]\w*)(\()?\s*(.*)$/s.exec(rest);
      if (!name) continue;
      for (const k of [0, 1] as const) {
        const state = on(k);
        if (state === false) continue;
        const value = word === 'undef' ? null : name[2] ? '1' : name[3] || '1';
        if (state === null) {
          readings[k].unknown.add(name[1]);
        } else {
          readings[k].unknown.delete(name[1]);
          readings[k].macros.set(name[1], value);
        }
      }
      continue;
    }
    if (word === 'if' || word === 'ifdef' || word === 'ifndef') {
      const parent: [boolean | null, boolean | null] = [on(0), on(1)];
      const current: [boolean | null, boolean | null] = [
        condition(word, rest, readings[0]),
        condition(word, rest, readings[1]),
      ];
      stack.push({ parent, taken: [current[0], current[1]], current, start: end });
      continue;
    }
    const group = stack[stack.length - 1];
    if (!group) continue;
    close(group, start);
    if (word === 'endif') {
      stack.pop();
      continue;
    }
    for (const k of [0, 1] as const) {
      const before = group.taken[k];
      const mine = word === 'else' ? true : condition(word.slice(2), rest, readings[k]);
      // This branch is on when no earlier one was taken and its condition holds.
      group.current[k] = and(not(before), mine);
      group.taken[k] = or(before, mine);
    }
    group.start = end;
  }
  // Unclosed groups (a file being typed): their last branch runs to the end.
  for (const g of stack) close(g, masked.length);
  const byStart = (a: [number, number], b: [number, number]) => a[0] - b[0];
  return { certain: certain.sort(byStart), assumed: assumed.sort(byStart) };
}

/** The text has an `#if…`, `#el…` or `#endif` line. */
export function hasConditionals(source: SourceText): boolean {
  const { masked } = source;
  return findDirectiveRanges(source).some(([start]) => isConditional(masked, start));
}

/** The directive at `start` is `#if…`, `#el…` or `#endif`. */
function isConditional(masked: string, start: number): boolean {
  let i = masked.indexOf('#', start) + 1;
  while (masked.charCodeAt(i) === 32 || masked.charCodeAt(i) === 9) i++;
  const c = masked.charCodeAt(i);
  // `i`f…, `e`l… / `e`ndif (not `e`rror)
  return (
    (c === 105 && masked.charCodeAt(i + 1) === 102) ||
    (c === 101 && (masked.startsWith('el', i) || masked.startsWith('endif', i)))
  );
}

/** Whether the condition of an `#if`/`#ifdef`/`#ifndef` (or the `#elif` forms) holds, or null when unknown. */
function condition(word: string, rest: string, reading: Reading): boolean | null {
  if (word === 'ifdef' || word === 'ifndef' || word === 'def' || word === 'ndef') {
    const name = /^[A-Za-z_]\w*/.exec(rest)?.[0];
    if (!name) return null;
    const defined = isDefined(name, reading);
    return defined === null ? null : word === 'ifdef' || word === 'def' ? defined : !defined;
  }
  // `defined(X)` / `defined X` first, then the names' values.
  let unknown = false;
  const expr = rest.replace(
    /\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))/g,
    (_, a: string | undefined, b: string | undefined) => {
      const defined = isDefined((a ?? b)!, reading);
      if (defined === null) unknown = true;
      return defined ? '1' : '0';
    },
  );
  if (unknown) return null;
  const seen = new Set<string>();
  const lookup = (name: string): number | null => {
    if (seen.has(name)) return null;
    const value = valueOf(name, reading);
    if (value === undefined) return null;
    if (value === null) return 0; // undefined in an #if: 0
    seen.add(name);
    try {
      return evaluateInteger(value, lookup);
    } finally {
      seen.delete(name);
    }
  };
  const value = evaluateInteger(expr, lookup);
  return value === null ? null : value !== 0;
}

/** The macro's value text, null when it is undefined, undefined when that is unknown. */
function valueOf(name: string, reading: Reading): string | null | undefined {
  if (reading.unknown.has(name)) return undefined;
  if (reading.macros.has(name)) return reading.macros.get(name)!;
  if (KNOWN.has(name)) return KNOWN.get(name)!;
  return reading.assumeUndefined ? null : undefined;
}

function isDefined(name: string, reading: Reading): boolean | null {
  const value = valueOf(name, reading);
  return value === undefined ? null : value !== null;
}

function and(a: boolean | null, b: boolean | null): boolean | null {
  if (a === false || b === false) return false;
  return a === null || b === null ? null : true;
}

function or(a: boolean | null, b: boolean | null): boolean | null {
  if (a === true || b === true) return true;
  return a === null || b === null ? null : false;
}

function not(a: boolean | null): boolean | null {
  return a === null ? null : !a;
}

/** `offset` lies in one of the sorted ranges. */
export function isInactive(ranges: ReadonlyArray<[number, number]>, offset: number): boolean {
  return ranges.length > 0 && inRanges(ranges, offset);
}
