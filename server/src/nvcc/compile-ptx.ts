/**
 * PTX with line information for a saved file, for the register pressure and the divergence costs. Mostly
 * it comes from the figures compile itself (compile-resources.ts, `keep`: -lineinfo there changes no
 * figure), handed in as `kept`; when the figures came from the cache, `nvcc -ptx -lineinfo` for one
 * architecture, run like the figures compile: an argument array, a time limit, cancellation, a fresh
 * temporary directory that is always removed, and a bound on what is read back. Cached under the same key
 * as the figures (content, include stamps, flags, arch, nvcc version), with the PTX flags folded into the
 * key so the two never answer for each other.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { nvccVersion, runNvcc, trackTempDir } from './nvcc-runner';
import { resourceCacheKey, type ResourceCache } from './resource-cache';
import { pathOptionsOf, refusedIncludeLine, walkIncludeClosure } from './include-closure';
import { mapNames, mapNamesInListing, plainTempRoot, stageInputs } from './staged-inputs';
import { findFirstCompilerError, type CompilerMessage } from './compile-resources';
import { readBoundedFile } from '../files/bounded-read';
import { isValidPtxEntry } from './cache-validation';

/** What the cache stores. */
export interface PtxText {
  readonly arch: string;
  readonly text: string;
  readonly nvccVersion: string;
  /** ms since epoch */
  readonly producedAt: number;
}

export interface CompilePtxOptions {
  readonly nvccPath: string;
  readonly filePath: string;
  /** One architecture (`sm_80`): the first target. */
  readonly arch: string;
  /** Flags from compile_commands.json or settings, as for the figures compile. */
  readonly flags?: readonly string[];
  readonly cwd?: string | null;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly cache?: ResourceCache<PtxText> | null;
  /** Where to create the temporary directory; default os.tmpdir(). */
  readonly tempRoot?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** The largest PTX file read back; default 32 MiB. */
  readonly maxPtxBytes?: number;
  readonly now?: () => number;
  /** The address space each process of the nvcc run may use, in bytes (see runNvcc); none when omitted. */
  readonly memoryLimitBytes?: number;
  /** The largest source file read (for the hash and the cache key); default 64 MiB. */
  readonly maxFileBytes?: number;
  /**
   * The PTX the figures compile kept for this arch (compile-resources.ts, `keep`): taken, and cached, instead
   * of running nvcc again. The figures compile read the same file just before; its `.loc` lines are the same.
   */
  readonly kept?: string | null;
}

export type CompilePtxFailureStatus =
  | 'failed'
  | 'missing'
  | 'timed-out'
  | 'cancelled'
  | 'failed-to-start'
  /** nvcc exited 0 but wrote no file, or a file that is not PTX. */
  | 'invalid-output'
  /** The PTX is larger than `maxPtxBytes`. */
  | 'too-large';

interface CompilePtxCommon {
  /** sha256 of the file's bytes as nvcc read them: the PTX's `.loc` lines describe this content only. */
  readonly sourceHash: string | null;
  /** Wall time of the whole call, and of the nvcc run alone (0 on a cache hit). */
  readonly durationMs: number;
  readonly compileMs: number;
  /** The argument vector run, or null when none was (cache hit, early failure). */
  readonly command: readonly string[] | null;
  /** The compiler's output, cut to 64 KiB (for the log). */
  readonly log: string;
}

export interface CompilePtxOk extends CompilePtxCommon {
  readonly status: 'ok';
  readonly ptx: PtxText;
  readonly cacheHit: boolean;
}

export interface CompilePtxFailure extends CompilePtxCommon {
  readonly status: CompilePtxFailureStatus;
  readonly error: CompilerMessage;
}

export type CompilePtxResult = CompilePtxOk | CompilePtxFailure;

const LOG_LIMIT = 64 * 1024;
const DEFAULT_MAX_PTX = 32 * 1024 * 1024;
const ARCH = /^sm_\d+[a-z]?$/;
/** Folded into the cache key: the same file, flags and arch compiled for ptxas figures is another entry. */
const KEY_FLAGS = ['-ptx', '-lineinfo'];

