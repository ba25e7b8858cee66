/**
 * The one seam for what the core does because of how V8 runs it, not because of CUDA. Each trick
 * here was kept because `npm run bench` measured it paying (docs/performance.md has the figures);
 * the analysis calls these by name and never repeats the trick itself.
 * - ownCopy, detach, plainCopy: strings and data kept between versions must not be slices of a
 *   document's text, or they keep every version's whole text alive.
 * - keepAlive: objects of a hidden class V8 must not forget (it throws away the code optimized
 *   against a class when a full collection finds none of its objects alive).
 * - hiddenMemo: a result memoized on an immutable object, out of sight (not enumerable: JSON,
 *   spreads and deep equality do not see it); cheaper than a WeakMap look-up on a hot path.
 */

/**
 * A string that holds no reference to the text it was cut from. V8 represents a
 * slice of 13 characters or more as a view into its parent, so a short name kept
 * in a long-lived cache would otherwise keep a whole document's text alive (every
 * version of every file it was read from).
 */
export function ownCopy(text: string): string {
  // Concatenating makes a new string; slicing it flattens that into fresh memory.
  return text.length > 12 ? (text + ' ').slice(0, -1) : text;
}

/**
 * Plain data, fresh from a pass and changed in place, whose strings share nothing with the
 * document's text. A string sliced from a larger one keeps all of it alive, and results kept
 * between versions (text passes per chunk, kernel-body passes per kernel) would otherwise hold on
 * to the whole text of every version they were computed in: a syntax node's text is such a slice,
 * and memory parallelism's reasoning quotes one.
 */
export function detach<T>(value: T): T {
  if (typeof value === 'string') return ownCopy(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = detach(value[i]);
    return value;
  }
  if (value instanceof Map) {
    const entries = [...value].map(([k, v]) => [detach(k), detach(v)] as const);
    value.clear();
    for (const [k, v] of entries) value.set(k, v);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const k in record) {
    const v = record[k];
    if (v !== null && (typeof v === 'object' || (typeof v === 'string' && v.length > 12))) record[k] = detach(v);
  }
  return value;
}

/**
 * A fresh copy of JSON-like data (records, arrays, strings, finite numbers, booleans, null), for
 * a cache that outlives the results it copies: it shares no object and no string with `value`, so
 * the text its strings were cut from, and entries other caches key by its objects (WeakMaps), can
 * die with their owner. A JSON round trip: V8 builds the copy's objects with shared shapes and
 * in-object fields, about two thirds of the size of a copy made field by field.
 */
export function plainCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const keptAlive: unknown[] = [];

/** Keep `objects` reachable for as long as the process runs (see the module comment). */
export function keepAlive(objects: readonly unknown[]): void {
  keptAlive.push(...objects);
}

/** A memo stored on its (immutable) object under a private symbol. */
export interface HiddenMemo<O extends object, V> {
  get(object: O): V | undefined;
  set(object: O, value: V): V;
}

export function hiddenMemo<O extends object, V>(name: string): HiddenMemo<O, V> {
  const key = Symbol(name);
  return {
    get: (object) => (object as Record<symbol, V | undefined>)[key],
    set: (object, value) => {
      Object.defineProperty(object, key, { value });
      return value;
    },
  };
}
