/**
 * Register and shared-memory figures for a saved file, straight from ptxas: nvcc compiles the file in
 * place with `-Xptxas -v`, writing its outputs (and its own temporary files) only into a fresh temporary
 * directory that is always removed. One invocation covers every architecture not already cached; the
 * result is cached per architecture.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  parsePtxasOutput,
  type PtxasDiagnostic,
  type PtxasFunctionFigures,
  type PtxasModuleFigures,
} from '../core/analyzer';
import { nvccVersion, runNvcc, trackTempDir, type NvccRunResult } from './nvcc-runner';
import { resourceCacheKey, type ResourceCache } from './resource-cache';
import { readBoundedFile } from '../files/bounded-read';
import { looksLikePtx } from './compile-ptx';
import { pathOptionsOf, refusedIncludeLine, walkIncludeClosure } from './include-closure';
import { mapNames, mapNamesInListing, plainTempRoot, stageInputs, type StagedName } from './staged-inputs';

/** What one architecture's compile yields; also what the cache stores. */
export interface ArchFigures {
  readonly arch: string;
  readonly entries: readonly PtxasFunctionFigures[];
  readonly functions: readonly PtxasFunctionFigures[];
  readonly modules: readonly PtxasModuleFigures[];
  readonly diagnostics: readonly PtxasDiagnostic[];
  /** ms since epoch */
  readonly producedAt: number;
  readonly nvccVersion: string;
}

export interface CompilerMessage {
  readonly file: string | null;
  /** 1-based, or null when the message has no position. */
  readonly line: number | null;
  readonly column: number | null;
  readonly message: string;
  /** The line as the compiler printed it. */
  readonly text: string;
}

export type CompileMode = 'one-invocation' | 'per-arch';

export interface CompileResourcesOptions {
  readonly nvccPath: string;
  readonly filePath: string;
  /** `sm_80`, `sm_90a`... */
  readonly archs: readonly string[];
  /** Flags from compile_commands.json or settings (`resolveCompileFlags`). */
  readonly flags?: readonly string[];
  readonly cwd?: string | null;
  /** Limit for each nvcc run. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Default 'one-invocation': all uncached archs in one nvcc run. Measured (nvcc 13.0, 2 cores, 5 archs): within
   *  ±15% of one run per arch, either way; one run means one process tree to watch and kill. */
  readonly mode?: CompileMode;
  readonly cache?: ResourceCache<ArchFigures> | null;
  /** Where to create the temporary directory; default os.tmpdir(). */
  readonly tempRoot?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: () => number;
  /** The address space each process of an nvcc run may use, in bytes (see runNvcc); none when omitted. */
  readonly memoryLimitBytes?: number;
  /** The largest source file read (for the cache key); default 64 MiB. */
  readonly maxFileBytes?: number;
  /**
   * Keep each arch's PTX (with `.loc` lines) and cubin from the compile itself, for the register pressure and
   * SASS passes: `-lineinfo -keep -keep-dir` into the run's private temporary directory, read back (bounded)
   * before it is removed. -lineinfo leaves every register, spill, stack and shared-memory figure as it is
   * (measured on the development corpus: docs/register-pressure.md). Nothing is kept for cached archs.
   */
  readonly keep?: boolean;
  /** The largest kept file read back; default 32 MiB. */
  readonly maxKeptBytes?: number;
}

/** One arch's PTX and cubin, kept from the figures compile (`keep`); null where nvcc wrote none or it was too large. */
export interface KeptOutput {
  readonly arch: string;
  /** With the staged names mapped back to the real paths (staged-inputs.ts). */
  readonly ptx: string | null;
  readonly cubin: Buffer | null;
  /** The names the cubin's line information gives the real paths (for nvdisasm's listing: mapNamesInListing). */
  readonly names: readonly StagedName[];
}

export type CompileStatus = 'ok' | 'failed' | 'missing' | 'timed-out' | 'cancelled' | 'failed-to-start';

export interface CompileResourcesResult {
  /** 'ok' when every requested arch has figures (compiled or cached). */
  readonly status: CompileStatus;
  /** Figures per arch that succeeded, in the requested order. */
  readonly perArch: readonly ArchFigures[];
  /** All entry figures of `perArch`, flattened (what `mapKernelResources` takes). */
  readonly entries: readonly PtxasFunctionFigures[];
  /** Archs with no figures (the compile failed for them). */
  readonly failedArchs: readonly string[];
  /** The compiler's first error when a compile failed; for a timeout, a message saying so. */
  readonly firstError: CompilerMessage | null;
  readonly nvccVersion: string | null;
  /** Archs answered from the cache. */
  readonly cacheHits: readonly string[];
  readonly invocations: number;
  /** Wall time of the whole call, and of the nvcc runs alone. */
  readonly durationMs: number;
  readonly compileMs: number;
  /** The argument vectors that were run (for the log). */
  readonly commands: ReadonlyArray<readonly string[]>;
  /** The compiler's output, cut to 64 KiB (for the log). */
  readonly log: string;
  /** What the compile kept for each arch it compiled (`keep`); empty otherwise. */
  readonly kept: readonly KeptOutput[];
}

