import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseNvccVersion, runNvcc } from '../../server/src/nvcc/nvcc-runner';
import { compileResources, findFirstCompilerError, nvccArguments } from '../../server/src/nvcc/compile-resources';
import { alive, fakeNvcc } from '../support/nvcc';

const fake = fakeNvcc;

describe('nvcc runner (hostile nvcc)', function () {
  this.timeout(20_000);
  if (process.platform === 'win32') {
    it('is exercised on POSIX only (the fake nvcc scripts use #!)', function () {
      this.skip();
    });
    return;
  }
  let scratch: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'nvcc-runner-test-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('passes plain arguments intact, and refuses to start with one a shell would read (nvcc runs its stages through sh)', async () => {
    const plain = [
      '-I/opt/inc',
      '-DN=4',
      '-Xptxas=-v,-warn-spills',
      '--std=c++17',
      '-gencode=arch=compute_80,code=sm_80',
    ];
    const ok = await runNvcc({ nvccPath: fake('nvcc-echo-args'), args: plain, timeoutMs: 10_000, cwd: scratch });
    assert.equal(ok.status, 'exited');
    assert.deepEqual(JSON.parse(ok.stdout), plain);
    for (const hostile of [
      '-I/path with spaces/inc',
      '-DQUOTE="a b"',
      "-DSINGLE='x'",
      '$(touch pwned)',
      'a;b',
      '`touch pwned`',
      '&&',
      '|',
      '-Dnäme=ü',
      '日本語.cu',
      '',
      '*',
      'x\ny',
    ]) {
      const result = await runNvcc({
        nvccPath: fake('nvcc-echo-args'),
        args: ['-DA', hostile],
        timeoutMs: 10_000,
        cwd: scratch,
      });
      assert.equal(result.status, 'failed-to-start', JSON.stringify(hostile));
      assert.match(result.error ?? '', /holds a character a shell would interpret/);
    }
    assert.deepEqual(fs.readdirSync(scratch), [], 'nothing ran');
  });

  it('runs an nvcc whose own path has spaces and non-ASCII', async () => {
    const dir = path.join(scratch, 'cuda tools ü');
    fs.mkdirSync(dir);
    fs.copyFileSync(fake('nvcc-echo-args'), path.join(dir, 'nvcc-echo-args'));
    fs.copyFileSync(fake('common.js'), path.join(dir, 'common.js'));
    fs.chmodSync(path.join(dir, 'nvcc-echo-args'), 0o755);
    const result = await runNvcc({ nvccPath: path.join(dir, 'nvcc-echo-args'), args: ['x'], timeoutMs: 10_000 });
    assert.deepEqual(JSON.parse(result.stdout), ['x']);
  });

  it('reports a missing binary as missing, without throwing', async () => {
    const result = await runNvcc({ nvccPath: path.join(scratch, 'no-such-nvcc'), args: [], timeoutMs: 1000 });
    assert.deepEqual([result.status, result.exitCode, result.timedOut], ['missing', null, false]);
    const notExecutable = path.join(scratch, 'nvcc');
    fs.writeFileSync(notExecutable, 'not a program');
    assert.equal((await runNvcc({ nvccPath: notExecutable, args: [], timeoutMs: 1000 })).status, 'missing');
  });

  it('kills a hanging nvcc and its children at the time limit, even when it ignores SIGTERM', async () => {
    const pidFile = path.join(scratch, 'pids');
    const started = Date.now();
    const result = await runNvcc({
      nvccPath: fake('nvcc-hang'),
      args: [],
      timeoutMs: 1000,
      killGraceMs: 300,
      env: { ...process.env, FAKE_NVCC_PIDFILE: pidFile },
    });
    const elapsed = Date.now() - started;
    assert.deepEqual([result.status, result.timedOut], ['timed-out', true]);
    assert.ok(elapsed >= 1000 && elapsed < 4000, `took ${elapsed} ms`);
    const [parent, child] = fs.readFileSync(pidFile, 'utf8').split(' ').map(Number);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(parent), false, 'nvcc still running');
    assert.equal(alive(child), false, 'its child still running');
  });

  it('stops a run when its signal aborts, and does not start one already aborted', async () => {
    const controller = new AbortController();
    const pending = runNvcc({
      nvccPath: fake('nvcc-hang'),
      args: [],
      timeoutMs: 30_000,
      signal: controller.signal,
      killGraceMs: 200,
    });
    setTimeout(() => controller.abort(), 300);
    const result = await pending;
    assert.deepEqual([result.status, result.cancelled, result.timedOut], ['cancelled', true, false]);
    assert.ok(result.durationMs < 3000);
    assert.equal(
      (await runNvcc({ nvccPath: fake('nvcc-hang'), args: [], timeoutMs: 1000, signal: controller.signal })).status,
      'cancelled',
    );
  });

  it('reports a crash with its signal', async () => {
    const result = await runNvcc({ nvccPath: fake('nvcc-crash'), args: [], timeoutMs: 10_000 });
    assert.deepEqual([result.status, result.exitCode, result.signal], ['exited', null, 'SIGSEGV']);
  });

  it('bounds the output it keeps', async () => {
    const result = await runNvcc({
      nvccPath: fake('nvcc-flood'),
      args: [],
      timeoutMs: 20_000,
      maxOutputBytes: 1024 * 1024,
    });
    assert.equal(result.status, 'exited');
    assert.equal(result.truncated, true);
    assert.equal(result.stderr.length, 1024 * 1024);
  });

  it('reads the version nvcc prints', () => {
    assert.deepEqual(parseNvccVersion('Cuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0'), {
      release: '13.0',
      build: 'V13.0.88',
    });
    assert.equal(parseNvccVersion('garbage'), null);
  });

  describe('compileResources with a hostile nvcc', () => {
    let source: string;
    let tempRoot: string;
    beforeEach(() => {
      source = path.join(scratch, 'kernel file ü.cu');
      fs.writeFileSync(source, '__global__ void kernel(float* p) { p[0] = 1; }\n');
      tempRoot = path.join(scratch, 'tmp');
      fs.mkdirSync(tempRoot);
    });

    it('compiles, parses and removes its temporary directory (nvcc scratch files included)', async () => {
      const result = await compileResources({
        nvccPath: fake('nvcc-ok'),
        filePath: source,
        archs: ['sm_80', 'sm_90'],
        timeoutMs: 10_000,
        tempRoot,
      });
      assert.equal(result.status, 'ok');
      assert.deepEqual(
        result.perArch.map((a) => [a.arch, a.entries[0].numRegs]),
        [
          ['sm_80', 13],
          ['sm_90', 16],
        ],
      );
      assert.equal(result.invocations, 1);
      assert.equal(result.nvccVersion, 'V99.0.1');
      assert.deepEqual(fs.readdirSync(tempRoot), []);
      assert.deepEqual(
        fs.readdirSync(scratch).sort(),
        ['kernel file ü.cu', 'tmp'],
        'nothing written next to the source',
      );
    });

    it('compiles one arch at a time in per-arch mode', async () => {
      const result = await compileResources({
        nvccPath: fake('nvcc-ok'),
        filePath: source,
        archs: ['sm_80', 'sm_90'],
        timeoutMs: 10_000,
        tempRoot,
        mode: 'per-arch',
      });
      assert.deepEqual([result.status, result.invocations], ['ok', 2]);
    });

    it('returns the first compiler error of a failing compile', async () => {
      const result = await compileResources({
        nvccPath: fake('nvcc-fail'),
        filePath: source,
        archs: ['sm_90'],
        timeoutMs: 10_000,
        tempRoot,
      });
      assert.equal(result.status, 'failed');
      assert.deepEqual(result.failedArchs, ['sm_90']);
      assert.deepEqual(
        [result.firstError?.file, result.firstError?.line, result.firstError?.message],
        [source, 7, 'identifier "undefined_thing" is undefined'],
      );
      assert.deepEqual(fs.readdirSync(tempRoot), []);
    });

    it('treats garbage output as no figures, never as numbers', async () => {
      const result = await compileResources({
        nvccPath: fake('nvcc-garbage'),
        filePath: source,
        archs: ['sm_90'],
        timeoutMs: 10_000,
        tempRoot,
      });
      assert.equal(result.status, 'ok');
      for (const entry of result.entries) assert.equal(entry.numRegs, null);
    });

    it('reports a crash as a failure and a hang as a timeout, cleaning up both', async () => {
      const crash = await compileResources({
        nvccPath: fake('nvcc-crash'),
        filePath: source,
        archs: ['sm_90'],
        timeoutMs: 10_000,
        tempRoot,
      });
      assert.equal(crash.status, 'failed');
      assert.match(crash.firstError?.message ?? '', /SIGSEGV/);
      const hang = await compileResources({
        nvccPath: fake('nvcc-hang'),
        filePath: source,
        archs: ['sm_90'],
        timeoutMs: 800,
        tempRoot,
      });
      assert.equal(hang.status, 'timed-out');
      assert.match(hang.firstError?.message ?? '', /did not finish/);
      assert.deepEqual(fs.readdirSync(tempRoot), []);
    });

    it('reports a missing nvcc', async () => {
      const result = await compileResources({
        nvccPath: path.join(scratch, 'nope', 'nvcc'),
        filePath: source,
        archs: ['sm_90'],
        timeoutMs: 1000,
        tempRoot,
      });
      assert.equal(result.status, 'missing');
    });
  });

  it('builds nvcc arguments: cubin for one arch, fatbin with -gencode for several, -x cu for other extensions', () => {
    assert.deepEqual(nvccArguments({ filePath: '/w/a.cu', flags: ['-I/x'], archs: ['sm_90a'], outputDir: '/t' }), [
      '-I/x',
      '-arch=sm_90a',
      '-cubin',
      '-o',
      path.join('/t', 'out.cubin'),
      '-Xptxas',
      '-v',
      '/w/a.cu',
    ]);
    assert.deepEqual(nvccArguments({ filePath: '/w/a.cuh', flags: [], archs: ['sm_80', 'sm_90'], outputDir: '/t' }), [
      '-gencode=arch=compute_80,code=sm_80',
      '-gencode=arch=compute_90,code=sm_90',
      '-fatbin',
      '-o',
      path.join('/t', 'out.fatbin'),
      '-Xptxas',
      '-v',
      '-x',
      'cu',
      '/w/a.cuh',
    ]);
  });

  it('finds the first error in front-end, host-compiler, nvcc and ptxas output', () => {
    assert.deepEqual(findFirstCompilerError('a.cu(3): warning #1: w\nb.cu(12): error: bad thing\n'), {
      file: 'b.cu',
      line: 12,
      column: null,
      message: 'bad thing',
      text: 'b.cu(12): error: bad thing',
    });
    assert.equal(findFirstCompilerError('x.h:4:10: fatal error: y.h: No such file or directory')?.column, 10);
    assert.equal(
      findFirstCompilerError("nvcc fatal   : Unsupported gpu architecture 'compute_999'")?.message,
      "Unsupported gpu architecture 'compute_999'",
    );
    assert.match(
      findFirstCompilerError(
        "ptxas error   : Entry function '_Z1kv' uses too much shared data (0x13880 bytes, 0xc000 max)",
      )?.message ?? '',
      /too much shared/,
    );
    assert.equal(findFirstCompilerError('all fine'), null);
  });
});
