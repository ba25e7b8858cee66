/** For the tests that run a compiler: the real nvcc when there is one, the fake ones, and process checks. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** nvcc for the real-compiler tests: $CUDA_OCCUPANCY_TEST_NVCC, $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, or PATH. */
export function findNvcc(): string | null {
  const candidates = [
    process.env.CUDA_OCCUPANCY_TEST_NVCC,
    process.env.CUDA_HOME && path.join(process.env.CUDA_HOME, 'bin', 'nvcc'),
    '/usr/local/cuda/bin/nvcc',
    ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => dir && path.join(dir, 'nvcc')),
  ];
  return candidates.find((c): c is string => Boolean(c) && fs.existsSync(c as string)) ?? null;
}

/** In a suite that needs the real nvcc: skips the suite, saying why, when there is none. Returns its path ('' when skipped). */
export function realNvccOrSkip(): string {
  const nvcc = findNvcc();
  before(function () {
    if (!nvcc) {
      console.log('    (skipped: no nvcc found; set CUDA_OCCUPANCY_TEST_NVCC to run the real-compiler tests)');
      this.skip();
    }
  });
  return nvcc ?? '';
}

export const FAKE_NVCC_DIR = path.resolve(__dirname, '../../../test/fixtures/fake-nvcc');

/** A script of test/fixtures/fake-nvcc standing in for nvcc (hanging, crashing, flooding, ...). */
export const fakeNvcc = (name: string) => path.join(FAKE_NVCC_DIR, name);

/** Each run a fake tool logged (FAKE_NVCC_ARGS_LOG, FAKE_NVDISASM_ARGS_LOG): its arguments, one JSON array a line. */
export function loggedRuns(log: string): string[][] {
  return fs
    .readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as string[]);
}

/** Whether a process is still running. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether a process is running: alive and not a zombie (a killed orphan waits for init to reap it, which in some containers never comes). */
export function running(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}