const LOG_LIMIT = 64 * 1024;
const ARCH = /^sm_\d+[a-z]?$/;

export async function compileResources(options: CompileResourcesOptions): Promise<CompileResourcesResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const archs = [...new Set(options.archs)].filter((a) => ARCH.test(a));
  const flags = [...(options.flags ?? [])];
  const commands: string[][] = [];
  let log = '';
  let compileMs = 0;
  let invocations = 0;
  const kept: KeptOutput[] = [];

  const finish = (partial: Partial<CompileResourcesResult> & { status: CompileStatus }): CompileResourcesResult => {
    const perArch = partial.perArch ?? [];
    return {
      perArch,
      entries: perArch.flatMap((a) => a.entries),
      failedArchs: partial.failedArchs ?? [],
      firstError: partial.firstError ?? null,
      nvccVersion: partial.nvccVersion ?? null,
      cacheHits: partial.cacheHits ?? [],
      invocations,
      durationMs: now() - started,
      compileMs,
      commands,
      log: log.slice(0, LOG_LIMIT),
      kept,
      status: partial.status,
    };
  };

  if (options.signal?.aborted) return finish({ status: 'cancelled' });
  const version = await nvccVersion(options.nvccPath);
  if (version === 'missing')
    return finish({ status: 'missing', firstError: message(`nvcc not found at ${options.nvccPath}`) });
  const versionText = version ? version.build : 'unknown';
  if (archs.length === 0) return finish({ status: 'ok', nvccVersion: versionText });

  let content: Buffer;
  try {
    content = (await readBoundedFile(options.filePath, { maxBytes: options.maxFileBytes ?? 64 * 1024 * 1024 })).bytes;
  } catch (error) {
    return finish({
      status: 'failed',
      failedArchs: archs,
      nvccVersion: versionText,
      firstError: message((error as Error).message),
    });
  }

  const mayHaveKernels = content.includes('__global__') || content.includes('__launch_bounds__');

  // What nvcc would read that never ends, blocks or is far too large is refused before it starts.
  const closure = await walkIncludeClosure({
    filePath: options.filePath,
    text: content.toString('utf8'),
    ...pathOptionsOf(flags, options.cwd ?? path.dirname(options.filePath)),
    maxHeaderBytes: options.maxFileBytes ?? 64 * 1024 * 1024,
  });
  if (closure.refused.length > 0)
    return finish({
      status: 'failed',
      failedArchs: archs,
      nvccVersion: versionText,
      firstError: message(refusedIncludeLine(closure.refused[0])),
    });

  // Cache lookups.
  const keys = new Map<string, string>();
  const found = new Map<string, ArchFigures>();
  const cacheHits: string[] = [];
  if (options.cache) {
    const includes = closure.stamps;
    for (const arch of archs) {
      const key = resourceCacheKey({
        content,
        includes,
        flags,
        arch,
        nvccPath: options.nvccPath,
        nvccVersion: versionText,
      });
      keys.set(arch, key);
      const hit = await options.cache.get(key);
      if (hit) {
        found.set(arch, hit);
        cacheHits.push(arch);
      }
    }
  }

  let missing = archs.filter((a) => !found.has(a));
  let failure: { status: CompileStatus; firstError: CompilerMessage | null } | null = null;

  const compile = async (group: string[]): Promise<void> => {
    const outcome = await compileOnce({
      ...options,
      content,
      flags,
      archs: group,
      versionText,
      producedAt: now(),
      mayHaveKernels,
    });
    invocations++;
    compileMs += outcome.run.durationMs;
    commands.push(outcome.command);
    log += outcome.log;
    kept.push(...outcome.kept);
    for (const figures of outcome.figures) {
      found.set(figures.arch, figures);
      const key = keys.get(figures.arch);
      if (key && options.cache) await options.cache.set(key, figures);
    }
    if (outcome.status !== 'ok' && !failure) failure = { status: outcome.status, firstError: outcome.firstError };
    if (outcome.status !== 'ok' && outcome.status !== 'failed') throw new StopCompiling();
  };

  try {
    if (missing.length > 0) {
      if ((options.mode ?? 'one-invocation') === 'one-invocation' || missing.length === 1) {
        await compile(missing);
        missing = archs.filter((a) => !found.has(a));
        // One unsupported architecture fails the whole run: retry the others one by one.
        const failedOnArch =
          failure !== null &&
          /unsupported gpu architecture|not defined for option 'gpu-name'|Value '.*' is not defined/i.test(
            (failure as { firstError: CompilerMessage | null }).firstError?.text ?? '',
          );
        if (failedOnArch && missing.length > 1) {
          failure = null;
          for (const arch of missing) await compile([arch]);
        }
      } else {
        for (const arch of missing) await compile([arch]);
      }
    }
  } catch (error) {
    if (!(error instanceof StopCompiling)) throw error;
  }

  const perArch = archs.filter((a) => found.has(a)).map((a) => found.get(a)!);
  const failedArchs = archs.filter((a) => !found.has(a));
  const settled = failure as { status: CompileStatus; firstError: CompilerMessage | null } | null;
  return finish({
    status: failedArchs.length === 0 ? 'ok' : (settled?.status ?? 'failed'),
    perArch,
    failedArchs,
    cacheHits,
    nvccVersion: versionText,
    firstError: failedArchs.length ? (settled?.firstError ?? null) : null,
  });
}