/** sha256 of a file's content; compare with `sourceHash` before applying PTX to a document's text. */
export function contentHash(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export async function compilePtx(options: CompilePtxOptions): Promise<CompilePtxResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const flags = [...(options.flags ?? [])];
  let sourceHash: string | null = null;
  let command: string[] | null = null;
  let compileMs = 0;
  let log = '';
  const fail = (status: CompilePtxFailureStatus, error: CompilerMessage): CompilePtxFailure => ({
    status,
    error,
    sourceHash,
    durationMs: now() - started,
    compileMs,
    command,
    log: log.slice(0, LOG_LIMIT),
  });

  if (options.signal?.aborted) return fail('cancelled', message('cancelled'));
  if (!ARCH.test(options.arch))
    return fail('failed', message(`not an architecture nvcc compiles PTX for: ${options.arch}`));
  const version = await nvccVersion(options.nvccPath);
  if (version === 'missing') return fail('missing', message(`nvcc not found at ${options.nvccPath}`));
  const versionText = version ? version.build : 'unknown';

  let content: Buffer;
  try {
    content = (await readBoundedFile(options.filePath, { maxBytes: options.maxFileBytes ?? 64 * 1024 * 1024 })).bytes;
  } catch (error) {
    return fail('failed', message((error as Error).message));
  }
  sourceHash = contentHash(content);

  const cwd = options.cwd ?? path.dirname(options.filePath);
  // What nvcc would read that never ends, blocks or is far too large is refused before it starts (include-closure.ts).
  const closure = await walkIncludeClosure({
    filePath: options.filePath,
    text: content.toString('utf8'),
    ...pathOptionsOf(flags, cwd),
    maxHeaderBytes: options.maxFileBytes ?? 64 * 1024 * 1024,
  });
  if (closure.refused.length > 0) return fail('failed', message(refusedIncludeLine(closure.refused[0])));

  let key: string | null = null;
  if (options.cache) {
    key = resourceCacheKey({
      content,
      includes: closure.stamps,
      flags: [...flags, ...KEY_FLAGS],
      arch: options.arch,
      nvccPath: options.nvccPath,
      nvccVersion: versionText,
    });
    const hit = await options.cache.get(key);
    if (hit)
      return {
        status: 'ok',
        ptx: hit,
        cacheHit: true,
        sourceHash,
        durationMs: now() - started,
        compileMs,
        command,
        log,
      };
  }
  if (options.signal?.aborted) return fail('cancelled', message('cancelled'));
  if (options.kept && looksLikePtx(options.kept)) {
    const ptx: PtxText = { arch: options.arch, text: options.kept, nvccVersion: versionText, producedAt: now() };
    if (key && options.cache) await options.cache.set(key, ptx);
    return { status: 'ok', ptx, cacheHit: false, sourceHash, durationMs: now() - started, compileMs, command, log };
  }

  const tempDir = await fs.mkdtemp(path.join(plainTempRoot(options.tempRoot ?? os.tmpdir()), 'cuda-occupancy-ptx-'));
  const untrack = trackTempDir(tempDir);
  try {
    const output = path.join(tempDir, 'x.ptx');
    const staged = await stageInputs({ dir: tempDir, filePath: options.filePath, content, flags, cwd });
    const args = ptxArguments({ filePath: staged.sourcePath, flags: staged.flags, arch: options.arch, output });
    command = [options.nvccPath, ...args];
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
    compileMs = run.durationMs;
    log = mapNames(run.stderr + run.stdout, staged.names);
    if (run.status === 'timed-out')
      return fail('timed-out', message(`nvcc -ptx did not finish within ${Math.round(options.timeoutMs / 1000)} s`));
    if (run.status !== 'exited') return fail(run.status, message(run.error ?? run.status));
    if (run.exitCode !== 0) {
      return fail(
        'failed',
        findFirstCompilerError(mapNames(run.stderr + (run.stdout ? `\n${run.stdout}` : ''), staged.names)) ??
          message(`nvcc exited with status ${run.exitCode ?? run.signal}`),
      );
    }
    const limit = options.maxPtxBytes ?? DEFAULT_MAX_PTX;
    let text: string;
    try {
      text = mapNamesInListing((await readBoundedFile(output, { maxBytes: limit })).text, staged.names);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'too-large') return fail('too-large', message(`the PTX is over the ${limit}-byte limit`));
      return fail('invalid-output', message('nvcc wrote no PTX file'));
    }
    if (!looksLikePtx(text))
      return fail('invalid-output', message("nvcc's output is not PTX (no .version and .target lines)"));
    const ptx: PtxText = { arch: options.arch, text, nvccVersion: versionText, producedAt: now() };
    if (key && options.cache) await options.cache.set(key, ptx);
    return {
      status: 'ok',
      ptx,
      cacheHit: false,
      sourceHash,
      durationMs: now() - started,
      compileMs,
      command,
      log: log.slice(0, LOG_LIMIT),
    };
  } finally {
    await fs.rm(tempDir, { recursive: true, force: true }).catch(() => undefined);
    untrack();
  }
}

/** `<flags> -arch=sm_XX -ptx -lineinfo -o OUT [-x cu] FILE`: the user's flags first, the file last. Pure. */
export function ptxArguments(options: {
  filePath: string;
  flags: readonly string[];
  arch: string;
  output: string;
}): string[] {
  const args = [...options.flags, `-arch=${options.arch}`, '-ptx', '-lineinfo', '-o', options.output];
  if (!/\.cu$/i.test(options.filePath)) args.push('-x', 'cu');
  args.push(options.filePath);
  return args;
}

/** PTX starts with a `.version` directive and names its `.target`. Pure. */
export function looksLikePtx(text: string): boolean {
  return /^\s*\.version\s+\d+\.\d+/m.test(text) && /^\s*\.target\s+\w+/m.test(text);
}

/** The cache's validator: a value read back from disk is not trusted. */
export function isPtxText(value: unknown): value is PtxText {
  return isValidPtxEntry(value) && looksLikePtx(value.text);
}

function message(text: string): CompilerMessage {
  return { file: null, line: null, column: null, message: text, text };
}
