/**
 * A compiler run stays contained (issue 25, cases 3 and 10): every process of it is held to the memory limit,
 * and a timeout (or the run's end) leaves none of them behind, not even one that called setsid or whose
 * parent exited. A header linked to /dev/zero ends in a failed compile, not gigabytes.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { limitedCommand, runNvcc } from '../../server/src/nvcc/nvcc-runner';
import { compileResources } from '../../server/src/nvcc/compile-resources';
import { fakeNvcc, realNvccOrSkip, running } from '../support/nvcc';

const MB = 1024 * 1024;

describe('compiler runs are contained', function () {
  this.timeout(30_000);
  if (process.platform !== 'linux') {
    it('is exercised on Linux only (/proc, prlimit)', function () {
      this.skip();
    });
    return;
  }
  let scratch: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-contain-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  for (const limiter of ['prlimit', 'sh'] as const) {
    it(`holds nvcc and its children to the memory limit (through ${limiter})`, async function () {
      if (limiter === 'prlimit' && limitedCommand('/bin/true', [], MB, 'prlimit').file === '/bin/sh') this.skip();
      const result = await runNvcc({
        nvccPath: fakeNvcc('nvcc-limits'),
        args: [],
        timeoutMs: 10_000,
        memoryLimitBytes: 1536 * MB,
        limiter,
      });
      assert.equal(result.status, 'exited', result.stderr);
      assert.deepEqual(JSON.parse(result.stdout), { own: String(1536 * MB), child: String(1536 * MB) });
    });
  }

  it("builds the limiter's command from an argument array, never from a script with the user's strings in it", () => {
    const args = ['-DX=$(touch pwned)', '; rm -rf /', '`id`', "'"];
    const sh = limitedCommand('/opt/cuda/bin/nvcc', args, 2048 * MB, 'sh');
    assert.deepEqual(sh, {
      file: '/bin/sh',
      args: [
        '-c',
        'ulimit -v "$1" || exit 125; shift; exec "$@"',
        'cuda-occupancy-limit',
        String(2048 * 1024),
        '/opt/cuda/bin/nvcc',
        ...args,
      ],
    });
    assert.deepEqual(limitedCommand('/opt/cuda/bin/nvcc', args, undefined), { file: '/opt/cuda/bin/nvcc', args });
  });

  it('passes arguments intact through the sh limiter (its script reads none of them)', () => {
    // runNvcc gives nvcc plain words only; the limiter's own script must not read them either.
    const args = ['$(touch pwned)', 'a;b', '`id`', "it's", '"q"', '*', ''];
    const command = limitedCommand(fakeNvcc('nvcc-echo-args'), args, 2048 * MB, 'sh');
    const out = execFileSync(command.file, command.args, { cwd: scratch, encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), args);
    assert.deepEqual(fs.readdirSync(scratch), []);
  });

  it('kills, at the time limit, a child that called setsid and a grandchild whose parent exited', async () => {
    const pidFile = path.join(scratch, 'pids');
    const result = await runNvcc({
      nvccPath: fakeNvcc('nvcc-setsid'),
      args: [],
      timeoutMs: 1500,
      killGraceMs: 300,
      env: { ...process.env, FAKE_NVCC_PIDFILE: pidFile },
    });
    assert.equal(result.status, 'timed-out');
    const pids = fs.readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
    assert.equal(pids.length, 3, pids.join(' '));
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(pids.filter(running), [], 'processes of the run survived');
  });

  it('leaves nothing behind after a run that exited by itself', async () => {
    const pidFile = path.join(scratch, 'pids');
    const result = await runNvcc({
      nvccPath: fakeNvcc('nvcc-setsid'),
      args: [],
      timeoutMs: 10_000,
      killGraceMs: 300,
      env: { ...process.env, FAKE_NVCC_PIDFILE: pidFile, FAKE_NVCC_EXIT: '1' },
    });
    assert.deepEqual([result.status, result.exitCode], ['exited', 0]);
    const pids = fs.readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(pids.filter(running), []);
  });

  describe('with the real nvcc', () => {
    const nvcc = realNvccOrSkip();

    it('fails a compile that includes /dev/zero within the memory limit, at once', async () => {
      fs.symlinkSync('/dev/zero', path.join(scratch, 'zero.h'));
      const source = path.join(scratch, 'k.cu');
      // Computed, so that the scan of the include closure (include-closure.ts) does not refuse it first.
      fs.writeFileSync(
        source,
        '#define Q(x) #x\n#define NAME(x) Q(x)\n#include NAME(zero.h)\n__global__ void k(float* p) { p[0] = 1; }\n',
      );
      const started = Date.now();
      const result = await compileResources({
        nvccPath: nvcc,
        filePath: source,
        archs: ['sm_80'],
        timeoutMs: 25_000,
        memoryLimitBytes: 1024 * MB,
      });
      assert.equal(result.status, 'failed', JSON.stringify(result.firstError));
      assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
    });

    it('still compiles an ordinary file under the default limit', async () => {
      const source = path.join(scratch, 'k.cu');
      fs.writeFileSync(source, '__global__ void k(float* p) { p[threadIdx.x] = 1; }\n');
      const result = await compileResources({
        nvccPath: nvcc,
        filePath: source,
        archs: ['sm_80', 'sm_90'],
        timeoutMs: 60_000,
        memoryLimitBytes: 4096 * MB,
      });
      assert.equal(result.status, 'ok', JSON.stringify(result.firstError));
      assert.ok(result.entries.every((e) => e.numRegs !== null && e.numRegs > 0));
    });
  });
});
