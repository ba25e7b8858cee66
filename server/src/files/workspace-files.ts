/**
 * Reads a workspace's CUDA and C++ sources from disk into a WorkspaceIndex:
 * `.cu`, `.cuh`, `.h`, `.hpp` (and friends), skipping build and dependency
 * directories and files too large to be hand-written code. Used by the
 * language server and the CLI; the index itself stays pure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkspaceIndex } from '../core/analyzer';
import { readBoundedFileSync } from './bounded-read';
import { walkFolders } from './folder-walk';
import type { UnitFlags } from '../core/analyzer';

export const SOURCE_EXTENSIONS: readonly string[] = ['.cu', '.cuh', '.h', '.hpp', '.hh', '.hxx', '.inl', '.cuinl'];

/** Directory names never descended into. */
export const SKIPPED_DIRECTORIES: readonly string[] = [
  'node_modules',
  '.git',
  '.hg',
  '.svn',
  'build',
  'builds',
  'out',
  'dist',
  'bin',
  'obj',
  'cmake-build-debug',
  'cmake-build-release',
  'CMakeFiles',
  '_deps',
  '.cache',
  '.vscode-test',
  'third_party',
  'external',
  'vendor',
  '__pycache__',
];

export interface ScanOptions {
  /** Files above this size are skipped (generated tables, amalgamations). Default 1 MiB. */
  maxFileBytes?: number;
  /** Stop after this many files. Default 5000. */
  maxFiles?: number;
  /** Stop after reading this many directories. Default 20000. */
  maxDirectories?: number;
  extensions?: readonly string[];
}

export interface ScanResult {
  files: string[];
  skipped: Array<{ path: string; reason: string }>;
  truncated: boolean;
}

/**
 * The source files under `roots` (files or directories), sorted. Directories are walked by their real paths:
 * each is read once however many links lead to it (a link loop, `a -> .`, ends there), and a linked directory
 * whose real path lies outside every root (a link to `/`) is not followed. Linked files are followed to what
 * they name; only regular files are listed.
 */
export function listSourceFiles(roots: readonly string[], options: ScanOptions = {}): ScanResult {
  const maxBytes = options.maxFileBytes ?? 1024 * 1024;
  const maxFiles = options.maxFiles ?? 5000;
  const maxDirectories = options.maxDirectories ?? 20_000;
  const extensions = new Set(options.extensions ?? SOURCE_EXTENSIONS);
  const skippedDirs = new Set(SKIPPED_DIRECTORIES);
  const files: string[] = [];
  const skipped: ScanResult['skipped'] = [];
  const { truncated } = walkFolders(roots, {
    skipFolder: (name) => skippedDirs.has(name) || name.startsWith('.'),
    maxDirectories,
    rootsAre: 'the workspace',
    onSkip: (p, reason) => skipped.push({ path: p, reason }),
    onFile: (p, stat) => {
      if (!extensions.has(path.extname(p).toLowerCase())) return true;
      if (stat.size > maxBytes) {
        skipped.push({ path: p, reason: `larger than ${maxBytes} bytes` });
        return true;
      }
      if (files.length >= maxFiles) return false;
      files.push(p);
      return true;
    },
  });
  return { files: [...new Set(files)].sort(), skipped, truncated };
}

/** Index every source file under `roots`. Paths are indexed as `path.resolve` gives them, with `/` separators. */
export function indexWorkspace(
  roots: readonly string[],
  options: ScanOptions & {
    index?: WorkspaceIndex;
    includeDirs?: readonly string[];
    /** Told of each file whose indexing failed (it is left out; the others are indexed). */
    onError?: IndexErrorListener;
  } = {},
): { index: WorkspaceIndex; scan: ScanResult } {
  const index = options.index ?? new WorkspaceIndex({ includeDirs: (options.includeDirs ?? []).map(toIndexPath) });
  const scan = listSourceFiles(roots, options);
  for (const file of scan.files) updateFromDisk(index, file, options.maxFileBytes, options.onError);
  return { index, scan };
}

export type IndexErrorListener = (file: string, message: string) => void;

/**
 * Index one file's text; false when its indexing throws: it is then left out of the index, and `onError` told,
 * so that one file's failure is that file's alone, never the rest of the index's.
 */
export function indexText(index: WorkspaceIndex, file: string, text: string, onError?: IndexErrorListener): boolean {
  try {
    index.update(toIndexPath(file), text);
    return true;
  } catch (error) {
    index.remove(toIndexPath(file));
    onError?.(file, error instanceof Error ? error.message : String(error));
    return false;
  }
}

/**
 * Re-read one file into the index (after a change on disk); removes it when it is gone, is not a regular
 * file, or is larger than `maxBytes` (default 1 MiB, as the scan's), or when its indexing fails (indexText).
 */
export function updateFromDisk(
  index: WorkspaceIndex,
  file: string,
  maxBytes = 1024 * 1024,
  onError?: IndexErrorListener,
): boolean {
  let text: string;
  try {
    text = readBoundedFileSync(file, { maxBytes }).text;
  } catch {
    index.remove(toIndexPath(file));
    return false;
  }
  return indexText(index, file, text, onError);
}

/** The key the index uses for a file on disk. */
export function toIndexPath(file: string): string {
  return path.resolve(file).split(path.sep).join('/');
}

/**
 * Index, from disk, the headers that indexed files include and the index lacks: an `#include
 * "..."` beside the including file or in its include directories (WorkspaceIndex.setIncludeDirs),
 * an `#include <dir/x.h>` there too; then what those include, at most `maxFiles` in all. Headers
 * outside the checked folders (`#include "../common/config.h"`, `-I include`) then resolve.
 * Not the toolkit's or the system's headers: only the project's constants matter here.
 */