class StopCompiling extends Error {}

interface CompileOnceOutcome {
  status: CompileStatus;
  figures: ArchFigures[];
  firstError: CompilerMessage | null;
  run: NvccRunResult;
  command: string[];
  kept: KeptOutput[];
  /** nvcc's output, with the staged names mapped back. */
  log: string;
}

/** One nvcc run for one or several archs, in a temporary directory that is always removed. */
async function compileOnce(
  options: CompileResourcesOptions & {
    content: Buffer;
    flags: string[];
    archs: string[];
    versionText: string;
    producedAt: number;
    mayHaveKernels: boolean;
  },
): Promise<CompileOnceOutcome> {
  const tempDir = await fs.mkdtemp(path.join(plainTempRoot(options.tempRoot ?? os.tmpdir()), 'cuda-occupancy-'));
  const untrack = trackTempDir(tempDir);
  try {
    const cwd = options.cwd ?? path.dirname(options.filePath);
    const staged = await stageInputs({
      dir: tempDir,
      filePath: options.filePath,
      content: options.content,
      flags: options.flags,
      cwd,
    });
    const args = nvccArguments({
      filePath: staged.sourcePath,
      flags: staged.flags,
      archs: options.archs,
      outputDir: tempDir,
      keep: options.keep === true,
    });
    const env = { ...(options.env ?? process.env), TMPDIR: tempDir, TMP: tempDir, TEMP: tempDir };
    const run = await runNvcc({
      nvccPath: options.nvccPath,
      args,
      cwd,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      env,
      memoryLimitBytes: options.memoryLimitBytes,
    });
    const command = [options.nvccPath, ...args];
    const log = mapNames(run.stderr + run.stdout, staged.names);
    if (run.status !== 'exited') {
      const firstError =
        run.status === 'timed-out'
          ? message(`nvcc did not finish within ${Math.round(options.timeoutMs / 1000)} s`)
          : run.error
            ? message(run.error)
            : null;
      return { status: run.status, figures: [], firstError, run, command, kept: [], log };
    }
    const output = mapNames(run.stderr + (run.stdout ? `\n${run.stdout}` : ''), staged.names);
    if (run.exitCode !== 0) {
      return {
        status: 'failed',
        figures: [],
        firstError: findFirstCompilerError(output) ?? message(`nvcc exited with status ${run.exitCode ?? run.signal}`),
        run,
        command,
        kept: [],
        log,
      };
    }
    const parsed = parsePtxasOutput(output, { defaultArch: options.archs.length === 1 ? options.archs[0] : undefined });
    if (!parsed.sawPtxasOutput && options.mayHaveKernels) {
      // nvcc succeeded but printed no ptxas report: not nvcc, or flags that skip ptxas (-E, -ptx).
      return {
        status: 'failed',
        figures: [],
        firstError: message('nvcc printed no ptxas resource report'),
        run,
        command,
        kept: [],
        log,
      };
    }
    const figures = options.archs.map((arch): ArchFigures => ({
      arch,
      entries: parsed.entries.filter((e) => e.arch === arch),
      functions: parsed.functions.filter((f) => f.arch === arch),
      modules: parsed.modules.filter((m) => m.arch === arch),
      diagnostics: parsed.diagnostics.filter((d) => d.arch === arch || (d.arch === null && options.archs.length === 1)),
      producedAt: options.producedAt,
      nvccVersion: options.versionText,
    }));
    const kept = options.keep
      ? await readKept({
          dir: tempDir,
          filePath: staged.sourcePath,
          archs: options.archs,
          maxBytes: options.maxKeptBytes ?? 32 * 1024 * 1024,
          names: staged.names,
        })
      : [];
    return { status: 'ok', figures, firstError: null, run, command, kept, log };
  } finally {
    await fs.rm(tempDir, { recursive: true, force: true }).catch(() => undefined);
    untrack();
  }
}

