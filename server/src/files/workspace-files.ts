/**
 * Reads a workspace's CUDA and C++ sources from disk into a WorkspaceIndex:
 * `.cu`, `.cuh`, `.h`, `.hpp` (and friends), skipping build and dependency
 * directories and files too large to be hand-written code. Used by the
 * language server and the CLI; the index itself stays pure.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkspaceIndex } from '../core/facts/workspace-index';

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
  extensions?: readonly string[];
}

export interface ScanResult {
  files: string[];
  skipped: Array<{ path: string; reason: string }>;
  truncated: boolean;
}

/** The source files under `roots` (files or directories), sorted. */
export function listSourceFiles(roots: readonly string[], options: ScanOptions = {}): ScanResult {
  const maxBytes = options.maxFileBytes ?? 1024 * 1024;
  const maxFiles = options.maxFiles ?? 5000;
  const extensions = new Set(options.extensions ?? SOURCE_EXTENSIONS);
  const skippedDirs = new Set(SKIPPED_DIRECTORIES);
  const files: string[] = [];
  const skipped: ScanResult['skipped'] = [];
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

/** Index every source file under `roots`. Paths are indexed as `path.resolve` gives them, with `/` separators. */
export function indexWorkspace(roots: readonly string[], options: ScanOptions & { index?: WorkspaceIndex; includeDirs?: readonly string[] } = {}): { index: WorkspaceIndex; scan: ScanResult } {
  const index = options.index ?? new WorkspaceIndex({ includeDirs: (options.includeDirs ?? []).map(toIndexPath) });
  const scan = listSourceFiles(roots, options);
  for (const file of scan.files) updateFromDisk(index, file);
  return { index, scan };
}

/** Re-read one file into the index (after a change on disk); removes it when it is gone. */
export function updateFromDisk(index: WorkspaceIndex, file: string): boolean {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
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
