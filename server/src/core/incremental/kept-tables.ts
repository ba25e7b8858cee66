/**
 * Every table the core keeps from one call to the next, in one registry with one policy. The
 * analysis modules declare a pure function memoized here and read as if they computed from
 * scratch; this module decides how much is kept.
 *
 * The policy:
 * - A table keyed by text keeps the entries used most recently, up to the capacity set for it in
 *   CAPACITY below (the one place table sizes are set); what was not used for longest goes first.
 * - A table keyed by an object (a version's SourceText, a Kernel or Launch that a chunk kept from
 *   the previous version) keeps its entry for as long as the object lives, and computes again
 *   when the inputs it was computed from change.
 * - Nothing is dropped by time: whether a result is reused never depends on the clock.
 */
import { ownCopy } from './engine-seams';

/** Entries kept per text-keyed table. */
const CAPACITY = {
  /** `parseArch`: the few architecture names in use, asked for by every launch of every report. */
  'architecture names': 256,
  /** `const-eval`: token lists of constant expressions (`256`, `(n + 255) / 256`), shared across versions. */
  'expression tokens': 8192,
  /** `structuralKey`: operators written out as JSON (a few dozen exist). */
  'quoted operators': 256,
  /** `blockEvaluator`: threadIdx and lane of each thread, per block shape (a few per document; up to 1024 threads each). */
  'thread coordinates': 64,
  /** `dependenceKind`: the kind of a symbolic value by its structure and block shape. */
  'dependence kinds': 2000,
  /** `isReassigned`: the assignment pattern of a local or dim3 name. */
  'assignment patterns': 4096,
  /** `classifySite`: branch verdicts by condition structure, cases and block shapes. */
  'branch verdicts': 2000,
  /** `registerBudget`: a launch's budget by architecture, block size and shared memory (a few per document). */
  'register budgets': 512,
  /** `fileDirectives`: each file's directives by its text (the headers of the units in use, and the open documents). */
  'file directives': 1024,
  /** `outlineOfText`: the outlines of headers by their view's text (the units of a repository share them). */
  'file outlines': 1024,
  /** `itemOutline`: the outline of each top-level item by its text (every item of the documents in use). */
  'outline items': 16384,
  /** `bodyNames`: the names each function body (and the text between two) writes, and its hash (every body of the documents in use). */
  'function bodies': 32768,
  /** `UnitProgram.file`: a header's parse view, by its path, its view's text and the macros it read (the units of a repository share them). */
  'header parse views': 1024,
  /** `UnitProgram.outline`: a header's outline with what its macro uses declare, by its path, its text and the macros it read. */
  'header outlines': 1024,
  /** `UnitProgram.functionIR`: a header function's IR, by its place, its text and the macros it read (each unit that includes it calls it). */
  'header function IRs': 16384,
} as const;

export type TextTableName = keyof typeof CAPACITY;

export interface KeptTableInfo {
  name: string;
  keyedBy: 'text' | 'object' | 'process';
  /** Entries held now; null for an object-keyed table (its entries die with their objects). */
  size: number | null;
  capacity: number | null;
}

interface Registered {
  info(): KeptTableInfo;
  clear(): void;
}

const registry: Registered[] = [];

/** The tables kept now, for memory reports and tests. */
export function keptTables(): KeptTableInfo[] {
  return registry.map((t) => t.info());
}

/** Forget every kept result (a test's fresh start; the next calls compute everything again). */
export function clearKeptTables(): void {
  for (const t of registry) t.clear();
}

/**
 * `compute` memoized by the text `keyOf` makes of its arguments (one or two). Values are shared
 * between callers: they must never be changed.
 *
 * Kept in two generations, as an approximate LRU that costs one look-up per hit on the hot paths
 * that use it (every operator of every symbolic key): new and recently used entries go to the
 * young one; when it holds half the capacity it becomes the old one, and the previous old one is
 * dropped, with whatever was not used since.
 */
export function memoByText<A, V>(name: TextTableName, keyOf: (a: A) => string, compute: (a: A) => V): (a: A) => V;
export function memoByText<A, B, V>(
  name: TextTableName,
  keyOf: (a: A, b: B) => string,
  compute: (a: A, b: B) => V,
): (a: A, b: B) => V;
export function memoByText<A, B, V>(
  name: TextTableName,
  keyOf: (a: A, b: B) => string,
  compute: (a: A, b: B) => V,
): (a: A, b: B) => V {
  const table = generations<V>(name);
  return (a: A, b: B) => {
    const key = keyOf(a, b);
    const hit = table.lookup(key);
    if (hit !== MISS) return hit;
    const value = compute(a, b);
    // Its own copy: a key cut from a document would keep the document's whole text alive.
    table.keep(ownCopy(key), value);
    return value;
  };
}

/** What `lookup` answers for a key it does not hold (a kept value may itself be undefined). */
const MISS: unique symbol = Symbol('not kept');

/**
 * A text-keyed table of two generations of at most half its capacity each: a key looked up again
 * moves to the young one, and when the young one is full the old one is let go (what was not used
 * for longest goes first, without a clock or a count per entry).
 */
