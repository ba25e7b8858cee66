/**
 * SASS life ranges from the user's toolkit, where it has nvdisasm (full CUDA toolkits do; a
 * compiler-only install has nvcc and ptxas alone): `nvdisasm --print-life-ranges --print-line-info`
 * on the cubin the figures compile kept (compile-resources.ts, `keep`), for the registers live at
 * each line after allocation and the local-memory spills. Run like nvcc (nvcc-runner.ts): an argument
 * array, a time limit, cancellation, the process tree killed, output bounded (a truncated listing is
 * not used); the cubin is written to a private temporary directory that is always removed.
 */
import { promises as fs, realpathSync, statSync, accessSync, constants } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runNvcc, trackTempDir } from './nvcc-runner';
import { findOnPath } from './locate-nvcc';
import { mapNamesInListing, plainTempRoot, type StagedName } from './staged-inputs';

/**
 * nvdisasm beside nvcc (the path as given, then the file it links to), else on PATH; null when there is
 * none. `nvccPath` is the compiler already chosen (and allowed) for the figures.
 */
export function locateNvdisasm(nvccPath: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const nvcc = path.isAbsolute(nvccPath) ? nvccPath : findOnPath(nvccPath, env);
  const dirs: string[] = [];
  if (nvcc) {
    dirs.push(path.dirname(nvcc));
    try {
      dirs.push(path.dirname(realpathSync(nvcc)));
    } catch {
      // a dangling link: its own folder only
    }
  }
  for (const dir of dirs) {
    const candidate = path.join(dir, process.platform === 'win32' ? 'nvdisasm.exe' : 'nvdisasm');
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return findOnPath(process.platform === 'win32' ? 'nvdisasm.exe' : 'nvdisasm', env);
}

export interface DisassembleOptions {
  readonly nvdisasmPath: string;
  readonly cubin: Buffer;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** The largest listing read; default 32 MiB (a longer one is not used). */
  readonly maxOutputBytes?: number;
  readonly tempRoot?: string;
  readonly env?: NodeJS.ProcessEnv;
}

export type DisassembleResult =
  | { readonly status: 'ok'; readonly text: string; readonly durationMs: number; readonly command: string[] }
  | { readonly status: 'failed'; readonly message: string; readonly durationMs: number; readonly command: string[] };

/** The options NVIDIA's CUDA Binary Utilities documentation gives for life ranges and source lines. */
export function nvdisasmArguments(cubinPath: string): string[] {
  return ['--print-life-ranges', '--print-line-info', cubinPath];
}

export async function disassembleLifeRanges(options: DisassembleOptions): Promise<DisassembleResult> {
  const dir = await fs.mkdtemp(path.join(plainTempRoot(options.tempRoot ?? os.tmpdir()), 'cuda-occupancy-sass-'));
  const untrack = trackTempDir(dir);
  const cubinPath = path.join(dir, 'k.cubin');
  const args = nvdisasmArguments(cubinPath);
  const command = [options.nvdisasmPath, ...args];
  try {
    await fs.writeFile(cubinPath, options.cubin, { mode: 0o600 });
    const limit = options.maxOutputBytes ?? 32 * 1024 * 1024;
    const run = await runNvcc({
      nvccPath: options.nvdisasmPath,
      args,
      cwd: dir,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      env: options.env,
      maxOutputBytes: limit,
    });
    const failed = (message: string): DisassembleResult => ({
      status: 'failed',
      message,
      durationMs: run.durationMs,
      command,
    });
    if (run.status === 'timed-out')
      return failed(`nvdisasm did not finish within ${Math.round(options.timeoutMs / 1000)} s`);
    if (run.status !== 'exited') return failed(run.error ?? `nvdisasm ${run.status}`);
    if (run.exitCode !== 0)
      return failed(run.stderr.split('\n').find((l) => l.trim()) ?? `nvdisasm exited with status ${run.exitCode}`);
    if (run.truncated) return failed(`nvdisasm's listing is over the ${limit}-byte limit`);
    return { status: 'ok', text: run.stdout, durationMs: run.durationMs, command };
  } finally {
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    untrack();
  }
}

/** nvdisasm's life ranges of a cubin a compile kept, or null (no nvdisasm, no cubin, a failed run: `log` says why). */
export async function keptLifeRanges(options: {
  nvdisasmPath: string | null;
  cubin: Buffer | null | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
  /** For the log line: what was disassembled (`k.cu (sm_80)`). */
  label: string;
  /** The staged names the compile gave real paths (its KeptOutput's), mapped back in the listing. */
  names?: readonly StagedName[];
  log?: (line: string) => void;
}): Promise<string | null> {
  if (!options.nvdisasmPath || !options.cubin) return null;
  const result = await disassembleLifeRanges({
    nvdisasmPath: options.nvdisasmPath,
    cubin: options.cubin,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  });
  options.log?.(
    `nvdisasm ${result.status} for ${options.label}: ${result.durationMs} ms${result.status === 'ok' ? '' : `; ${result.message}`}`,
  );
  return result.status === 'ok' ? mapNamesInListing(result.text, options.names ?? []) : null;
}

/** The one note when there is no nvdisasm: the pressure is the PTX estimate. */
export function noNvdisasmNote(nvccPath: string): string {
  return `nvdisasm not found beside ${nvccPath} or on PATH: the register pressure per line is the PTX estimate (values live before register allocation), and spills are not placed at their lines`;
}
