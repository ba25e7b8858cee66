/**
 * Keys of what a function of a document is read from, so that its facts (its kernel) are kept
 * while they stay the same: its own text and column; the document outside the functions' bodies
 * (declarations, constants, headers, the directives written in bodies, and the bodies that text
 * calls); the bodies its own text calls, directly or through others; and the rest of the unit
 * (`others`: the other files' texts and the unit's inputs). An edit inside one body then changes
 * the key of that function and of the functions that call it, and nothing else.
 *
 * Lines are not part of a key: a function that only moved down or up is shifted (its facts hold
 * spans, not offsets; see KernelAnalysisCache).
 */
import type { OutlineFunction } from '../program/outline';
import type { SourceText } from '../text/source-text';
import { hash } from './kernel-analysis-cache';
import { memoByText } from './kept-tables';
import { ownCopy } from './engine-seams';

/** A name: a function may be called by it, or through a pointer or value read from it. */
const NAME = /[A-Za-z_]\w*/g;

/** A function that is called without its name written (an operator, a constructor, a destructor). */
function calledUnnamed(f: OutlineFunction): boolean {
  return /^(operator\b|~)/.test(f.name) || (f.className !== null && f.name === f.className);
}

export interface FunctionKeysInput {
  source: SourceText;
  /** The document's outline functions. */
  functions: readonly OutlineFunction[];
  /** The directives written in the document, as offset ranges of `source`. */
  directives: ReadonlyArray<{ start: number; end: number }>;
  /** The rest of the unit, as a key. */
  others: string;
}

export interface FunctionKeys {
  /** A function's key; null for one a macro use writes (its text is the macro's). */
  keyOf(fn: OutlineFunction): string | null;
  /**
   * The bodies written in the document (outermost only), in order. Two versions that give some
   * function the same key have the same text outside their bodies: an offset of one version moves to
   * the other with the body it is in or follows (see movedOffsets).
   */
  bodies: ReadonlyArray<readonly [number, number]>;
}

/** The distinct names a text writes, in order. */
function namesIn(text: string): string[] {
  return [...new Set(text.match(NAME))];
}

/** A body's (or the text between two bodies') names and hash, kept by its text: a keystroke reads again only the piece it changed. */
const bodyNames = memoByText(
  'function bodies',
  (body: string) => body,
  // Names of its own: a slice of the body would keep the version's whole text alive.
  (body: string) => ({ names: namesIn(body).map(ownCopy), key: hash(body) }),
);