function generations<V>(name: TextTableName): {
  lookup(key: string): V | typeof MISS;
  keep(key: string, value: V): void;
} {
  const half = Math.max(1, Math.floor(CAPACITY[name] / 2));
  let young = new Map<string, V>();
  let old = new Map<string, V>();
  registry.push({
    info: () => ({ name, keyedBy: 'text', size: young.size + old.size, capacity: CAPACITY[name] }),
    clear: () => {
      young = new Map();
      old = new Map();
    },
  });
  const keep = (key: string, value: V) => {
    if (young.size >= half) {
      old = young;
      young = new Map();
    }
    young.set(key, value);
  };
  return {
    keep,
    lookup(key) {
      const hit = young.get(key);
      if (hit !== undefined || young.has(key)) return hit as V;
      if (!old.has(key)) return MISS;
      const aged = old.get(key) as V;
      old.delete(key);
      keep(key, aged);
      return aged;
    },
  };
}

/**
 * Values kept by a key together with what their computation read (a header's text, the macros in
 * effect where it is included): a value is reused only where `valid` finds every one of those
 * reads answered the same now, so a changed input computes afresh instead of reusing a stale
 * value. A key may hold a few values, one per context met (a header read with a macro defined in
 * one unit and not in another); the keys are kept as memoByText keeps them.
 */
export interface ReadsTable<R, V> {
  get(key: string, valid: (reads: R) => boolean): V | undefined;
  set(key: string, reads: R, value: V): void;
}

/** Contexts kept per key: a header is mostly read in one or two. */
const CONTEXTS_PER_KEY = 4;

export function readsTable<R, V>(name: TextTableName): ReadsTable<R, V> {
  const table = generations<Array<{ reads: R; value: V }>>(name);
  return {
    get(key, valid) {
      const entries = table.lookup(key);
      if (entries === MISS) return undefined;
      for (let i = 0; i < entries.length; i++)
        if (valid(entries[i].reads)) {
          // The context met most recently first: the next unit most likely reads it the same way.
          if (i > 0) entries.unshift(...entries.splice(i, 1));
          return entries[0].value;
        }
      return undefined;
    },
    set(key, reads, value) {
      const entries = table.lookup(key);
      if (entries !== MISS) {
        entries.unshift({ reads, value });
        if (entries.length > CONTEXTS_PER_KEY) entries.length = CONTEXTS_PER_KEY;
      } else table.keep(ownCopy(key), [{ reads, value }]);
    },
  };
}

/** `compute` memoized per object: worked out once per object (a version's text, a grammar), dropped with it. */
export function memoByObject<O extends object, V>(name: string, compute: (object: O) => V): (object: O) => V {
  let entries = new WeakMap<O, V>();
  registry.push({
    info: () => ({ name, keyedBy: 'object', size: null, capacity: null }),
    clear: () => (entries = new WeakMap()),
  });
  return (object: O) => {
    const kept = entries.get(object);
    if (kept !== undefined || entries.has(object)) return kept as V;
    const value = compute(object);
    entries.set(object, value);
    return value;
  };
}

/**
 * `compute` memoized per object while its other inputs stay the same (`same` compares the inputs it
 * was computed from with the new ones): a launch that a chunk kept from the previous version, read
 * with the same constants, has the same target, and a keystroke checks only the launches it changed.
 */
export function memoWhileSame<O extends object, I, V>(
  name: string,
  same: (kept: I, now: I) => boolean,
  compute: (object: O, inputs: I) => V,
): (object: O, inputs: I) => V {
  let entries = new WeakMap<O, { inputs: I; value: V }>();
  registry.push({
    info: () => ({ name, keyedBy: 'object', size: null, capacity: null }),
    clear: () => (entries = new WeakMap()),
  });
  return (object: O, inputs: I) => {
    const kept = entries.get(object);
    if (kept && same(kept.inputs, inputs)) return kept.value;
    const value = compute(object, inputs);
    entries.set(object, { inputs, value });
    return value;
  };
}

/** A table of entries per object, for the incremental layer's own bookkeeping (what it keeps, it decides). */
export interface ObjectTable<O extends object, V> {
  get(object: O): V | undefined;
  set(object: O, value: V): void;
  delete(object: O): void;
}

export function objectTable<O extends object, V>(name: string): ObjectTable<O, V> {
  let entries = new WeakMap<O, V>();
  registry.push({
    info: () => ({ name, keyedBy: 'object', size: null, capacity: null }),
    clear: () => (entries = new WeakMap()),
  });
  return {
    get: (object) => entries.get(object),
    set: (object, value) => void entries.set(object, value),
    delete: (object) => void entries.delete(object),
  };
}

/** A value made once per process (the parser's WebAssembly runtime), from the first call's arguments. */
export function once<A extends unknown[], V>(name: string, make: (...args: A) => V): (...args: A) => V {
  let made: { value: V } | null = null;
  registry.push({
    info: () => ({ name, keyedBy: 'process', size: made ? 1 : 0, capacity: 1 }),
    clear: () => undefined,
  });
  return (...args: A) => (made ??= { value: make(...args) }).value;
}

/** Numbers unique within the process, in order (ids of symbolic values, of lookup functions). */
export function counter(name: string): () => number {
  let next = 1;
  registry.push({ info: () => ({ name, keyedBy: 'process', size: next - 1, capacity: null }), clear: () => undefined });
  return () => next++;
}

/** A number per object, the same each time it is asked (a lookup function passed again is the same lookup). */
export function objectIds(name: string): (object: object) => number {
  const next = counter(`${name} (count)`);
  return memoByObject(name, () => next());
}
