/**
 * `nvcc -ptx -lineinfo` for the divergence costs: the arguments, a hostile nvcc (a compile error, a hang,
 * output that is not PTX, a cancel, no nvcc at all) with the temporary directory always removed, and the
 * real nvcc, whose PTX prices the branches of test/fixtures/divergence/ptx-branches.cu and is cached.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  compilePtx,
  contentHash,
  isPtxText,
  looksLikePtx,
  ptxArguments,
  type PtxText,
} from '../../server/src/nvcc/compile-ptx';
import { compileResources, nvccArguments } from '../../server/src/nvcc/compile-resources';
import { ResourceCache } from '../../server/src/nvcc/resource-cache';
import { refineBranchesWithPtx } from '../../server/src/core/compiler/ptx-branch-costs';
import type { CliBranch } from '../../server/src/cli/check-json';
import { DIVERGENCE_FIXTURES, analyzeSource } from '../support/divergence-fixtures';
import { checkJsonOf } from '../support/cli-run';
import { alive, fakeNvcc, realNvccOrSkip } from '../support/nvcc';

const PTXAS_FIXTURES = path.resolve(__dirname, '../../../test/fixtures/ptxas');
const fake = fakeNvcc;

describe('compile PTX: arguments and output checks', () => {
  it("asks for PTX with line information for one arch, the user's flags first and the file last", () => {
    assert.deepEqual(
      ptxArguments({ filePath: '/w/k.cu', flags: ['-I', 'inc', '-DN=4'], arch: 'sm_80', output: '/t/x.ptx' }),
      ['-I', 'inc', '-DN=4', '-arch=sm_80', '-ptx', '-lineinfo', '-o', '/t/x.ptx', '/w/k.cu'],
    );
    assert.deepEqual(ptxArguments({ filePath: '/w/k.cuh', flags: [], arch: 'sm_90a', output: '/t/x.ptx' }).slice(-3), [
      '-x',
      'cu',
      '/w/k.cuh',
    ]);
  });

  it('adds -lineinfo -keep to the figures compile only when asked to keep its PTX (-lineinfo changes no figure: docs/register-pressure.md)', () => {
    for (const archs of [['sm_80'], ['sm_80', 'sm_90']]) {
      const args = nvccArguments({ filePath: '/w/k.cu', flags: [], archs, outputDir: '/t' });
      assert.ok(!args.includes('-lineinfo') && !args.includes('-ptx') && !args.includes('-keep'), args.join(' '));
      const keeping = nvccArguments({ filePath: '/w/k.cu', flags: [], archs, outputDir: '/t', keep: true });
      const at = keeping.indexOf('-lineinfo');
      assert.deepEqual(keeping.slice(at, at + 4), ['-lineinfo', '-keep', '-keep-dir', '/t'], keeping.join(' '));
      assert.ok(!keeping.includes('-ptx') && keeping[keeping.length - 1] === '/w/k.cu');
    }
  });

  it('takes only text with .version and .target as PTX, also from the cache directory', () => {
    const ptx = fs.readFileSync(path.join(DIVERGENCE_FIXTURES, 'ptx-branches.ptx'), 'utf8');
    assert.equal(looksLikePtx(ptx), true);
    assert.equal(looksLikePtx('ELF'), false);
    assert.equal(looksLikePtx('.version 8.0\n'), false);
    assert.equal(isPtxText({ arch: 'sm_80', text: ptx, nvccVersion: 'V13.0.88', producedAt: 1 }), true);
    assert.equal(isPtxText({ arch: 'sm_80', text: 'ELF', nvccVersion: 'V13.0.88', producedAt: 1 }), false);
    assert.equal(isPtxText({ arch: 'sm_80', text: ptx, nvccVersion: 'V13.0.88' }), false);
  });
});

describe('compile PTX with a hostile nvcc', function () {
  this.timeout(20_000);
  let scratch: string;
  let tempRoot: string;
  let source: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'compile-ptx-'));
    tempRoot = path.join(scratch, 'tmp');
    fs.mkdirSync(tempRoot);
    source = path.join(scratch, 'k.cu');
    fs.writeFileSync(source, '__global__ void k(float* p) { if (threadIdx.x % 2) p[threadIdx.x] = 0; }\n');
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it("returns the compiler's first error when nvcc fails, and removes its temporary directory", async () => {
    const result = await compilePtx({
      nvccPath: fake('nvcc-fail'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 10_000,
      tempRoot,
    });
    assert.equal(result.status, 'failed');
    assert.deepEqual([result.error.line, result.error.message], [7, 'identifier "undefined_thing" is undefined']);
    assert.equal(result.sourceHash, contentHash(fs.readFileSync(source)));
    assert.deepEqual(result.command?.slice(1, 4), ['-arch=sm_80', '-ptx', '-lineinfo']);
    assert.deepEqual(fs.readdirSync(tempRoot), []);
  });

  it('stops a hanging nvcc and its children at the time limit', async () => {
    const pidFile = path.join(scratch, 'pids');
    const started = Date.now();
    const result = await compilePtx({
      nvccPath: fake('nvcc-hang'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 500,
      tempRoot,
      env: { ...process.env, FAKE_NVCC_PIDFILE: pidFile },
    });
    const elapsed = Date.now() - started;
    assert.equal(result.status, 'timed-out');
    assert.match(result.error.text, /did not finish within/);
    assert.ok(elapsed < 5000, `took ${elapsed} ms`);
    const [parent, child] = fs.readFileSync(pidFile, 'utf8').split(' ').map(Number);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(parent), false, 'nvcc still running');
    assert.equal(alive(child), false, 'its child still running');
    assert.deepEqual(fs.readdirSync(tempRoot), []);
  });

  it('is cancelled by its signal', async () => {
    const controller = new AbortController();
    const pending = compilePtx({
      nvccPath: fake('nvcc-hang'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 30_000,
      tempRoot,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 300);
    const result = await pending;
    assert.equal(result.status, 'cancelled');
    assert.deepEqual(fs.readdirSync(tempRoot), []);
    const early = await compilePtx({
      nvccPath: fake('nvcc-hang'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 30_000,
      tempRoot,
      signal: controller.signal,
    });
    assert.deepEqual([early.status, early.command], ['cancelled', null]);
  });

  it('refuses output that is not PTX (nvcc-ok writes a cubin) and caches nothing', async () => {
    const cache = new ResourceCache<PtxText>({ validate: isPtxText });
    const result = await compilePtx({
      nvccPath: fake('nvcc-ok'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 10_000,
      tempRoot,
      cache,
    });
    assert.equal(result.status, 'invalid-output');
    assert.equal(cache.size, 0);
    assert.deepEqual(fs.readdirSync(tempRoot), []);
  });

  it('says nvcc is missing instead of throwing', async () => {
    const result = await compilePtx({
      nvccPath: path.join(scratch, 'no-such-nvcc'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 10_000,
      tempRoot,
    });
    assert.equal(result.status, 'missing');
  });

  it("keeps each arch's PTX and cubin from the figures compile, removes its temporary directory, and compilePtx takes the kept PTX without running nvcc", async () => {
    const argsLog = path.join(scratch, 'args.log');
    const env = { ...process.env, FAKE_NVCC_ARGS_LOG: argsLog };
    fs.writeFileSync(source, 'extern "C" __global__ void k(float* p) { p[threadIdx.x] = 0; }\n');
    for (const archs of [['sm_80'], ['sm_80', 'sm_90']]) {
      const result = await compileResources({
        nvccPath: fake('nvcc-capped'),
        filePath: source,
        archs,
        timeoutMs: 10_000,
        tempRoot,
        env,
        keep: true,
      });
      assert.equal(result.status, 'ok');
      assert.deepEqual(
        result.kept.map((k) => [k.arch, k.ptx?.match(/^\.target (\w+)$/m)?.[1], k.cubin?.toString('latin1')]),
        archs.map((a) => [a, a, `\x7fELF fake cubin of ${source} for ${a}\n`]),
      );
      assert.deepEqual(fs.readdirSync(tempRoot), []);
    }
    const plain = await compileResources({
      nvccPath: fake('nvcc-capped'),
      filePath: source,
      archs: ['sm_80'],
      timeoutMs: 10_000,
      tempRoot,
      env,
    });
    assert.deepEqual(plain.kept, []);

    fs.writeFileSync(argsLog, '');
    const cache = new ResourceCache<PtxText>({ validate: isPtxText });
    const kept = '.version 8.0\n.target sm_80\n.address_size 64\n';
    const taken = await compilePtx({
      nvccPath: fake('nvcc-capped'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 10_000,
      tempRoot,
      cache,
      kept,
    });
    assert.ok(taken.status === 'ok');
    assert.deepEqual([taken.ptx.text, taken.command, cache.size], [kept, null, 1]);
    assert.equal(fs.readFileSync(argsLog, 'utf8'), '', 'nvcc ran for the PTX');
    // Kept text that is not PTX is not taken: nvcc -ptx runs.
    const ran = await compilePtx({
      nvccPath: fake('nvcc-capped'),
      filePath: source,
      arch: 'sm_80',
      timeoutMs: 10_000,
      tempRoot,
      kept: 'ELF',
    });
    assert.ok(ran.status === 'ok' && ran.command?.includes('-ptx'));
  });
});

describe('compile PTX with the real nvcc', function () {
  this.timeout(120_000);
  const nvcc = realNvccOrSkip();
  let scratch: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'compile-ptx-real-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('prices the divergent branch from the PTX it writes, then answers from the cache after a restart', async () => {
    const file = path.join(DIVERGENCE_FIXTURES, 'ptx-branches.cu');
    const tempRoot = path.join(scratch, 'tmp');
    fs.mkdirSync(tempRoot);
    const dir = path.join(scratch, 'cache');
    const result = await compilePtx({
      nvccPath: nvcc,
      filePath: file,
      arch: 'sm_80',
      timeoutMs: 60_000,
      tempRoot,
      cache: new ResourceCache<PtxText>({ dir, validate: isPtxText }),
    });
    assert.equal(result.status, 'ok', result.status !== 'ok' ? result.error.text : '');
    assert.ok(result.status === 'ok');
    assert.deepEqual(fs.readdirSync(tempRoot), []);
    assert.equal(result.cacheHit, false);
    assert.equal(result.sourceHash, contentHash(fs.readFileSync(file)));
    assert.match(result.ptx.text, /^\.target sm_80$/m);
    assert.match(result.ptx.text, /^\s*\.file\s+\d+\s+"[^"]*ptx-branches\.cu"/m);

    const branches = await analyzeSource(fs.readFileSync(file, 'utf8'));
    const refined = refineBranchesWithPtx(branches, result.ptx.text, file);
    const split = refined.find((b) => b.condition === 't % 2 == 0')!;
    assert.equal(split.costSource, 'ptx');
    // the then path inlines heavy() (8 × __sinf): far longer than the else path's one add
    assert.ok(
      split.paths[0].cost > 8 && split.paths[1].cost >= 1 && split.paths[1].cost < split.paths[0].cost,
      JSON.stringify(split.paths),
    );

    const again = await compilePtx({
      nvccPath: nvcc,
      filePath: file,
      arch: 'sm_80',
      timeoutMs: 60_000,
      cache: new ResourceCache<PtxText>({ dir, validate: isPtxText }),
    });
    assert.ok(again.status === 'ok');
    assert.deepEqual([again.cacheHit, again.command, again.ptx.text], [true, null, result.ptx.text]);
    const otherArch = await compilePtx({
      nvccPath: nvcc,
      filePath: file,
      arch: 'sm_90',
      timeoutMs: 60_000,
      cache: new ResourceCache<PtxText>({ dir, validate: isPtxText }),
    });
    assert.ok(otherArch.status === 'ok');
    assert.equal(otherArch.cacheHit, false);
    assert.match(otherArch.ptx.text, /^\.target sm_90$/m);
  });

  it("returns the front end's first error for a file that does not compile", async () => {
    const file = path.join(scratch, 'broken.cu');
    fs.writeFileSync(file, '__global__ void k(float* p) {\n  p[threadIdx.x] = undefined_thing;\n}\n');
    const result = await compilePtx({ nvccPath: nvcc, filePath: file, arch: 'sm_80', timeoutMs: 60_000 });
    assert.equal(result.status, 'failed');
    assert.equal(result.error.line, 2);
    assert.match(result.error.message, /undefined_thing/);
  });

  it('gives `cuda-occupancy check` the PTX costs for its branches and warnings', async () => {
    const file = path.join(DIVERGENCE_FIXTURES, 'ptx-branches.cu');
    const ptx = await compilePtx({ nvccPath: nvcc, filePath: file, arch: 'sm_80', timeoutMs: 60_000 });
    assert.ok(ptx.status === 'ok');
    const expected = refineBranchesWithPtx(await analyzeSource(fs.readFileSync(file, 'utf8')), ptx.ptx.text, file).find(
      (b) => b.condition === 't % 2 == 0',
    )!;
    const relative = path.relative(path.resolve(DIVERGENCE_FIXTURES, '../../..'), file);
    const withNvcc = (await checkJsonOf(['--arch', 'sm_80,sm_90', '--nvcc', nvcc, relative])).files[0];
    const without = (await checkJsonOf(['--arch', 'sm_80,sm_90', '--no-nvcc', relative])).files[0];
    const split = (branches: unknown[]) => (branches as CliBranch[]).find((b) => b.condition === 't % 2 == 0')!;
    assert.equal(split(withNvcc.branches).efficiency, expected.efficiency);
    assert.notEqual(split(without.branches).efficiency, expected.efficiency);
    assert.deepEqual(
      withNvcc.diagnostics.filter((d) => d.code === 'divergent-branch').map((d) => d.message),
      [expected.explanation],
    );
    assert.match(expected.explanation, /PTX instructions\)\.$/);
  });

  it('keeps from the figures compile the PTX nvcc -ptx -lineinfo writes, with the same figures as a compile that keeps nothing', async () => {
    for (const file of [path.join(DIVERGENCE_FIXTURES, 'ptx-branches.cu'), path.join(PTXAS_FIXTURES, 'templates.cu')]) {
      const archs = ['sm_80', 'sm_90'];
      const plain = await compileResources({ nvccPath: nvcc, filePath: file, archs, timeoutMs: 60_000 });
      const keeping = await compileResources({ nvccPath: nvcc, filePath: file, archs, timeoutMs: 60_000, keep: true });
      assert.deepEqual([plain.status, keeping.status], ['ok', 'ok']);
      const figures = (r: typeof plain) => r.perArch.map((a) => a.entries.map(({ line: _line, ...rest }) => rest));
      assert.deepEqual(figures(keeping), figures(plain));
      const ptx = await compilePtx({ nvccPath: nvcc, filePath: file, arch: 'sm_80', timeoutMs: 60_000 });
      assert.ok(ptx.status === 'ok');
      assert.equal(keeping.kept[0].ptx, ptx.ptx.text);
      assert.deepEqual(
        keeping.kept.map((k) => [k.arch, k.cubin?.subarray(0, 4).toString('latin1')]),
        archs.map((a) => [a, '\x7fELF']),
      );
      console.log(
        `    ${path.basename(file)}, sm_80 + sm_90: figures compile ${plain.compileMs} ms, keeping its PTX and cubin ${keeping.compileMs} ms, a separate PTX compile ${ptx.compileMs} ms`,
      );
    }
  });
});
