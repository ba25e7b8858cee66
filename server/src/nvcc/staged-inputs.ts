/**
 * Every path nvcc is given is one this tool made. nvcc runs its own stages (the host compiler, cicc, ptxas) with
 * `/bin/sh -c` and a command line it pastes paths into, in double quotes, where `$(...)` and backticks still
 * run: a file named `x$(cmd).cu` ran `cmd` when it was compiled. So a path that is not plain (isPlainPath) is
 * reached under a plain name inside the run's private temporary directory:
 *
 * - the source is copied to `src/NAME` (its own name when that is plain, else `unit.cu`): a link would not do,
 *   nvcc passes the source's real path on to cicc. Its folder is added with `-Xcompiler=-iquote,DIR` (through a
 *   link when that path is not plain either), so that `#include "x.h"` finds the headers beside it first, as
 *   before, and `#include <x.h>` does not;
 * - each include folder (`-I`, `-isystem`) whose path is not plain is reached through a link `inc/N`, and each
 *   `-include` file through a link to its folder;
 * - nvcc's messages and output name the copies and links; `mapNames` turns them back into the real paths.
 *
 * Plain paths are passed as they are, so that messages and cache keys stay as they were.
 */
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DIRECTORY_OPTIONS, isPathOption, isPlainPath, nvccOptionAt } from './argument-policy';

/** A name nvcc saw and the real path it stands for. */
export type StagedName = readonly [shown: string, real: string];

export interface StagedInputs {
  /** The source as nvcc is given it: the file itself when its path is plain, else a copy under a plain name. */
  readonly sourcePath: string;
  /** The flags, each path option's value reaching its folder or file under a plain name. */
  readonly flags: string[];
  /** The names nvcc is given for real paths, longest first (mapNames). */
  readonly names: readonly StagedName[];
}

const isWindows = process.platform === 'win32';

/**
 * The folder the runs' temporary directories are made in: os.tmpdir() when its path is plain, else /tmp.
 * nvcc pastes the temporary directory (TMPDIR) into its stages' command lines too.
 */
export function plainTempRoot(preferred: string = os.tmpdir()): string {
  return isWindows || isPlainPath(preferred) ? preferred : '/tmp';
}

/** Whether `file` and the path it really names are both plain. */
function plainBothWays(file: string): boolean {
  if (!isPlainPath(file)) return false;
  try {
    return isPlainPath(realpathSync(file));
  } catch {
    return true; // nothing there: nvcc says so, under the name given
  }
}

/**
 * Stages the source and the flags' paths in `dir` (the run's private temporary directory, itself plain).
 * `content` is what nvcc compiles (the bytes already read for the cache key); relative paths in the flags
 * resolve against `cwd`, as nvcc would resolve them.
 */
export async function stageInputs(options: {
  dir: string;
  filePath: string;
  content: Buffer;
  flags: readonly string[];
  cwd: string;
}): Promise<StagedInputs> {
  const filePath = path.resolve(options.filePath);
  if (isWindows) return { sourcePath: filePath, flags: [...options.flags], names: [] };
  const names: StagedName[] = [];
  let links = 0;
  const link = async (target: string): Promise<string> => {
    await fs.mkdir(path.join(options.dir, 'inc'), { recursive: true, mode: 0o700 });
    const at = path.join(options.dir, 'inc', String(links++));
    await fs.symlink(target, at);
    names.push([at, target]);
    return at;
  };

  let sourcePath = filePath;
  const quoteDirs: string[] = [];
  if (!plainBothWays(filePath)) {
    const base = path.basename(filePath);
    const name = isPlainPath(base) ? base : /\.cu$/i.test(base) ? 'unit.cu' : 'unit';
    await fs.mkdir(path.join(options.dir, 'src'), { mode: 0o700 });
    sourcePath = path.join(options.dir, 'src', name);
    await fs.writeFile(sourcePath, options.content, { mode: 0o600, flag: 'wx' });
    names.push([sourcePath, filePath]);
    const folder = path.dirname(filePath);
    quoteDirs.push(plainBothWays(folder) ? folder : await link(folder));
  }

  const flags: string[] = [];
  for (let i = 0; i < options.flags.length;) {
    const option = nvccOptionAt(options.flags, i);
    const written = options.flags.slice(i, i + option.span);
    i += option.span;
    if (!isPathOption(option) || !option.value) {
      flags.push(...written);
      continue;
    }
    // nvcc splits these values at commas: each piece is a path of its own. A folder is passed on as written;
    // nvcc may resolve a file (as it does the source), so a file's real path must be plain too.
    const isDirectory = DIRECTORY_OPTIONS.has(option.name!);
    const plain = (piece: string) =>
      isPlainPath(piece) && (isDirectory || plainBothWays(path.resolve(options.cwd, piece)));
    const pieces = option.value.split(',').filter((p) => p !== '');
    if (pieces.every(plain)) {
      flags.push(...written);
      continue;
    }
    for (const piece of pieces) {
      let staged = piece;
      if (!plain(piece)) {
        const absolute = path.resolve(options.cwd, piece);
        if (isDirectory) staged = await link(absolute);
        else {
          // A header's own `#include "..."` look beside it: link its folder when its name is plain.
          const base = path.basename(absolute);
          staged = isPlainPath(base) ? path.join(await link(path.dirname(absolute)), base) : await link(absolute);
        }
      }
      if (option.form === 'separate') flags.push(option.head, staged);
      else flags.push(`${option.head}${staged}`);
    }
  }
  for (const dir of quoteDirs) flags.push(`-Xcompiler=-iquote,${dir}`);
  names.sort((a, b) => b[0].length - a[0].length);
  return { sourcePath, flags, names };
}

/** `text` with each staged name turned back into the real path it stands for. Pure. */
export function mapNames(text: string, names: readonly StagedName[]): string {
  let out = text;
  for (const [shown, real] of names) if (out.includes(shown)) out = out.split(shown).join(real);
  return out;
}

/**
 * mapNames for PTX and SASS listings, whose file names are in double quotes: a real path that cannot stand
 * there (a quote, a backslash, a control character) keeps the staged name, whose file name is the real one's
 * where that is plain. Pure.
 */
export function mapNamesInListing(text: string, names: readonly StagedName[]): string {
  return mapNames(
    text,
    names.filter(([, real]) => !/["\\]/.test(real) && ![...real].some((c) => c.charCodeAt(0) < 0x20 || c === '\x7f')),
  );
}
