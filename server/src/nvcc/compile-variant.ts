/**
 * ptxas figures of a variant of a file: the file's text with a fix applied (a `__launch_bounds__`
 * added) or with extra flags (`-maxrregcount=N`), compiled like the file itself (compile-resources.ts:
 * its flags, time limit, memory limit, cancellation and cache) from a copy in a fresh temporary
 * directory that is always removed. The copy keeps the file's name, and the file's folder is added
 * to the include path so its `#include "..."` still resolve.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { compileResources, type ArchFigures, type CompileResourcesResult } from './compile-resources';
import type { ResourceCache } from './resource-cache';
import { plainTempRoot } from './staged-inputs';
import { trackTempDir } from './nvcc-runner';

export interface CompileVariantOptions {
  readonly nvccPath: string;
  /** The file the variant is of. */
  readonly filePath: string;
  /** The variant's full text. */
  readonly text: string;
  /** Added after the file's flags; a `-maxrregcount` here replaces the file's own. */
  readonly extraFlags: readonly string[];
  readonly archs: readonly string[];
  readonly flags: readonly string[];
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly cache?: ResourceCache<ArchFigures> | null;
  readonly memoryLimitBytes?: number;
  readonly tempRoot?: string;
}

const MAXRREGCOUNT = /^--?maxrregcount(=|$)/;

export async function compileVariant(options: CompileVariantOptions): Promise<CompileResourcesResult> {
  const dir = await fs.mkdtemp(path.join(plainTempRoot(options.tempRoot ?? os.tmpdir()), 'cuda-occupancy-variant-'));
  const untrack = trackTempDir(dir);
  try {
    const copy = path.join(dir, path.basename(options.filePath));
    await fs.writeFile(copy, options.text);
    return await compileResources({
      nvccPath: options.nvccPath,
      filePath: copy,
      archs: options.archs,
      flags: variantFlags(options.flags, options.extraFlags, path.dirname(options.filePath)),
      cwd: options.cwd,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      cache: options.cache,
      memoryLimitBytes: options.memoryLimitBytes,
    });
  } finally {
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    untrack();
  }
}

/** The file's flags (less its `-maxrregcount` when the variant sets one, with its value), its folder as an include path, then the variant's. Pure. */
export function variantFlags(flags: readonly string[], extra: readonly string[], fileDir: string): string[] {
  const replaces = extra.some((f) => MAXRREGCOUNT.test(f));
  const kept: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (replaces && MAXRREGCOUNT.test(flags[i])) {
      if (!flags[i].includes('=')) i++;
      continue;
    }
    kept.push(flags[i]);
  }
  return [...kept, `-I${fileDir}`, ...extra];
}
