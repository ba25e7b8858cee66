/**
 * The headers a file includes, followed transitively, as far as they can be known without running the
 * preprocessor: for the cache key (their size and time) and, before nvcc starts, to refuse a compile that would
 * read what never ends or is far too large. gcc reads a header whole into memory: an `#include` of `/dev/zero`
 * grows it to the address-space limit (2 GB, 4 to 6 s, under the default 4 GiB limit), a FIFO blocks it until
 * the time limit, a 3 GB sparse header costs 3.7 GB and nearly a minute. Here each is one line, in milliseconds.
 *
 * `#include "x"` is looked up next to the including file, then in the include paths; `#include <x>` in the
 * include paths only (system headers change with the toolkit, whose version is part of the key), and an
 * absolute name as it is. `#include NAME` is followed when some file of the closure has `#define NAME "x"` or
 * `<x>`. No preprocessor runs, so includes under inactive `#if` branches count too (a harmless
 * over-approximation); an include computed another way is not seen here, and is left to nvcc's limits.
 */
import { promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { readBoundedFile } from '../files/bounded-read';
import { DIRECTORY_OPTIONS, isPathOption, nvccOptionAt } from './argument-policy';

export interface IncludeStamp {
  readonly path: string;
  /** null when the include could not be found (a later appearance must change the key). */
  readonly mtimeMs: number | null;
  readonly size: number | null;
}

/** An include nvcc must not be given: what it names and why. */
export interface RefusedInclude {
  /** The file it resolves to. */
  readonly path: string;
  /** The file that includes it. */
  readonly from: string;
  /** `a FIFO, not a regular file`, `3072 MiB, over the 64 MiB limit`. */
  readonly reason: string;
}

export interface IncludeClosure {
  readonly stamps: IncludeStamp[];
  readonly refused: RefusedInclude[];
}

const INCLUDE_LINE =
  /^[ \t]*#[ \t]*(?:include|include_next|import)[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>|([A-Za-z_][A-Za-z0-9_]*)[ \t]*$)/gm;
const DEFINE_LINE = /^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]+(?:"([^"\n]+)"|<([^>\n]+)>)[ \t]*$/gm;
/** Headers larger than this are stamped and checked, but not read for their own includes. */
const MAX_SCANNED_BYTES = 8 * 1024 * 1024;

export async function walkIncludeClosure(options: {
  filePath: string;
  /** The file's text, when already read. */
  text?: string;
  includePaths?: readonly string[];
  /** Files the compile includes first (`-include`). */
  preIncludes?: readonly string[];
  /** Headers stamped at most (the walk stops there). Default 256. */
  maxFiles?: number;
  /** A header larger than this is refused. Default: no limit. */
  maxHeaderBytes?: number;
}): Promise<IncludeClosure> {
  const maxFiles = options.maxFiles ?? 256;
  const maxHeaderBytes = options.maxHeaderBytes ?? Infinity;
  const includePaths = options.includePaths ?? [];
  const stamps = new Map<string, IncludeStamp>();
  const refused: RefusedInclude[] = [];
  const macros = new Map<string, { quoted: boolean; name: string }>();
  const root = path.resolve(options.filePath);
  const queue: Array<{ file: string; text: string | null }> = [{ file: root, text: options.text ?? null }];
  const seen = new Set<string>([root]);

  /** A found include: stamped, refused, or queued to be read in turn. */
  const visit = (found: string, stat: Stats, from: string): void => {
    if (seen.has(found)) return;
    seen.add(found);
    const reason = !stat.isFile()
      ? `${kindOf(stat)}, not a regular file`
      : stat.size > maxHeaderBytes
        ? `${mebibytes(stat.size)} MiB, over the ${mebibytes(maxHeaderBytes)} MiB limit`
        : null;
    if (reason) {
      refused.push({ path: found, from, reason });
      return;
    }
    stamps.set(found, { path: found, mtimeMs: stat.mtimeMs, size: stat.size });
    if (stamps.size < maxFiles) queue.push({ file: found, text: null });
  };

  for (const file of options.preIncludes ?? []) {
    const stat = await statOf(file);
    if (stat && !stat.isDirectory()) visit(path.resolve(file), stat, '-include');
  }

  while (queue.length > 0 && stamps.size < maxFiles) {
    const { file, text: known } = queue.shift()!;
    let text = known;
    if (text === null) {
      try {
        text = (await readBoundedFile(file, { maxBytes: MAX_SCANNED_BYTES })).text;
      } catch {
        continue; // gone, or too large to scan (its size was checked when it was found)
      }
    }
    for (const match of text.matchAll(DEFINE_LINE)) {
      macros.set(match[1], { quoted: match[2] !== undefined, name: match[2] ?? match[3] });
    }
    for (const match of text.matchAll(INCLUDE_LINE)) {
      const named = match[3] !== undefined ? macros.get(match[3]) : undefined;
      if (match[3] !== undefined && !named) continue; // a macro this scan cannot expand
      const quoted = named ? named.quoted : match[1] !== undefined;
      const name = named ? named.name : (match[1] ?? match[2]);
      const dirs = path.isAbsolute(name) ? ['/'] : quoted ? [path.dirname(file), ...includePaths] : [...includePaths];
      let found = false;
      for (const dir of dirs) {
        const candidate = path.resolve(dir, name);
        const stat = await statOf(candidate);
        // The preprocessor passes over a directory, and opens anything else it finds first.
        if (!stat || stat.isDirectory()) continue;
        visit(candidate, stat, file);
        found = true;
        break;
      }
      if (!found && quoted)
        stamps.set(`missing:${file}:${name}`, { path: `${name} (from ${file})`, mtimeMs: null, size: null });
      if (stamps.size >= maxFiles) break;
    }
  }
  return { stamps: [...stamps.values()], refused };
}

/** The include folders (`-I`, `-isystem`) and pre-included files (`-include`) of nvcc flags, resolved against `cwd`. Pure. */
export function pathOptionsOf(
  flags: readonly string[],
  cwd: string,
): { includePaths: string[]; preIncludes: string[] } {
  const includePaths: string[] = [];
  const preIncludes: string[] = [];
  for (let i = 0; i < flags.length;) {
    const option = nvccOptionAt(flags, i);
    i += option.span;
    if (!isPathOption(option)) continue;
    for (const piece of option.value!.split(',').filter(Boolean))
      (DIRECTORY_OPTIONS.has(option.name!) ? includePaths : preIncludes).push(path.resolve(cwd, piece));
  }
  return { includePaths, preIncludes };
}

/** One line for a refused include. */
export function refusedIncludeLine(refused: RefusedInclude): string {
  return `refused to compile: ${refused.from} includes ${refused.path}, ${refused.reason}`;
}

async function statOf(file: string): Promise<Stats | null> {
  try {
    return await fs.stat(file);
  } catch {
    return null;
  }
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

function mebibytes(bytes: number): string {
  return String(Math.round((bytes / (1024 * 1024)) * 10) / 10);
}
