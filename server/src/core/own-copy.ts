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
 * Plain data (arrays, objects, strings, numbers) copied so that none of its strings refers to
 * the text it was cut from. For values kept across versions: a syntax node's text is a slice of
 * the document, so a cached result quoting one (memory parallelism's reasoning names the line it
 * stopped at) would keep that version's whole text alive, one version per kernel edited.
 */
export function detached<T>(value: T): T {
  if (typeof value === 'string') return ownCopy(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(detached) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = detached((value as Record<string, unknown>)[key]);
  return out as T;
}
