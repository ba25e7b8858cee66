/**
 * `check` on every core: worker threads (check-worker.ts), each with its own parser, work in two
 * rounds, each file handed to the next free worker and its result put back in the files' order,
 * so the output is the serial path's to the byte.
 *
 * 1. Index: each file's workspace-index entry (the text passes of update), built from its text.
 *    This thread assembles the entries in the serial path's order (with the headers included
 *    from outside the roots, read here) and gives every worker the whole index: what a file reads
 *    of other files (kernels, wrappers, constants in headers) is then the same in every worker.
 * 2. Analyse: each checked file's analysis and report, sent back as plain pieces of the output.
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { WorkspaceIndex, type IndexEntry, type Toolchain } from '../core/analyzer';
import {
  assembleIndex,
  type CheckedFile,
  type CheckOutputs,
  type IndexInput,
  type IndexPlan,
  type Source,
} from './check-analysis';

/**
 * Below this much source (characters) the serial path is used: a worker's start (its bundle, the
 * grammar, its share of the index, the whole index loaded) costs about 0.3 s of CPU. Measured on
 * faiss's files on 2 cores: 12 files of 240 KB took longer on 2 workers than in process, 24 files
 * of 460 KB less.
 */
export const MIN_SOURCE_FOR_WORKERS = 320_000;

/**
 * Above this many files the serial path is used: each worker holds the whole index (about 1.8 KB a file), so the
 * copies cost more than the threads save. 100,000 small files on 2 workers took 2.5 GB and 67 s, in process
 * 1.4 GB and 43 s.
 */
export const MAX_FILES_FOR_WORKERS = 20_000;

/**
 * Whether worker threads pay for `sources`: two files at least, at most MAX_FILES_FOR_WORKERS, and
 * MIN_SOURCE_FOR_WORKERS of text (`CUDA_OCCUPANCY_WORKER_MIN_BYTES` for tests and measurements).
 */
export function workersPay(sources: readonly Source[]): boolean {
  const set = process.env.CUDA_OCCUPANCY_WORKER_MIN_BYTES;
  const least = set !== undefined && Number.isInteger(Number(set)) ? Number(set) : MIN_SOURCE_FOR_WORKERS;
  return (
    sources.length >= 2 &&
    sources.length <= MAX_FILES_FOR_WORKERS &&
    sources.reduce((n, s) => n + s.text.length, 0) >= least
  );
}

/**
 * Jobs a worker holds at once: an index entry takes a millisecond or two, so a few; a file's
 * analysis is longer, and one queued behind it keeps the worker busy.
 */
const JOBS_AHEAD = { index: 8, analyse: 2 } as const;

/** What each worker starts with. */
export interface WorkerInput extends IndexInput {
  plan: IndexPlan;
  cwd: string;
  archs: string[];
  gpus: string[];
  outputs: CheckOutputs;
  /** The command line's compiler flags (configureUnits). */
  extraFlags: string[];
  toolchain: Toolchain;
  /** A build log's text, for every worker's figures. */
  log: { name: string; text: string; producedAt: number | null } | null;
}

export type ToWorker =
  { type: 'index'; index: number } | { type: 'load'; entries: IndexEntry[] } | { type: 'analyse'; index: number };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'indexed'; index: number; entry: IndexEntry | null }
  | { type: 'loaded' }
  | { type: 'done'; index: number; checked: CheckedFile }
  | { type: 'failed'; index: number; round: 'index' | 'analyse' | 'start'; message: string }
  /** The input is wrong (a log without ptxas output): a usage error, not a crash. */
  | { type: 'usage'; message: string };

/** A worker's failure that is the user's to fix (check turns it into a usage error). */
export class WorkerUsageError extends Error {}

/** Where the worker's script is: beside this module, in the bundle (dist/cli/) and in the compiled tests alike. */
export function workerScript(): string {
  return path.join(__dirname, 'check-worker.js');
}

export function canUseWorkers(): boolean {
  return existsSync(workerScript());
}

/**
 * Analyse `input.sources` on `workers` threads; each result to `deliver` in the sources' order, as soon as
 * those before it have come. Rejects when a worker fails (the file it was on and why), and stops every
 * worker first: a failure never hangs.
 */
export async function checkInWorkers(
  input: WorkerInput,
  workers: number,
  deliver: (checked: CheckedFile) => void,
): Promise<void> {
  const pool = new WorkerPool(input, Math.min(workers, input.sources.length));
  try {
    await pool.started;
    const entries = await pool.round<IndexEntry | null>('index', input.plan.files.length);
    const index = new WorkspaceIndex();
    assembleIndex(index, input.database, input.plan, (k) => {
      const entry = entries[k];
      if (entry) index.load([entry]);
    });
    await pool.everyWorker({ type: 'load', entries: index.entries() });
    await pool.round<CheckedFile>('analyse', input.sources.length, deliver);
  } finally {
    pool.stop();
  }
}