/** Each function's key, and the document's bodies. */
export function functionKeys({ source, functions, directives, others }: FunctionKeysInput): FunctionKeys {
  const text = source.text;
  // The bodies written in the document, outermost only (a body inside another is part of it).
  const cut: Array<[number, number]> = [];
  const byName = new Map<string, number[]>();
  const unnamed: number[] = [];
  let end = -1;
  for (const f of [...functions].filter((f) => f.bodyAt && !f.expansion).sort((a, b) => a.bodyAt![0] - b.bodyAt![0])) {
    const [from, to] = f.bodyAt!;
    if (from < end) continue;
    end = to;
    const list = byName.get(f.name);
    if (list) list.push(cut.length);
    else byName.set(f.name, [cut.length]);
    if (calledUnnamed(f)) unnamed.push(cut.length);
    cut.push([from, to]);
  }
  const bodies = cut.map(([from, to]) => ({ text: text.slice(from, to), calls: null as number[] | null }));
  const bodyKey = (i: number) => bodyNames(bodies[i].text).key;
  const callsOf = (names: readonly string[]): number[] => {
    const out: number[] = [];
    for (const name of names) {
      const found = byName.get(name);
      if (found) out.push(...found);
    }
    return out;
  };
  // The text between two bodies is kept by its text too: a keystroke changes one piece of it.
  const callsIn = (t: string) => callsOf(bodyNames(t).names);
  /** The bodies the texts name (and `first`), and those they name in turn, in the order first reached. */
  const reached = (texts: string[], first: number[] = []): number[] => {
    const seen = new Set<number>();
    const queue = first.flatMap((i) => (bodies[i].calls ??= callsOf(bodyNames(bodies[i].text).names)));
    queue.push(...texts.flatMap(callsIn));
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q];
      if (seen.has(i)) continue;
      seen.add(i);
      queue.push(...(bodies[i].calls ??= callsOf(bodyNames(bodies[i].text).names)));
    }
    return [...seen];
  };
  const bodyAt = new Map(cut.map(([from], i) => [from, i] as const));
  const outside: string[] = [];
  let from = 0;
  for (const [start, stop] of cut) {
    outside.push(text.slice(from, start));
    from = stop;
  }
  outside.push(text.slice(from));
  // What the outside text calls: a function's own name, where it is declared, is no call.
  const names = functions
    .filter((f) => !f.expansion)
    .map((f) => f.nameAt)
    .sort((a, b) => a[0] - b[0]);
  const calling: string[] = [];
  from = 0;
  let n = 0;
  for (const [start, stop] of [...cut, [text.length, text.length] as [number, number]]) {
    let at = from;
    for (; n < names.length && names[n][0] < start; n++) {
      if (names[n][0] < at) continue;
      calling.push(text.slice(at, names[n][0]));
      at = names[n][1];
    }
    calling.push(text.slice(at, start));
    from = stop;
    while (n < names.length && names[n][0] < stop) n++;
  }
  // A directive in a body holds for what follows it (a `#define`); `#pragma` changes nothing outside.
  const inBodies: string[] = [];
  let k = 0;
  for (const d of directives) {
    while (k < cut.length && cut[k][1] <= d.start) k++;
    if (k < cut.length && cut[k][0] <= d.start) {
      const written = text.slice(d.start, d.end);
      if (!/^\s*#\s*pragma\b/.test(written)) inBodies.push(`${k}:${written}`);
    }
  }
  const context = hash(
    [
      others,
      outside.join('{}'),
      inBodies.join('\n'),
      reached(calling).map(bodyKey).join(','),
      // Called where no name says so: every function's reading may follow them.
      reached(unnamed.map((i) => bodies[i].text))
        .concat(unnamed)
        .map(bodyKey)
        .join(','),
    ].join('\u0000'),
  );
  // Asked for each function more than once a version (its kernel, its launches): made once.
  const made = new Map<OutlineFunction, string | null>();
  const keyOf = (fn: OutlineFunction): string | null => {
    if (fn.expansion) return null;
    const column = fn.at[0] - text.lastIndexOf('\n', fn.at[0] - 1) - 1;
    // Its text: its header and what follows its body (read here), and its body (kept by its text).
    const i = fn.bodyAt ? bodyAt.get(fn.bodyAt[0]) : undefined;
    if (i === undefined || cut[i][1] !== fn.bodyAt![1]) {
      const own = text.slice(fn.at[0], fn.at[1]);
      return `fn|${context}|${column}|${hash(own)}|${reached([own]).map(bodyKey).join(',')}`;
    }
    const around = [text.slice(fn.at[0], cut[i][0]), text.slice(cut[i][1], fn.at[1])];
    return `fn|${context}|${column}|${hash(around.join('{}'))}|${bodyKey(i)}|${reached(around, [i]).map(bodyKey).join(',')}`;
  };
  return {
    keyOf: (fn) => {
      let key = made.get(fn);
      if (key === undefined) made.set(fn, (key = keyOf(fn)));
      return key;
    },
    bodies: cut,
  };
}

/**
 * Offsets of the version whose bodies were `before` in the version whose bodies are `after`, for
 * what a key kept: the text outside the bodies is the same in both (it is part of every key), so
 * an offset moves with the body it is in, or with the one before it; null when the two do not
 * have as many bodies. Offsets in a body whose text changed are not moved right (no key keeps one).
 */
export function movedOffsets(
  before: ReadonlyArray<readonly [number, number]>,
  after: ReadonlyArray<readonly [number, number]>,
): ((offset: number) => number) | null {
  if (before.length !== after.length) return null;
  return (x) => {
    let lo = 0;
    let hi = before.length - 1;
    let i = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (before[mid][0] <= x) {
        i = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (i < 0) return x;
    return x < before[i][1] ? x + after[i][0] - before[i][0] : x + after[i][1] - before[i][1];
  };
}
