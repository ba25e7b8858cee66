/**
 * The block sizes a launch can take when the source fixes a few but not which one: a ternary on
 * a run-time condition, a local an if-chain or a `switch` changes before the launch
 * (`threads <<= 1` for wide rows), a `dim3` of those. Each is a row of the hover and of the CLI's
 * `blockCandidates`. Null when the set is not fixed by the source: null beats wrong.
 */
import type { Dim3 } from '../types';
import { MAX_CONSTANT_DEPTH, type ConstantTable } from '../text/constant-table';
import type { Lookup } from '../text/const-eval';
import { evaluateSet, MAX_VALUES, valuesAt, type SetLookup, type ValueSet } from '../text/value-sets';
import { splitTopLevel } from '../text/source-text';

/**
 * The blocks `text` (a launch's block argument, written at `at` in `masked`) can be, read with the
 * tables and lookup in view there; at least two, else null (one value is a block size, not a set).
 */
export function blockCandidates(
  text: string,
  tables: readonly ConstantTable[],
  lookup: Lookup,
  masked: string,
  at: number,
): Dim3[] | null {
  const values = setLookup(tables, lookup, masked, at);
  const args = dim3Args(text.trim(), tables);
  const sets: ValueSet[] = [];
  for (const arg of args) {
    const set = evaluateSet(arg, values);
    if (!set || set.length === 0) return null;
    sets.push(set);
  }
  while (sets.length < 3) sets.push([1]);
  const out: Dim3[] = [];
  for (const x of sets[0]) for (const y of sets[1]) for (const z of sets[2]) out.push({ x, y, z });
  if (out.length < 2 || out.length > MAX_VALUES) return null;
  return out.sort((a, b) => a.x * a.y * a.z - b.x * b.y * b.z || a.x - b.x || a.y - b.y);
}

/** The components of a block argument: `dim3(a, b)`, `{a, b}`, a `dim3` variable's, or one scalar. */
function dim3Args(text: string, tables: readonly ConstantTable[]): string[] {
  const inner = /^dim3\s*[({]([\s\S]*)[)}]$/.exec(text)?.[1] ?? /^\{([\s\S]*)\}$/.exec(text)?.[1];
  if (inner !== undefined) return splitTopLevel(inner, 0, inner.length).map(([a, b]) => inner.slice(a, b));
  if (/^[A-Za-z_]\w*$/.test(text)) {
    for (const table of tables) {
      const def = table.dim3s.get(text);
      if (def) return def.args.length ? def.args : [text];
      if (table.constants.has(text) || table.shadowed?.has(text)) break;
    }
  }
  return [text];
}

/**
 * A name's values at `at`: its constant value, the values of its definition's expression (a
 * ternary), or, for a local assigned again, those its statements leave at `at`.
 */
function setLookup(tables: readonly ConstantTable[], lookup: Lookup, masked: string, at: number): SetLookup {
  const seen = new Set<string>();
  const self: SetLookup = (name) => {
    const value = lookup(name);
    if (value !== null) return [value];
    // A name defined through more names than a constant may be (MAX_CONSTANT_DEPTH): unknown, not a stack overflow.
    if (seen.has(name) || seen.size >= MAX_CONSTANT_DEPTH) return null;
    seen.add(name);
    try {
      for (const table of tables) {
        const local = table.reassigned
          ?.get(name)
          ?.filter((r) => r.from <= at && at <= r.until)
          .sort((a, b) => b.from - a.from)[0];
        if (local) {
          const init = evaluateSet(local.init, self);
          if (!init) return null;
          return valuesAt(masked, name, init, local.from, at, (text, own) =>
            evaluateSet(text, (n) => (n === name ? own : self(n))),
          );
        }
        if (table.shadowed?.has(name)) return null;
        const def = table.constants.get(name);
        if (def) return def.expr ? evaluateSet(def.expr, self) : null;
      }
      return null;
    } finally {
      seen.delete(name);
    }
  };
  return self;
}