/** Workers that take jobs one at a time; the first failure of any ends every wait. */
class WorkerPool {
  readonly started: Promise<void>;
  private readonly workers: Worker[] = [];
  /** The jobs handed to each worker and not answered yet, oldest (the one it is on) first. */
  private readonly onFile = new Map<Worker, number[]>();
  private round_: 'index' | 'analyse' | null = null;
  private failure: Error | null = null;
  private listener: ((worker: Worker, message: FromWorker) => void) | null = null;
  private onFailure: ((error: Error) => void) | null = null;

  constructor(
    private readonly input: WorkerInput,
    count: number,
  ) {
    let ready = 0;
    this.started = this.wait<void>((worker, message, resolve) => {
      if (message.type === 'ready' && ++ready === count) resolve();
    });
    for (let k = 0; k < count; k++) {
      const worker = new Worker(workerScript(), { workerData: input });
      this.workers.push(worker);
      worker.on('message', (message: FromWorker) => this.receive(worker, message));
      worker.on('error', (error) =>
        this.fail(new Error(`a worker thread failed${this.where(worker)}: ${error.message}`)),
      );
      worker.on('exit', (code) =>
        this.fail(new Error(`a worker thread stopped (exit code ${code})${this.where(worker)}`)),
      );
    }
  }

  /**
   * Jobs 0..count-1 of a round, handed out in order to the workers as they answer, a few ahead
   * (JOBS_AHEAD) so that a worker never waits for this thread to be scheduled; their results in
   * job order, or, with `inOrder`, each to it in job order as soon as those before it have come (and
   * not kept).
   */
  round<T>(kind: 'index' | 'analyse', count: number, inOrder?: (result: T) => void): Promise<T[]> {
    const results: T[] = new Array(count);
    let next = 0;
    let finished = 0;
    let handed = 0;
    this.round_ = kind;
    for (const worker of this.workers) this.onFile.set(worker, []);
    const handOut = (worker: Worker) => {
      const queue = this.onFile.get(worker)!;
      while (queue.length < JOBS_AHEAD[kind] && next < count) {
        queue.push(next);
        worker.postMessage({ type: kind, index: next++ } satisfies ToWorker);
      }
    };
    const answer = kind === 'index' ? 'indexed' : 'done';
    const done = this.wait<T[]>((worker, message, resolve) => {
      if (message.type !== answer) return;
      this.onFile.get(worker)?.shift();
      results[message.index] = (message.type === 'indexed' ? message.entry : message.checked) as T;
      if (inOrder)
        for (; handed < count && handed in results; handed++) {
          inOrder(results[handed]);
          delete results[handed];
        }
      if (++finished < count) return handOut(worker);
      this.onFile.clear();
      resolve(results);
    });
    if (count === 0) return Promise.resolve(results);
    for (const worker of this.workers) handOut(worker);
    return done;
  }

  /** One message to every worker, answered by each. */
  everyWorker(message: ToWorker): Promise<void> {
    let answered = 0;
    const done = this.wait<void>((_worker, reply, resolve) => {
      if (reply.type === 'loaded' && ++answered === this.workers.length) resolve();
    });
    for (const worker of this.workers) worker.postMessage(message);
    return done;
  }

  stop(): void {
    this.failure ??= new Error('stopped');
    for (const worker of this.workers) void worker.terminate();
  }

  private wait<T>(listen: (worker: Worker, message: FromWorker, resolve: (value: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.onFailure = reject;
      this.listener = (worker, message) => listen(worker, message, resolve);
    });
  }

  private receive(worker: Worker, message: FromWorker): void {
    if (this.failure) return;
    if (message.type === 'usage') return this.fail(new WorkerUsageError(message.message));
    if (message.type === 'failed') {
      const file = this.fileAt(message.round, message.index);
      return this.fail(
        new Error(
          file
            ? `${message.round === 'index' ? 'indexing' : 'analysing'} ${file} failed in a worker thread: ${message.message}`
            : `a worker thread failed to start: ${message.message}`,
        ),
      );
    }
    this.listener?.(worker, message);
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const worker of this.workers) void worker.terminate();
    this.onFailure?.(error);
  }

  private where(worker: Worker): string {
    const k = this.onFile.get(worker)?.[0];
    const file = k === undefined || this.round_ === null ? null : this.fileAt(this.round_, k);
    return file ? ` while ${this.round_ === 'index' ? 'indexing' : 'analysing'} ${file}` : '';
  }

  private fileAt(round: 'index' | 'analyse' | 'start', k: number): string | null {
    const file =
      round === 'index' ? this.input.plan.files[k] : round === 'analyse' ? this.input.sources[k]?.file : undefined;
    return file === undefined ? null : path.relative(this.input.cwd, file) || file;
  }
}
