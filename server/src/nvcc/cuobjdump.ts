/**
 * Running `cuobjdump --dump-resource-usage` on a build's objects: found on PATH or beside nvcc,
 * run like nvcc (an argument array and never a shell, a time limit, bounded output, the whole
 * process group killed on timeout: nvcc-runner.ts). The output is handed to the core as text.
 */
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runNvcc, trackTempDir } from './nvcc-runner';
import { findOnPath } from './locate-nvcc';
import { isPlainPath } from './argument-policy';
import { mapNames, plainTempRoot } from './staged-inputs';

const EXE = process.platform === 'win32' ? 'cuobjdump.exe' : 'cuobjdump';

/** cuobjdump beside nvcc (the toolkit's bin folder), $CUDA_HOME/bin, /usr/local/cuda/bin, else on PATH; null when none. */
export function locateCuobjdump(nvccPath: string | null, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = [
    nvccPath && (path.isAbsolute(nvccPath) ? path.dirname(nvccPath) : null),
    nvccPath && !nvccPath.includes('/') ? (findOnPath(nvccPath, env) ?? '').replace(/[^/]*$/, '') || null : null,
    env.CUDA_HOME && path.join(env.CUDA_HOME, 'bin'),
    env.CUDA_PATH && path.join(env.CUDA_PATH, 'bin'),
    '/usr/local/cuda/bin',
  ];
  for (const dir of dirs) if (dir && existsSync(path.join(dir, EXE))) return path.join(dir, EXE);
  return findOnPath(EXE, env);
}

export type DumpResult =
  | { status: 'ok'; text: string; truncated: boolean }
  /** The binary is gone or not executable: stop asking. */
  | { status: 'missing'; message: string }
  /** This file: no device code, not an object cuobjdump reads, a timeout. */
  | { status: 'failed'; message: string };

export interface DumpOptions {
  cuobjdumpPath: string;
  file: string;
  timeoutMs: number;
  /** Output kept; a dump of a large shared object with thousands of kernels runs to megabytes. Default 32 MiB. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
}

/**
 * `cuobjdump --dump-resource-usage FILE`'s output (its figures per function and architecture). A file whose path is
 * not plain is given through a link under a plain name, like every path a toolkit program is given (staged-inputs.ts).
 */
export async function dumpResourceUsage(options: DumpOptions): Promise<DumpResult> {
  if (isPlainPath(options.file)) return dump(options, options.file);
  const dir = await fs.mkdtemp(path.join(plainTempRoot(os.tmpdir()), 'cuda-occupancy-objects-'));
  const untrack = trackTempDir(dir);
  try {
    const ext = path.extname(options.file);
    const staged = path.join(dir, `object${isPlainPath(ext) ? ext : ''}`);
    await fs.symlink(path.resolve(options.file), staged);
    const result = await dump(options, staged);
    const names = [[staged, options.file] as const];
    return result.status === 'ok'
      ? { ...result, text: mapNames(result.text, names) }
      : { ...result, message: mapNames(result.message, names) };
  } finally {
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    untrack();
  }
}

async function dump(options: DumpOptions, file: string): Promise<DumpResult> {
  const run = await runNvcc({
    nvccPath: options.cuobjdumpPath,
    args: ['--dump-resource-usage', file],
    cwd: path.dirname(file),
    timeoutMs: options.timeoutMs,
    maxOutputBytes: options.maxOutputBytes ?? 32 * 1024 * 1024,
    signal: options.signal,
  });
  if (run.status === 'missing') return { status: 'missing', message: run.error ?? 'not found' };
  if (run.status === 'timed-out')
    return { status: 'failed', message: `cuobjdump ran past ${Math.round(options.timeoutMs / 1000)} s` };
  if (run.status !== 'exited') return { status: 'failed', message: run.error ?? run.status };
  // A file without device code exits non-zero with one line; figures printed before an error still count.
  if (run.exitCode !== 0 && !/Resource usage/.test(run.stdout))
    return { status: 'failed', message: firstLine(run.stderr) || firstLine(run.stdout) || `exit ${run.exitCode}` };
  return { status: 'ok', text: run.stdout, truncated: run.truncated };
}

function firstLine(text: string): string {
  return (
    text
      .split(/\r?\n/)
      .find((l) => l.trim())
      ?.trim()
      .slice(0, 300) ?? ''
  );
}
