/** The CUDA files named on the command line: files as given, directories searched for .cu/.cuh. */
import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError } from './cli-io';

const CUDA_EXTENSIONS = new Set(['.cu', '.cuh']);
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'out', 'build', '.cache']);

export function collectSourceFiles(args: string[], cwd: string): string[] {
  const files: string[] = [];
  for (const arg of args) {
    const full = path.resolve(cwd, arg);
    let stat;
    try {
      stat = statSync(full);
    } catch {
      throw new UsageError(`cannot read ${arg}: no such file or directory`);
    }
    if (stat.isDirectory()) {
      const found = walk(full);
      if (found.length === 0) throw new UsageError(`no CUDA files (.cu, .cuh) under ${arg}`);
      files.push(...found);
    } else if (stat.isFile()) {
      files.push(full);
    } else {
      // A FIFO or a device would block the read (or never end).
      throw new UsageError(`cannot read ${arg}: not a regular file`);
    }
  }
  return [...new Set(files)];
}

function walk(dir: string): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) out.push(...walk(path.join(dir, entry.name)));
    } else if (entry.isFile() && CUDA_EXTENSIONS.has(path.extname(entry.name))) {
      out.push(path.join(dir, entry.name));
    }
  }
  return out;
}
