/**
 * `check` on every core (issue 29): the bundled CLI with worker threads (`--jobs 4`) prints what
 * the serial path (`--jobs 1`) prints, to the byte, also where a file's results depend on other
 * files (a kernel, a wrapper or a constant written in a header); the same on every run; and a
 * worker that fails ends the run with one clear line instead of a hang.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli-run';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'cuda-occupancy.js');
const JOBS_FIXTURE = 'test/fixtures/jobs';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

function check(args: string[], env: Record<string, string> = {}): Run {
  const run = spawnSync(process.execPath, [CLI, 'check', '--no-nvcc', ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 50_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: run.status, signal: run.signal, out: run.stdout, err: run.stderr };
}

/** Worker threads even for a folder of a few files (the CLI keeps small inputs in process). */
const SMALL_INPUTS_TOO = { CUDA_OCCUPANCY_WORKER_MIN_BYTES: '0' };

describe('check --jobs (worker threads)', function () {
  this.timeout(120_000);

  before(function () {
    assert.ok(existsSync(CLI), 'run `npm run build` first');
    assert.ok(existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'check-worker.js')), 'the bundle ships its worker');
  });

  for (const format of [['--format', 'json'], ['--format', 'text'], ['--format', 'text', '--verbose'], ['-q']]) {
    it(`prints the same ${format.join(' ')} with --jobs 1 and --jobs 4 over files that read kernels, wrappers and constants of other files`, () => {
      const serial = check([...format, '--jobs', '1', JOBS_FIXTURE], SMALL_INPUTS_TOO);
      const parallel = check([...format, '--jobs', '4', JOBS_FIXTURE], SMALL_INPUTS_TOO);
      assert.equal(serial.code, 1, serial.err);
      assert.equal(parallel.out, serial.out);
      assert.equal(parallel.err, serial.err);
      assert.equal(parallel.code, serial.code);
    });
  }

  it('finds the cross-file facts the fixture is about (so that the comparison above means something)', () => {
    const json = JSON.parse(check(['--format', 'json', '--jobs', '4', JOBS_FIXTURE], SMALL_INPUTS_TOO).out);
    const file = (name: string) => json.files.find((f: { path: string }) => f.path.endsWith(`/${name}`));
    const codes = (name: string) =>
      file(name).diagnostics.map((d: { line: number; code: string }) => `${d.line}:${d.code}`);
    // The definition's bounds, reached through a header's declaration (scale.cu defines it).
    assert.ok(codes('uses-scale.cu').includes('6:launch-exceeds-bounds'), codes('uses-scale.cu').join(' '));
    // BLOCK from config.cuh, through kernels.cuh; the wrapper of launch.cuh read at its call.
    assert.ok(codes('fill.cu').includes('7:launch-exceeds-bounds'), codes('fill.cu').join(' '));
    assert.ok(codes('fill.cu').includes('8:launch-exceeds-bounds'), codes('fill.cu').join(' '));
    // TILE from config.cuh, which tile.cu does not include: not in its unit, so not known (never another file's guess).
    assert.equal(file('tile.cu').launches[0].threadsPerBlock, null);
  });

  it('prints the same JSON with --jobs 1 and the default over a folder large enough for workers without being told', () => {
    // The fixture tree (57 KB) six times over: above the size below which the CLI stays in process.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'check-jobs-'));
    try {
      for (const copy of ['a', 'b', 'c', 'd', 'e', 'f'])
        cpSync(path.join(REPO_ROOT, 'test', 'fixtures'), path.join(dir, copy), { recursive: true });
      const serial = check(['--format', 'json', '--fail-on', 'never', '--jobs', '1', dir]);
      const parallel = check(['--format', 'json', '--fail-on', 'never', dir]);
      assert.equal(serial.code, 0, serial.err);
      assert.ok(serial.out.length > 0 && JSON.parse(serial.out).files.length >= 240);
      assert.equal(parallel.out, serial.out);
      assert.equal(parallel.err, serial.err);
      // The default took the worker path (given three cores: one stays with the main thread): a worker
      // asked to fail fails it.
      if ((os.availableParallelism?.() ?? os.cpus().length) < 3) return;
      const failing = check(['--format', 'json', '--fail-on', 'never', dir], {
        CUDA_OCCUPANCY_TEST_WORKER_FAIL: 'throw:saxpy.cu',
      });
      assert.equal(failing.code, 2, failing.err);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the same on every run, whatever order the workers finish in', () => {
    const runs = [2, 3, 4, 3].map((jobs) =>
      check(['--format', 'json', '--jobs', String(jobs), JOBS_FIXTURE], SMALL_INPUTS_TOO),
    );
    for (const run of runs.slice(1)) assert.equal(run.out, runs[0].out);
  });

  it('ends with one line naming the file when a worker throws, and when a worker thread stops', () => {
    for (const [mode, says] of [
      ['throw', /analysing test\/fixtures\/jobs\/sums\.cu failed in a worker thread: a test asked/],
      ['exit', /a worker thread stopped \(exit code 3\) while analysing test\/fixtures\/jobs\/sums\.cu/],
    ] as const) {
      const run = check(['--jobs', '4', JOBS_FIXTURE], {
        ...SMALL_INPUTS_TOO,
        CUDA_OCCUPANCY_TEST_WORKER_FAIL: `${mode}:sums.cu`,
      });
      assert.equal(run.signal, null, 'it ended by itself, not by the time limit');
      assert.equal(run.code, 2, run.err);
      assert.equal(run.out, '');
      assert.match(run.err, /^cuda-occupancy: [^\n]+\n$/, JSON.stringify(run.err));
      assert.match(run.err, says);
    }
    // The failure is the workers' own: the in-process path is not asked to fail.
    const serial = check(['--jobs', '1', JOBS_FIXTURE], {
      ...SMALL_INPUTS_TOO,
      CUDA_OCCUPANCY_TEST_WORKER_FAIL: 'throw:sums.cu',
    });
    assert.equal(serial.code, 1, serial.err);
  });

  it('says a log without ptxas output is bad input (exit 2, one line), as the serial path does', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'check-jobs-'));
    try {
      const log = path.join(dir, 'build.log');
      writeFileSync(log, 'make: nothing to be done\n');
      const runs = ['1', '4'].map((jobs) =>
        check(['--jobs', jobs, '--ptxas-log', log, JOBS_FIXTURE], SMALL_INPUTS_TOO),
      );
      for (const run of runs) {
        assert.equal(run.code, 2, run.err);
        assert.match(run.err, /^cuda-occupancy: [^\n]*holds no ptxas output[^\n]*\n$/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
