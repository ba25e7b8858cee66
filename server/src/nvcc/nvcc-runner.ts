/**
 * Runs nvcc as an untrusted neighbour: an argument array and never a shell, a time limit, a memory limit on
 * every process of the run, cancellation, bounded output, and on timeout or cancel every process of the run is
 * killed: its process group (nvcc's cudafe++, cicc, ptxas and host compiler children), and what left it
 * (process-tree.ts: descendants, and processes carrying the run's marker, such as a child that called setsid).
 * A missing binary is a typed result, not an exception.
 */
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { findOnPath } from './locate-nvcc';
import { isPlainWord } from './argument-policy';
import { newRunMarker, RUN_MARKER_VARIABLE, runProcesses, signalAll } from './process-tree';

export interface RunNvccOptions {
  readonly nvccPath: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** The full environment for the child; defaults to this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** Output kept per stream; the rest is dropped and `truncated` set. Default 4 MiB. */
  readonly maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL of the group. Default 1000 ms. */
  readonly killGraceMs?: number;
  /** The address space (RLIMIT_AS) each process of the run may use, in bytes; none when omitted. */
  readonly memoryLimitBytes?: number;
  /** How the memory limit is set: `prlimit` when it is installed, else a fixed `sh` script (see limitedCommand). */
  readonly limiter?: 'auto' | 'prlimit' | 'sh';
}

export type NvccRunStatus =
  /** The process ran and exited (any exit code) or was killed by a signal nobody here sent. */
  | 'exited'
  | 'timed-out'
  | 'cancelled'
  /** The binary does not exist (ENOENT) or is not executable (EACCES). */
  | 'missing'
  /** Any other spawn failure. */
  | 'failed-to-start';

export interface NvccRunResult {
  readonly status: NvccRunStatus;
  readonly exitCode: number | null;
  /** The signal that ended the process, if any. */
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly truncated: boolean;
  readonly durationMs: number;
  /** The spawn error's message for `missing` and `failed-to-start`. */
  readonly error: string | null;
}

const DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024;
const isWindows = process.platform === 'win32';

/** Runs in flight (their process group and marker), killed if this process exits first. */
const liveRuns = new Map<number, string>();
/** The temporary directories of compiles in flight, removed if this process exits first. */
const liveTempDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => endAllRuns());
}

/**
 * Kills every run in flight (its process group and the processes carrying its marker) and removes every
 * compile's temporary directory, at once and synchronously: for a process about to exit (a signal, an uncaught
 * error), when no callback would run any more. Returns how many runs there were.
 */
export function endAllRuns(): number {
  const runs = liveRuns.size;
  for (const [pid, marker] of liveRuns) {
    killTree(pid, 'SIGKILL');
    signalAll(runProcesses(pid, marker), 'SIGKILL');
  }
  liveRuns.clear();
  for (const dir of liveTempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // already gone
    }
  }
  liveTempDirs.clear();
  updateSignalHandlers();
  return runs;
}

/**
 * Makes the runs in flight end with this process: on SIGINT and SIGTERM (exit status 130 and 143, as a shell
 * reports them) and on an uncaught error (`onUncaught` says it, then exit status `uncaughtExitCode`), every run's
 * processes are killed and every temporary directory removed. nvcc runs in a process group of its own, so a
 * Ctrl-C in the terminal does not reach it: without this, nvcc, sh, gcc and cc1plus went on after the CLI ended.
 */
export function endRunsWithProcess(options: { onUncaught: (error: unknown) => void; uncaughtExitCode: number }): void {
  installExitHook();
  endWithSignals = true;
  updateSignalHandlers();
  process.on('uncaughtException', (error) => {
    try {
      options.onUncaught(error);
    } finally {
      endAllRuns();
      process.exit(options.uncaughtExitCode);
    }
  });
}

/** Whether endRunsWithProcess asked for the signal handlers. */
let endWithSignals = false;
const signalHandlers = {
  SIGINT: () => exitAfterRuns(130),
  SIGTERM: () => exitAfterRuns(143),
} as const;

function exitAfterRuns(code: number): void {
  endAllRuns();
  process.exit(code);
}

/**
 * The SIGINT and SIGTERM handlers are installed only while a run or a temporary directory is live.
 * A handler runs only when the event loop is free, so with one installed a signal that arrives
 * during a long synchronous analysis waits for it to end; with none, the default action ends the
 * process at once (and there is nothing to clean up).
 */
function updateSignalHandlers(): void {
  if (!endWithSignals) return;
  const live = liveRuns.size + liveTempDirs.size > 0;
  for (const [signal, handler] of Object.entries(signalHandlers)) {
    const installed = process.listeners(signal as NodeJS.Signals).includes(handler);
    if (live && !installed) process.on(signal, handler);
    else if (!live && installed) process.removeListener(signal, handler);
  }
}

/** Registers a compile's temporary directory (removed by endAllRuns); call the result once it is removed. */
export function trackTempDir(dir: string): () => void {
  installExitHook();
  liveTempDirs.add(dir);
  updateSignalHandlers();
  return () => {
    liveTempDirs.delete(dir);
    updateSignalHandlers();
  };
}

