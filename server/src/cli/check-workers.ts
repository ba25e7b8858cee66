/**
 * `check` on every core: worker threads (check-worker.ts), each with its own parser and its own
 * copy of the workspace index, analyse the files handed to them one at a time, and the results
 * are put back in the files' order, so the output is the serial path's to the byte.
 *
 * Each worker builds the whole index itself from the same texts: the index is what a file reads
 * of other files (kernels, wrappers and constants in headers), and it costs a fraction of the
 * analysis, so building it again beats shipping its tables between threads.
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { CheckedFile, CheckOutputs, IndexInput } from './check-analysis';

/**
 * Below this many files the serial path is used: a worker's start (its bundle, the grammar, the
 * whole index) costs about what the analysis of a dozen middling files does.
 */
export const MIN_FILES_FOR_WORKERS = 12;

/** MIN_FILES_FOR_WORKERS, or `CUDA_OCCUPANCY_WORKER_MIN_FILES` (tests and measurements of small inputs). */
export function minFilesForWorkers(): number {
  const set = Number(process.env.CUDA_OCCUPANCY_WORKER_MIN_FILES);
  return Number.isInteger(set) && set > 0 ? set : MIN_FILES_FOR_WORKERS;
}

/** What each worker starts with. */
export interface WorkerInput extends IndexInput {
  cwd: string;
  archs: string[];
  gpus: string[];
  outputs: CheckOutputs;
  /** A build log's text, for every worker's figures. */
  log: { name: string; text: string; producedAt: number | null } | null;
}

export type ToWorker = { type: 'analyse'; index: number };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'done'; index: number; checked: CheckedFile }
  | { type: 'failed'; index: number; message: string }
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
 * Analyse `input.sources` on `workers` threads; the results in the sources' order. Rejects when a
 * worker fails (the file it was on and why), and stops every worker first: a failure never hangs.
 */
export function checkInWorkers(input: WorkerInput, workers: number): Promise<CheckedFile[]> {
  const total = input.sources.length;
  const results: CheckedFile[] = new Array(total);
  let next = 0;
  let finished = 0;
  const pool: Worker[] = [];
  const busy = new Map<Worker, number>();
  return new Promise<CheckedFile[]>((resolve, reject) => {
    let settled = false;
    const stop = () => {
      for (const w of pool) void w.terminate();
    };
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      stop();
      reject(error);
    };
    const where = (index: number) =>
      index >= 0 && index < total
        ? path.relative(input.cwd, input.sources[index].file) || input.sources[index].file
        : null;
    const handOut = (worker: Worker) => {
      if (next >= total) {
        busy.delete(worker);
        return;
      }
      busy.set(worker, next);
      worker.postMessage({ type: 'analyse', index: next++ } satisfies ToWorker);
    };
    for (let k = 0; k < Math.min(workers, total); k++) {
      const worker = new Worker(workerScript(), { workerData: input });
      pool.push(worker);
      worker.on('message', (message: FromWorker) => {
        if (settled) return;
        if (message.type === 'ready') return handOut(worker);
        if (message.type === 'usage') return fail(new WorkerUsageError(message.message));
        if (message.type === 'failed') {
          const file = where(message.index);
          return fail(
            new Error(
              file
                ? `analysing ${file} failed in a worker thread: ${message.message}`
                : `a worker thread failed to start: ${message.message}`,
            ),
          );
        }
        results[message.index] = message.checked;
        if (++finished === total) {
          settled = true;
          stop();
          resolve(results);
        } else handOut(worker);
      });
      worker.on('error', (error) => {
        const file = where(busy.get(worker) ?? -1);
        fail(new Error(`a worker thread failed${file ? ` while analysing ${file}` : ''}: ${error.message}`));
      });
      worker.on('exit', (code) => {
        const file = where(busy.get(worker) ?? -1);
        fail(new Error(`a worker thread stopped (exit code ${code})${file ? ` while analysing ${file}` : ''}`));
      });
    }
  });
}
