/** The same items in the same order, compared by identity: what the caches kept between versions check their inputs with. */
export function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
