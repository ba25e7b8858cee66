/**
 * The CUDA files named on the command line: files as given; directories searched for .cu/.cuh, and
 * for C++ headers that hold CUDA code (a kernel or a launch), which the units including them compile.
 * C++ sources of the directories are candidates besides: those that call a launcher of the
 * workspace (a host function another unit defines) launch through it.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError } from './cli-io';

const CUDA_EXTENSIONS = new Set(['.cu', '.cuh']);
/** Headers a `.cu` may include; checked when they hold CUDA code (header-only libraries keep their kernels there). */
const HEADER_EXTENSIONS = new Set(['.h', '.hpp', '.hh', '.hxx', '.inl', '.ipp', '.cuinl']);
/** Headers larger than this are not read to find out (the workspace index's limit for a file). */
const MAX_HEADER_PROBE = 1024 * 1024;
/** C++ sources, which may call a launcher a `.cu` defines (cuda-samples' `main.cpp`). */
const CPP_SOURCE_EXTENSIONS = new Set(['.cpp', '.cc', '.cxx']);
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

/** The C++ sources under the directories named on the command line (see callersNaming). */
export function collectCppSources(args: string[], cwd: string): string[] {
  const out: string[] = [];
  for (const arg of args) {
    const full = path.resolve(cwd, arg);
    try {
      if (statSync(full).isDirectory()) out.push(...walk(full, CPP_SOURCE_EXTENSIONS));
    } catch {
      // collectSourceFiles says why.
    }
  }
  return [...new Set(out)];
}

/** Of `files`, those whose text names one of `names` as a call (`name(`): a cheap filter before they are read. */
export function callersNaming(files: readonly string[], names: ReadonlySet<string>): string[] {
  const words = [...names].filter((n) => /^[A-Za-z_]\w*$/.test(n));
  if (words.length === 0) return [];
  const call = new RegExp(`\\b(?:${words.join('|')})\\s*\\(`);
  return files.filter((file) => {
    try {
      return statSync(file).size <= MAX_HEADER_PROBE && call.test(readFileSync(file, 'latin1'));
    } catch {
      return false;
    }
  });
}

function walk(dir: string, only?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.'))
        out.push(...walk(path.join(dir, entry.name), only));
    } else if (only) {
      if (entry.isFile() && only.has(path.extname(entry.name).toLowerCase())) out.push(path.join(dir, entry.name));
    } else if (entry.isFile() && CUDA_EXTENSIONS.has(path.extname(entry.name))) {
      out.push(path.join(dir, entry.name));
    } else if (entry.isFile() && HEADER_EXTENSIONS.has(path.extname(entry.name).toLowerCase())) {
      const file = path.join(dir, entry.name);
      if (holdsCudaCode(file)) out.push(file);
    }
  }
  return out;
}

/** A kernel or a launch in the text (`__global__`, `<<<` not part of a merge marker's `<<<<<<<`). */
function holdsCudaCode(file: string): boolean {
  try {
    if (statSync(file).size > MAX_HEADER_PROBE) return false;
    const text = readFileSync(file, 'latin1');
    return text.includes('__global__') || /(?:^|[^<])<<<(?!<)/m.test(text);
  } catch {
    return false;
  }
}