export function indexIncludedFiles(
  index: WorkspaceIndex,
  options: { maxFiles?: number; maxFileBytes?: number } = {},
): string[] {
  const maxFiles = options.maxFiles ?? 2000;
  const maxBytes = options.maxFileBytes ?? 1024 * 1024;
  const queue = index.paths();
  const seen = new Set(queue);
  const added: string[] = [];
  while (queue.length && added.length < maxFiles) {
    const from = queue.shift()!;
    for (const include of index.entry(from)?.includes ?? []) {
      if (include.system && !include.target.includes('/')) continue;
      for (const candidate of index.includeCandidates(from, include)) {
        if (seen.has(candidate)) break;
        if (TOOLKIT_PATH.test(candidate) || !isSmallFile(candidate, maxBytes)) continue;
        seen.add(candidate);
        if (updateFromDisk(index, candidate)) {
          added.push(candidate);
          queue.push(candidate);
        }
        break;
      }
    }
  }
  return added;
}

/** Where toolkits and the system keep their headers (`/usr/local/cuda/include`, `/opt/nvidia/hpc_sdk/...`). */
const TOOLKIT_PATH =
  /^\/usr\/(?:local\/)?include\/|\/cuda[-\d.]*\/(?:targets\/[^/]+\/)?include\/|\/(?:nvhpc|hpc_sdk)\/|^\/(?:Library|System)\/|^[A-Za-z]:\/Program Files/;

function isSmallFile(file: string, maxBytes: number): boolean {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() && stat.size <= maxBytes;
  } catch {
    return false;
  }
}

/**
 * Each unit's preprocessor flags from the compile flags `resolve` gives its file (nvcc's), read once
 * per file: the analyzer asks for them at every analysis of the unit.
 */
export function unitFlagsPerFile(
  resolve: (file: string) => { flags: readonly string[]; cwd: string | null },
): (file: string) => UnitFlags {
  const known = new Map<string, UnitFlags>();
  return (file) => {
    let flags = known.get(file);
    if (!flags) {
      const resolved = resolve(file);
      flags = unitFlagsOfFlags(resolved.flags, resolved.cwd);
      known.set(file, flags);
    }
    return flags;
  };
}

/** The include folders named by compiler flags: `-I dir`, `-Idir`, `-isystem dir`, `--include-path=dir`, relative ones from `cwd`. */
/**
 * What a compile command's flags tell the preprocessor of its translation unit: `-D`/`-U` in order,
 * `-I`, `-iquote`, `-isystem`, `-include`, and the C++ standard.
 */
export function unitFlagsOfFlags(flags: readonly string[], cwd: string | null): UnitFlags {
  const resolve = (p: string) => toIndexPath(cwd ? path.resolve(cwd, p) : path.resolve(p));
  const out: Required<Pick<UnitFlags, 'macros' | 'includeDirs' | 'quoteDirs' | 'systemDirs' | 'forcedIncludes'>> &
    UnitFlags = {
    macros: [],
    includeDirs: [],
    quoteDirs: [],
    systemDirs: [],
    forcedIncludes: [],
  };
  const macros = out.macros as Array<{ name: string; value: string | null } | { name: string; undefine: true }>;
  for (let k = 0; k < flags.length; k++) {
    const flag = flags[k];
    const value = (short: string, long?: string): string | null => {
      if (flag === short || (long && flag === long)) return k + 1 < flags.length ? flags[++k] : null;
      if (flag.startsWith(short) && flag.length > short.length) return flag.slice(short.length).replace(/^=/, '');
      if (long && flag.startsWith(`${long}=`)) return flag.slice(long.length + 1);
      return null;
    };
    let v: string | null;
    if ((v = value('-D', '--define-macro')) !== null) {
      const eq = v.indexOf('=');
      macros.push(eq < 0 ? { name: v, value: null } : { name: v.slice(0, eq), value: v.slice(eq + 1) });
    } else if ((v = value('-U', '--undefine-macro')) !== null) macros.push({ name: v, undefine: true });
    else if ((v = value('-isystem')) !== null) (out.systemDirs as string[]).push(resolve(v));
    else if ((v = value('-iquote')) !== null) (out.quoteDirs as string[]).push(resolve(v));
    else if ((v = value('-I', '--include-path')) !== null) (out.includeDirs as string[]).push(resolve(v));
    else if ((v = value('-include', '--pre-include')) !== null) (out.forcedIncludes as string[]).push(resolve(v));
    else {
      const std = /^(?:-std=|--std=|--std\s*)c\+\+(\d+)$/.exec(flag);
      if (std) out.std = Number(std[1]);
    }
  }
  return out;
}

export function includeDirsOfFlags(flags: readonly string[], cwd: string | null): string[] {
  const dirs: string[] = [];
  const add = (dir: string) => dirs.push(toIndexPath(cwd ? path.resolve(cwd, dir) : path.resolve(dir)));
  for (let k = 0; k < flags.length; k++) {
    const flag = flags[k];
    const joined = /^(?:-I|--include-path=|-isystem=?|-iquote=?)(.+)$/.exec(flag);
    if (joined && !/^(?:-isystem|-iquote)$/.test(flag)) add(joined[1]);
    else if (
      (flag === '-I' || flag === '-isystem' || flag === '-iquote' || flag === '--include-path') &&
      k + 1 < flags.length
    )
      add(flags[++k]);
  }
  return dirs;
}
