/**
 * Reads a workspace's CUDA and C++ sources from disk into a WorkspaceIndex:
 * `.cu`, `.cuh`, `.h`, `.hpp` (and friends), skipping build and dependency
 * directories and files too large to be hand-written code. Used by the
 * language server and the CLI; the index itself stays pure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkspaceIndex } from '../core/facts/workspace-index';
import { readBoundedFileSync } from './bounded-read';

export const SOURCE_EXTENSIONS: readonly string[] = ['.cu', '.cuh', '.h', '.hpp', '.hh', '.hxx', '.inl', '.cuinl'];

/** Directory names never descended into. */
export const SKIPPED_DIRECTORIES: readonly string[] = [
  'node_modules', '.git', '.hg', '.svn', 'build', 'builds', 'out', 'dist', 'bin', 'obj',
  'cmake-build-debug', 'cmake-build-release', 'CMakeFiles', '_deps', '.cache', '.vscode-test', 'third_party', 'external', 'vendor', '__pycache__',
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
  const visited = new Set<string>();
  const realRoots = roots.map((r) => realPath(r)).filter((r): r is string => r !== null);
  const insideRoots = (real: string) => realRoots.some((root) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
  let truncated = false;
  const visit = (p: string, depth: number) => {
    if (truncated) return;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(p);
    } catch {
      skipped.push({ path: p, reason: 'unreadable' });
      return;
    }
    if (stat.isDirectory()) {
      if (depth > 0 && (skippedDirs.has(path.basename(p)) || path.basename(p).startsWith('.'))) return;
      if (depth > 32) return;
      const real = realPath(p);
      if (real === null) return;
      if (visited.has(real)) {
        if (depth > 0) skipped.push({ path: p, reason: 'a directory already read (a link loop or a second link to it)' });
        return;
      }
      if (depth > 0 && !insideRoots(real)) {
        skipped.push({ path: p, reason: `a link to ${real}, outside the workspace` });
        return;
      }
      if (visited.size >= maxDirectories) {
        truncated = true;
        return;
      }
      visited.add(real);
      let entries: string[];
      try {
        entries = fs.readdirSync(p).sort();
      } catch {
        skipped.push({ path: p, reason: 'unreadable' });
        return;
      }
      for (const entry of entries) visit(path.join(p, entry), depth + 1);
      return;
    }
    if (!stat.isFile() || !extensions.has(path.extname(p).toLowerCase())) return;
    if (stat.size > maxBytes) {
      skipped.push({ path: p, reason: `larger than ${maxBytes} bytes` });
      return;
    }
    if (files.length >= maxFiles) {
      truncated = true;
      return;
    }
    files.push(p);
  };
  for (const root of roots) visit(root, 0);
  return { files: [...new Set(files)].sort(), skipped, truncated };
}

function realPath(p: string): string | null {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return null;
  }
}

/** Index every source file under `roots`. Paths are indexed as `path.resolve` gives them, with `/` separators. */
export function indexWorkspace(roots: readonly string[], options: ScanOptions & { index?: WorkspaceIndex; includeDirs?: readonly string[] } = {}): { index: WorkspaceIndex; scan: ScanResult } {
  const index = options.index ?? new WorkspaceIndex({ includeDirs: (options.includeDirs ?? []).map(toIndexPath) });
  const scan = listSourceFiles(roots, options);
  for (const file of scan.files) updateFromDisk(index, file, options.maxFileBytes);
  return { index, scan };
}

/**
 * Re-read one file into the index (after a change on disk); removes it when it is gone, is not a regular
 * file, or is larger than `maxBytes` (default 1 MiB, as the scan's).
 */
export function updateFromDisk(index: WorkspaceIndex, file: string, maxBytes = 1024 * 1024): boolean {
  let text: string;
  try {
    text = readBoundedFileSync(file, { maxBytes }).text;
  } catch {
    index.remove(toIndexPath(file));
    return false;
  }
  index.update(toIndexPath(file), text);
  return true;
}

/** The key the index uses for a file on disk. */
export function toIndexPath(file: string): string {
  return path.resolve(file).split(path.sep).join('/');
}