function killTree(pid: number, signal: NodeJS.Signals): void {
  try {
    if (isWindows) execFile('taskkill', ['/pid', String(pid), '/T', '/F'], () => undefined);
    else process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Runs nvcc (or anything) with `shell: false`. Never rejects. */
export function runNvcc(options: RunNvccOptions): Promise<NvccRunResult> {
  const started = Date.now();
  const limit = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const grace = options.killGraceMs ?? 1000;

  return new Promise<NvccRunResult>((resolve) => {
    const finishEarly = (status: NvccRunStatus, error: string | null): void =>
      resolve({
        status,
        exitCode: null,
        signal: null,
        stdout: '',
        stderr: '',
        timedOut: false,
        cancelled: status === 'cancelled',
        truncated: false,
        durationMs: Date.now() - started,
        error,
      });

    if (options.signal?.aborted) return finishEarly('cancelled', null);
    if (
      typeof options.nvccPath !== 'string' ||
      options.nvccPath.length === 0 ||
      options.nvccPath.includes('\0') ||
      options.args.some((a) => typeof a !== 'string' || a.includes('\0'))
    ) {
      return finishEarly('failed-to-start', 'invalid nvcc path or argument');
    }
    // nvcc runs its stages through /bin/sh with its arguments pasted in: only plain words reach it
    // (argument-policy.ts drops the options, staged-inputs.ts gives paths plain names; this is the last guard).
    const unquotable = isWindows ? undefined : options.args.find((a) => !isPlainWord(a));
    if (unquotable !== undefined)
      return finishEarly(
        'failed-to-start',
        `refused to run ${path.basename(options.nvccPath)}: the argument ${JSON.stringify(unquotable)} holds a character a shell would interpret`,
      );

    const executable = resolveExecutable(options.nvccPath, options.env ?? process.env, options.cwd);
    if (!executable.path) return finishEarly('missing', executable.error);
    const command = limitedCommand(executable.path, options.args, options.memoryLimitBytes, options.limiter ?? 'auto');
    const marker = newRunMarker();

    let child;
    try {
      child = spawn(command.file, command.args, {
        cwd: options.cwd,
        env: { ...(options.env ?? process.env), [RUN_MARKER_VARIABLE]: marker },
        shell: false,
        detached: !isWindows, // its own process group, so the whole tree can be killed
        windowsHide: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return finishEarly(
        code === 'ENOENT' || code === 'EACCES' ? 'missing' : 'failed-to-start',
        String((error as Error).message),
      );
    }

    installExitHook();
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const kept = { stdout: 0, stderr: 0 };
    let truncated = false;
    let timedOut = false;
    let cancelled = false;
    let spawnError: NodeJS.ErrnoException | null = null;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let forceTimer: NodeJS.Timeout | undefined;
    let exitTimer: NodeJS.Timeout | undefined;

    const collect =
      (which: 'stdout' | 'stderr', into: Buffer[]) =>
      (chunk: Buffer): void => {
        const room = limit - kept[which];
        if (room <= 0) {
          truncated = true;
          return;
        }
        const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
        if (piece.length < chunk.length) truncated = true;
        into.push(piece);
        kept[which] += piece.length;
      };
    child.stdout?.on('data', collect('stdout', stdout));
    child.stderr?.on('data', collect('stderr', stderr));

    const pid = child.pid;
    if (pid !== undefined && !isWindows) {
      liveRuns.set(pid, marker);
      updateSignalHandlers();
    }
    let exited = false;
    /** Every process of the run: the group, and those that left it (while the first process lives, its descendants too). */
    const killRun = (signal: NodeJS.Signals): void => {
      if (pid === undefined) return;
      killTree(pid, signal);
      signalAll(runProcesses(exited ? undefined : pid, marker), signal);
    };

    const stop = (): void => {
      if (pid === undefined) return;
      killRun('SIGTERM');
      killTimer = setTimeout(() => killRun('SIGKILL'), grace);
      // If a grandchild keeps the pipes open despite everything, settle anyway.
      forceTimer = setTimeout(() => settle(null, 'SIGKILL'), grace + 2000);
    };

    const timer = setTimeout(
      () => {
        timedOut = true;
        stop();
      },
      Math.max(1, options.timeoutMs),
    );

    const onAbort = (): void => {
      cancelled = true;
      stop();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const settle = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(forceTimer);
      clearTimeout(exitTimer);
      options.signal?.removeEventListener('abort', onAbort);
      if (pid !== undefined) {
        liveRuns.delete(pid);
        updateSignalHandlers();
        // Leave no grandchildren behind, even after a normal exit of nvcc itself (a compiler leaves none).
        if (!isWindows && (timedOut || cancelled)) killTree(pid, 'SIGKILL');
        if (!isWindows) signalAll(runProcesses(undefined, marker), 'SIGKILL');
      }
      clearTimeout(killTimer);
      child.stdout?.destroy();
      child.stderr?.destroy();
      const code_ = spawnError?.code;
      const status: NvccRunStatus = spawnError
        ? code_ === 'ENOENT' || code_ === 'EACCES' || code_ === 'ENOTDIR'
          ? 'missing'
          : 'failed-to-start'
        : timedOut
          ? 'timed-out'
          : cancelled
            ? 'cancelled'
            : 'exited';
      resolve({
        status,
        exitCode: spawnError ? null : code,
        signal: signal ?? null,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
        cancelled,
        truncated,
        durationMs: Date.now() - started,
        error: spawnError ? spawnError.message : null,
      });
    };

    child.on('error', (error: NodeJS.ErrnoException) => {
      spawnError = error;
      settle(null, null);
    });
    // nvcc exited but something it started still holds the pipes: give it a moment, then end the group.
    child.on('exit', (code, signal) => {
      exited = true;
      exitTimer = setTimeout(() => {
        if (pid !== undefined) killRun('SIGKILL');
        settle(code, signal);
      }, grace);
    });
    child.on('close', (code, signal) => {
      clearTimeout(exitTimer);
      settle(code, signal);
    });
  });
}

/**
 * The program to spawn, as an absolute path: a bare name is looked up on PATH (absolute entries only), a
 * relative path resolved against `cwd`. A missing or non-executable file is reported here, since the limiter
 * would otherwise be the one to fail.
 */
export function resolveExecutable(
  program: string,
  env: NodeJS.ProcessEnv,
  cwd?: string,
): { path: string | null; error: string | null } {
  if (isWindows) return { path: program, error: null };
  const found = program.includes('/') ? path.resolve(cwd ?? process.cwd(), program) : findOnPath(program, env);
  if (!found) return { path: null, error: `spawn ${program} ENOENT` };
  try {
    if (!statSync(found).isFile()) return { path: null, error: `spawn ${program} EACCES (not a file)` };
    accessSync(found, constants.X_OK);
  } catch (error) {
    return { path: null, error: `spawn ${program} ${(error as NodeJS.ErrnoException).code ?? 'ENOENT'}` };
  }
  return { path: found, error: null };
}

let prlimitPath: string | null | undefined;

/**
 * The command that runs `file args` with RLIMIT_AS set to `limitBytes` for it and every process it starts
 * (limits are inherited): `prlimit --as=N -- file args...` where util-linux's prlimit is installed, else
 * `/bin/sh -c 'ulimit -v "$1" || exit 125; shift; exec "$@"' limit KB file args...`. The script is fixed;
 * the file and the arguments reach it as positional parameters, which the shell passes to exec without
 * reading them (no expansion, no word splitting). Without a limit (or on Windows), the file itself.
 */
export function limitedCommand(
  file: string,
  args: readonly string[],
  limitBytes: number | undefined,
  limiter: 'auto' | 'prlimit' | 'sh' = 'auto',
): { file: string; args: string[] } {
  if (!limitBytes || !Number.isFinite(limitBytes) || limitBytes <= 0 || isWindows) return { file, args: [...args] };
  const bytes = Math.floor(limitBytes);
  if (limiter !== 'sh') {
    prlimitPath ??=
      findOnPath('prlimit') ?? ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => resolveExecutable(p, {}).path) ?? null;
    if (prlimitPath) return { file: prlimitPath, args: [`--as=${bytes}`, '--', file, ...args] };
  }
  return {
    file: '/bin/sh',
    args: [
      '-c',
      'ulimit -v "$1" || exit 125; shift; exec "$@"',
      'cuda-occupancy-limit',
      String(Math.ceil(bytes / 1024)),
      file,
      ...args,
    ],
  };
}

export interface NvccVersion {
  /** `13.0` */
  readonly release: string;
  /** `V13.0.88`, or the release when nvcc printed no build number. */
  readonly build: string;
}

/** Reads `release 13.0, V13.0.88` from `nvcc --version`. Pure. */
export function parseNvccVersion(text: string): NvccVersion | null {
  const m = /release (\d+\.\d+),\s*(V[\d.]+)?/.exec(text);
  return m ? { release: m[1], build: m[2] ?? m[1] } : null;
}

const versionCache = new Map<string, Promise<NvccVersion | null | 'missing'>>();

/**
 * `nvcc --version`, run once per path (the answer is remembered; `forget` drops it after a settings change).
 * Returns 'missing' when there is no such binary, null when it ran but said nothing recognisable.
 */
export function nvccVersion(nvccPath: string, timeoutMs = 15_000): Promise<NvccVersion | null | 'missing'> {
  let pending = versionCache.get(nvccPath);
  if (!pending) {
    pending = runNvcc({ nvccPath, args: ['--version'], timeoutMs }).then((result) => {
      if (result.status === 'missing') return 'missing' as const;
      if (result.status !== 'exited' || result.exitCode !== 0) {
        versionCache.delete(nvccPath); // a transient failure should not stick
        return null;
      }
      return parseNvccVersion(result.stdout + result.stderr);
    });
    versionCache.set(nvccPath, pending);
  }
  return pending;
}

nvccVersion.forget = (nvccPath?: string): void => {
  if (nvccPath === undefined) versionCache.clear();
  else versionCache.delete(nvccPath);
};
