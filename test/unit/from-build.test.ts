/**
 * `check --from-build DIR`: figures from what a build already produced, without compiling. The
 * machine these tests run on has no cuobjdump (CUDA 13 without the binary utilities), so the object
 * side runs a fake cuobjdump (test/fixtures/fake-cuobjdump) over objects whose output follows the
 * format NVIDIA's CUDA Binary Utilities documentation shows; the tests say so in their names. The
 * logs are real ptxas output.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BuildFigures } from '../../server/src/core/compiler/build-figures';
import { listBuildOutputs, readBuildFigures } from '../../server/src/files/build-outputs';
import { checkJsonOf, runCli, sourceTree } from '../support/cli-run';
import { FAKE_CUDA_HOME, FAKE_CUOBJDUMP, fakeObject } from '../support/fake-cuobjdump';
import type { CheckJson } from '../../server/src/cli/check-json-types';

const ptxasLog = (name: string, arch: string, regs: number, smem: number, spills = 0) =>
  `[1/2] Building CUDA object k.cu.o\nptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function '${name}' for '${arch}'\n` +
  `ptxas info    : Function properties for ${name}\n    0 bytes stack frame, ${spills} bytes spill stores, ${spills} bytes spill loads\n` +
  `ptxas info    : Used ${regs} registers, used 1 barriers, ${smem} bytes smem, 368 bytes cmem[0]\n`;

const KERNEL = `__global__ void scale(float* x, float a, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { tile[threadIdx.x] = x[i]; __syncthreads(); x[i] = a * tile[threadIdx.x]; }
}
void run(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n); }
`;
const SCALE = '_Z5scalePffi';

async function withCudaHome<T>(home: string, work: () => Promise<T>): Promise<T> {
  const saved = process.env.CUDA_HOME;
  process.env.CUDA_HOME = home;
  try {
    return await work();
  } finally {
    if (saved === undefined) delete process.env.CUDA_HOME;
    else process.env.CUDA_HOME = saved;
  }
}

const sm80 = (json: CheckJson) => json.files[0].kernels[0].instances[0].resources.sm_80;

describe('figures from a build (--from-build)', function () {
  this.timeout(60_000);

  describe('BuildFigures: one figure per mangled name and architecture, or none when the files disagree', () => {
    it('an object and the library it went into agree (cuobjdump format from the documentation): one figure, from the newest file, with the count', () => {
      const build = new BuildFigures();
      const dump = fakeObject({ sm_80: { [SCALE]: { reg: 24, shared: 1024 } } }).slice('FAKE-OBJECT\n'.length);
      build.addObjectDump({ path: '/b/CMakeFiles/k.dir/k.cu.o', modifiedAt: 1000 }, dump);
      build.addObjectDump({ path: '/b/libk.a', modifiedAt: 2000 }, dump);
      const f = build.figuresOf(SCALE, 'sm_80')!;
      assert.equal(f.numRegs, 24);
      assert.equal(f.sharedSizeBytes, 1024);
      assert.equal(f.source, 'log');
      // cuobjdump says neither spills (LOCAL mixes them with local arrays) nor barriers: unknown, not 0.
      assert.equal(f.spillStoreBytes, null);
      assert.equal(f.barriers, null);
      assert.deepEqual(f.origin, { kind: 'object', via: 'cuobjdump', path: '/b/libk.a', modifiedAt: 2000, files: 2 });
      assert.equal(build.figuresOf(SCALE, 'sm_90'), null);
    });

    it('a log and an object of the same compile agree: the log gives spills and barriers too', () => {
      const build = new BuildFigures();
      build.addLog({ path: '/b/build.log', modifiedAt: 500 }, ptxasLog(SCALE, 'sm_80', 24, 1024, 8));
      build.addObjectDump(
        { path: '/b/k.o', modifiedAt: 400 },
        fakeObject({ sm_80: { [SCALE]: { reg: 24, shared: 1024 } } }).slice(12),
      );
      const f = build.figuresOf(SCALE, 'sm_80')!;
      assert.equal(f.numRegs, 24);
      assert.equal(f.spillStoreBytes, 8);
      assert.equal(f.barriers, 1);
      assert.equal(f.origin?.files, 2);
    });

    it('two objects with other figures for the same kernel and arch (two targets, other flags): unknown, with a note naming both, never one of them', () => {
      const build = new BuildFigures();
      build.addObjectDump(
        { path: '/b/a/k.cu.o', modifiedAt: 1 },
        fakeObject({ sm_80: { [SCALE]: { reg: 24 } } }).slice(12),
      );
      build.addObjectDump(
        { path: '/b/b/k.cu.o', modifiedAt: 2 },
        fakeObject({ sm_80: { [SCALE]: { reg: 64 } } }).slice(12),
      );
      const f = build.figuresOf(SCALE, 'sm_80')!;
      assert.equal(f.numRegs, null);
      assert.equal(f.source, 'unknown');
      assert.match(
        f.conflict!,
        /disagree on sm_80: 24 registers, 0 B smem in k\.cu\.o; 64 registers, 0 B smem in k\.cu\.o/,
      );
    });

    it('one log holding the kernel twice with other figures (two targets in one build log): unknown too', () => {
      const build = new BuildFigures();
      build.addLog(
        { path: '/b/build.log', modifiedAt: 1 },
        ptxasLog(SCALE, 'sm_80', 24, 1024) + ptxasLog(SCALE, 'sm_80', 32, 1024),
      );
      assert.equal(build.figuresOf(SCALE, 'sm_80')!.numRegs, null);
      const same = new BuildFigures();
      same.addLog({ path: '/b/build.log', modifiedAt: 1 }, ptxasLog(SCALE, 'sm_80', 24, 1024).repeat(3));
      assert.equal(same.figuresOf(SCALE, 'sm_80')!.numRegs, 24);
    });
  });

  describe('the build folder walk', () => {
    it('lists objects, libraries, cubins and logs; follows a link loop once; not a link out of the folder, a FIFO or an oversized file', () => {
      const dir = sourceTree({
        'CMakeFiles/k.dir/k.cu.o': 'x',
        'libk.a': 'x',
        'libk.so.1.2': 'x',
        'k.cubin': 'x',
        'build.log': 'x',
        'notes.txt': 'x',
        'big.o': 'x'.repeat(2000),
        'CMakeFiles/3.25.1/CompilerIdCUDA/a.o': 'x',
      });
      fs.symlinkSync(dir, path.join(dir, 'loop'));
      fs.symlinkSync(os.tmpdir(), path.join(dir, 'outside'));
      try {
        execFileSync('mkfifo', [path.join(dir, 'fifo.log')]);
      } catch {
        // no mkfifo: the rest still holds
      }
      const found = listBuildOutputs([dir], { maxObjectBytes: 1000 });
      assert.deepEqual(
        found.objects.map((o) => path.relative(dir, o.path)),
        ['CMakeFiles/k.dir/k.cu.o', 'k.cubin', 'libk.a', 'libk.so.1.2'],
      );
      assert.deepEqual(
        found.logs.map((o) => path.relative(dir, o.path)),
        ['build.log'],
      );
      assert.ok(found.skipped.some((s) => s.includes('big.o')));
      assert.ok(found.skipped.some((s) => s.includes('outside the build folder')));
    });

    it('stops at the object limit and says so', () => {
      const dir = sourceTree(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`o${i}.o`, 'x'])));
      const found = listBuildOutputs([dir], { maxObjects: 3 });
      assert.equal(found.objects.length, 3);
      assert.equal(found.truncated, true);
    });
  });

  describe('reading a build', () => {
    it('without cuobjdump: one line says so and that the device code was read directly; the logs still give figures', async () => {
      const dir = sourceTree({
        'k.cu.o': fakeObject({ sm_80: { [SCALE]: { reg: 99 } } }),
        'libk.a': 'x',
        'build.log': ptxasLog(SCALE, 'sm_80', 24, 1024),
      });
      const read = await readBuildFigures({ dirs: [dir], nvccPath: null, cuobjdumpPath: null });
      assert.equal(read.notes.filter((n) => /cuobjdump/.test(n)).length, 1);
      assert.match(
        read.notes[0],
        /cuobjdump not found .*read the device code of the build's 2 object\(s\) directly .*, 0 with kernels/,
      );
      assert.equal(read.build.figuresOf(SCALE, 'sm_80')!.numRegs, 24);
    });

    it('a fake cuobjdump (documented format) that hangs on one object is killed at the time limit; the other objects still count', async () => {
      const dir = sourceTree({
        'a.o': fakeObject({ sm_80: { [SCALE]: { reg: 24 } } }),
        'hang.o': 'FAKE-HANG',
        'host.o': 'ELF',
      });
      const started = Date.now();
      const read = await readBuildFigures({
        dirs: [dir],
        nvccPath: null,
        cuobjdumpPath: FAKE_CUOBJDUMP,
        timeoutMs: 1500,
      });
      assert.ok(Date.now() - started < 20_000);
      assert.equal(read.build.figuresOf(SCALE, 'sm_80')!.numRegs, 24);
      assert.equal(read.counts.objects, 3);
      assert.equal(read.counts.objectsWithFigures, 1);
    });
  });

  describe('cuda-occupancy check --from-build', () => {
    it('with a fake cuobjdump (documented format): the launch gets an occupancy from the object, and the JSON and text say which file', async () => {
      const dir = sourceTree({
        'src/k.cu': KERNEL,
        'build/CMakeFiles/k.dir/src/k.cu.o': fakeObject({
          sm_80: { [SCALE]: { reg: 24, shared: 1024 }, _Z6helperv: { reg: 8 } },
          sm_90: { [SCALE]: { reg: 26, shared: 1024 } },
        }),
        'build/libk.a': fakeObject({ sm_80: { [SCALE]: { reg: 24, shared: 1024 } } }),
        'build/host.o': 'ELF',
      });
      const json = await withCudaHome(FAKE_CUDA_HOME, () =>
        checkJsonOf(['src', '--from-build', 'build', '--no-nvcc', '--arch', 'sm_80,sm_90'], dir),
      );
      const r = sm80(json);
      assert.equal(r.numRegs, 24);
      assert.equal(r.source, 'log');
      const origin = r.origin as { kind: string; path: string; files: number; modifiedAt: string };
      assert.equal(origin.kind, 'object');
      assert.equal(origin.files, 2);
      assert.match(origin.modifiedAt, /^\d{4}-\d\d-\d\dT/);
      assert.equal(json.files[0].kernels[0].instances[0].resources.sm_90.numRegs, 26);
      const launch = json.files[0].launches[0];
      assert.equal(typeof (launch.occupancy.sm_80 as { occupancy: number }).occupancy, 'number');
      const text = await withCudaHome(FAKE_CUDA_HOME, () =>
        runCli(['check', 'src/k.cu', '--from-build', 'build', '--no-nvcc', '--arch', 'sm_80'], dir),
      );
      assert.match(
        text.out,
        /24 registers, 1 KB static smem, 0 B stack \[log: cuobjdump of (k\.cu\.o|libk\.a) and 1 more file\]/,
      );
      assert.match(
        text.err,
        /--from-build build: 3 figure\(s\), one per function and architecture, from 2 object\(s\) and 0 log\(s\)/,
      );
    });

    it('two targets built the kernel with other flags (fake cuobjdump, documented format): no occupancy, and the JSON names the conflict', async () => {
      const dir = sourceTree({
        'src/k.cu': KERNEL,
        'build/a/k.cu.o': fakeObject({ sm_80: { [SCALE]: { reg: 24 } } }),
        'build/b/k.cu.o': fakeObject({ sm_80: { [SCALE]: { reg: 200 } } }),
      });
      const json = await withCudaHome(FAKE_CUDA_HOME, () =>
        checkJsonOf(['src', '--from-build', 'build', '--no-nvcc', '--arch', 'sm_80'], dir),
      );
      const r = sm80(json);
      assert.equal(r.numRegs, null);
      assert.equal(r.source, 'unknown');
      assert.match(String(r.conflict), /24 registers.*200 registers/);
      assert.equal(json.files[0].launches[0].occupancy.sm_80, null);
    });

    it("a launch that could run several instances gets their range from a log, as from ptxas; none when the build's files disagree on one of them", async () => {
      const source = `template <int N> __global__ void tk(float* x) { x[threadIdx.x] = N; }
template <int N> void launch(float* x) { tk<N><<<1, 128>>>(x); }
void run(float* x) { launch<1>(x); launch<2>(x); }
`;
      const log = ptxasLog('_Z2tkILi1EEvPf', 'sm_80', 16, 0) + ptxasLog('_Z2tkILi2EEvPf', 'sm_80', 200, 0);
      const dir = sourceTree({ 'src/t.cu': source, 'build/build.log': log });
      const json = await checkJsonOf(['src', '--from-build', 'build', '--no-nvcc', '--arch', 'sm_80'], dir);
      const range = (json.files[0].launches[0].occupancyRange as Record<string, { minRegs: number; maxRegs: number }>)
        .sm_80;
      assert.deepEqual([range.minRegs, range.maxRegs], [16, 200]);
      fs.writeFileSync(path.join(dir, 'build', 'other.log'), ptxasLog('_Z2tkILi2EEvPf', 'sm_80', 40, 0));
      const split = await checkJsonOf(['src', '--from-build', 'build', '--no-nvcc', '--arch', 'sm_80'], dir);
      const launch = split.files[0].launches[0];
      assert.equal(launch.occupancy.sm_80, null);
      assert.equal((launch.occupancyRange as Record<string, unknown> | null)?.sm_80 ?? null, null);
    });

    it("the bundled CLI reads the build's figures where a large input would be analysed on worker threads", () => {
      const dir = sourceTree({
        'src/a.cu': KERNEL,
        'src/b.cu': '__global__ void other(int* y) { y[threadIdx.x] = 0; }\n',
        'build/build.log': ptxasLog(SCALE, 'sm_80', 24, 1024),
      });
      const out = execFileSync(
        process.execPath,
        [
          path.join(__dirname, '..', '..', '..', 'dist', 'cli', 'cuda-occupancy.js'),
          'check',
          '--format',
          'json',
          '--no-nvcc',
          '--jobs',
          '2',
          '--from-build',
          'build',
          '--arch',
          'sm_80',
          'src',
        ],
        { cwd: dir, encoding: 'utf8', env: { ...process.env, CUDA_OCCUPANCY_WORKER_MIN_BYTES: '0' } },
      );
      assert.equal(sm80(JSON.parse(out) as CheckJson).numRegs, 24);
    });

    it('does not run nvcc unless --nvcc names it, and a folder that is not there is a usage error', async () => {
      const dir = sourceTree({ 'src/k.cu': KERNEL, 'build/build.log': ptxasLog(SCALE, 'sm_80', 24, 1024) });
      const run = await runCli(['check', 'src/k.cu', '--from-build', 'build', '--arch', 'sm_80'], dir);
      assert.equal(run.code, 0, run.err);
      assert.doesNotMatch(run.err, /nvcc not found|nvcc failed/);
      assert.match(run.out, /24 registers.*\[log: build log build\.log\]/);
      const missing = await runCli(['check', 'src', '--from-build', 'nowhere', '--no-nvcc'], dir);
      assert.equal(missing.code, 2);
      assert.match(missing.err, /--from-build .*nowhere: not a directory/);
    });
  });
});
