/**
 * Which `.cu` files to compile for the kernels of a header: ptxas figures exist only for a
 * translation unit, and a header's kernel is compiled by the units that include it (a template
 * only by those that launch or instantiate it). Of the files that include the header (the
 * workspace index's answer), those `compile_commands.json` lists come first, then those that name
 * one of the header's kernels, nearest first; a few at most, as each is a full nvcc run.
 */
import { readFileSync } from 'node:fs';

export interface UnitsForHeaderInput {
  /** The `.cu` and other files that include the header, directly or not, nearest first (WorkspaceIndex.includersOf). */
  includers: readonly string[];
  /** Files compile_commands.json lists (absolute paths). */
  databaseFiles: ReadonlySet<string>;
  /** The names of the kernels written in the header. */
  kernelNames: readonly string[];
  /** At most this many units (default 3). */
  limit?: number;
  /** Reads a file (default: from disk); null when it cannot. */
  readText?: (file: string) => string | null;
}

export function unitsForHeader({
  includers,
  databaseFiles,
  kernelNames,
  limit = 3,
  readText = readOrNull,
}: UnitsForHeaderInput): string[] {
  const units = includers.filter((f) => /\.cu$/i.test(f));
  if (units.length === 0 || kernelNames.length === 0) return [];
  const names = new RegExp(`\\b(?:${[...new Set(kernelNames)].map(escape).join('|')})\\b`);
  const scored = units.map((file, order) => {
    const text = readText(file);
    const names_ = text !== null && names.test(text);
    return { file, order, score: (databaseFiles.has(file) ? 2 : 0) + (names_ ? 1 : 0) };
  });
  // A unit that neither the build lists nor names a kernel may still instantiate one through
  // another header: kept last, as a plain kernel of the header compiles in any unit.
  return scored
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit)
    .map((s) => s.file);
}

function escape(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