/**
 * The kept PTX and cubin of each arch. nvcc names what -keep writes after the source: for one arch
 * `k.ptx` (and the cubin is the `-o` file), for several `k.compute_80.ptx` and `k.compute_80.cubin` (the
 * cubin of `code=sm_80`). A file that is missing, too large or not PTX is null.
 */
async function readKept(options: {
  dir: string;
  filePath: string;
  archs: readonly string[];
  maxBytes: number;
  names: readonly StagedName[];
}): Promise<KeptOutput[]> {
  const stem = path.basename(options.filePath).replace(/\.[^.]*$/, '');
  const read = async (file: string): Promise<Buffer | null> => {
    try {
      return (await readBoundedFile(path.join(options.dir, file), { maxBytes: options.maxBytes })).bytes;
    } catch {
      return null;
    }
  };
  const kept: KeptOutput[] = [];
  for (const arch of options.archs) {
    const virtual = arch.replace(/^sm_/, 'compute_');
    const single = options.archs.length === 1;
    const ptxBytes = await read(single ? `${stem}.ptx` : `${stem}.${virtual}.ptx`);
    const ptx = ptxBytes ? mapNamesInListing(ptxBytes.toString('utf8'), options.names) : null;
    const cubin = await read(single ? 'out.cubin' : `${stem}.${virtual}.cubin`);
    kept.push({
      arch,
      ptx: ptx !== null && looksLikePtx(ptx) ? ptx : null,
      cubin: cubin && cubin.subarray(0, 4).toString('latin1') === '\x7fELF' ? cubin : null,
      names: options.names,
    });
  }
  return kept;
}

/**
 * nvcc's arguments: the user's flags, then ours. One arch compiles to a cubin; several to a fatbin with
 * one -gencode each (nvcc refuses -cubin for several). A file that does not end in .cu is compiled as CUDA.
 * `keep` adds `-lineinfo -keep -keep-dir OUTPUTDIR` (see CompileResourcesOptions.keep); the user's own
 * -keep and -keep-dir never get this far (argument-policy.ts drops them).
 */
export function nvccArguments(options: {
  filePath: string;
  flags: readonly string[];
  archs: readonly string[];
  outputDir: string;
  keep?: boolean;
}): string[] {
  const args = [...options.flags];
  if (options.archs.length === 1) {
    args.push(`-arch=${options.archs[0]}`, '-cubin', '-o', path.join(options.outputDir, 'out.cubin'));
  } else {
    for (const arch of options.archs) args.push(`-gencode=arch=${arch.replace(/^sm_/, 'compute_')},code=${arch}`);
    args.push('-fatbin', '-o', path.join(options.outputDir, 'out.fatbin'));
  }
  if (options.keep) args.push('-lineinfo', '-keep', '-keep-dir', options.outputDir);
  args.push('-Xptxas', '-v');
  if (!/\.cu$/i.test(options.filePath)) args.push('-x', 'cu');
  args.push(options.filePath);
  return args;
}

function message(text: string): CompilerMessage {
  return { file: null, line: null, column: null, message: text, text };
}

/**
 * The first error in nvcc's output: EDG front-end (`f.cu(12): error: ...`), host compiler
 * (`f.cu:3:10: fatal error: ...`), `nvcc fatal : ...`, or `ptxas error : ...`. Pure.
 */
export function findFirstCompilerError(output: string): CompilerMessage | null {
  for (const raw of output.split(/\r\n|\r|\n/)) {
    const text = raw.trimEnd();
    let m = /^(.+?)\((\d+)\): (?:catastrophic error|error)(?: #[\w-]+)?: (.*)$/.exec(text);
    if (m) return { file: m[1], line: Number(m[2]), column: null, message: m[3], text };
    m = /^(.+?):(\d+):(\d+): (?:fatal )?error: (.*)$/.exec(text);
    if (m) return { file: m[1], line: Number(m[2]), column: Number(m[3]), message: m[4], text };
    m = /^(?:nvcc|ptxas|nvlink|cicc|cudafe\+\+)\s+(?:fatal|error)\s*:\s*(.*)$/.exec(text);
    if (m) return { file: null, line: null, column: null, message: m[1], text };
  }
  return null;
}
