/**
 * `cuda-occupancy check` compiles every `.cu` it is given, a file that only launches kernels
 * defined elsewhere too, and maps each unit's figures back to the kernels' definitions across
 * files; takes -I, -D, --std and nvcc's own arguments after `--`, like a compiler; and passes
 * quietly over kernel sources a program compiles at run time.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkJsonOf, runCli, sourceTree, REPO_ROOT } from '../support/cli-run';
import { fakeNvcc, loggedRuns, realNvccOrSkip } from '../support/nvcc';
import type { CheckJson, CheckJsonFile } from '../../server/src/cli/check-json-types';

const fileOf = (json: CheckJson, name: string) => json.files.find((f) => f.path.endsWith(name))!;

/** Each launch: its line, and its sm_80 occupancy, its range, or nothing. */
function launches(file: CheckJsonFile): string[] {
  return file.launches.map((l) => {
    const occupancy = l.occupancy.sm_80;
    const range = (
      l.occupancyRange as Record<string, { minOccupancy: number; maxOccupancy: number; instances: number }> | null
    )?.sm_80;
    const shown = occupancy
      ? `${occupancy.occupancy * 100}%`
      : range
        ? `${range.minOccupancy * 100}–${range.maxOccupancy * 100}% over ${range.instances}`
        : 'none';
    return `${l.line} ${l.kernel}: ${shown}`;
  });
}

describe('check compiles every translation unit and maps figures across files', function () {
  this.timeout(240_000);
  const nvcc = realNvccOrSkip();

  it("a .cu with no kernel of its own is compiled; a header's kernels show every instance the units compiled; same-named kernels keep their own figures", async () => {
    const json = await checkJsonOf(['test/fixtures/units', '--arch', 'sm_80', '--nvcc', nvcc, '--fail-on', 'never']);
    assert.deepEqual(launches(fileOf(json, 'main.cu')), [
      '6 gemm: 62.5–100% over 2',
      '10 fill: 100%',
      '11 tile: 100%',
      '12 tile: 100%',
    ]);
    const header = fileOf(json, 'kernels.cuh');
    const gemm = header.kernels.find((k) => k.name === 'gemm')!;
    assert.deepEqual(gemm.instances.map((i) => `${i.signature}: ${i.resources.sm_80.numRegs}`).sort(), [
      'void gemm<double, 48>(double const*, double*, int): 48',
      'void gemm<float, 4>(float const*, float*, int): 16',
    ]);
    assert.equal(
      header.kernels.find((k) => k.name === 'fill')!.instances[0].mangledName,
      '_Z4fillPffi',
      "a declaration shows its definition's figures",
    );
    // sample.cu does not compile (a missing header): its testKernel has no figures, not other.cu's.
    assert.deepEqual(launches(fileOf(json, 'sample.cu')), ['10 testKernel: none']);
    assert.deepEqual(launches(fileOf(json, 'other.cu')), ['9 testKernel: 100%']);
    const failed = fileOf(json, 'sample.cu').diagnostics.filter((d) => d.code === 'nvcc-failed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0].line, 1);
    assert.match(
      failed[0].message,
      /helper_cuda_missing\.h: No such file or directory\. To fix it, set `-I DIR` to the folder that holds it, or use `-p DIR` with the build's `compile_commands\.json`\./,
    );
  });
});

describe('check finds the headers nvcc cannot (real nvcc)', function () {
  this.timeout(240_000);
  const nvcc = realNvccOrSkip();

  it('compiles again with the folder of the one workspace header an `#include <...>` names, and leaves a header the workspace lacks missing', async () => {
    const dir = sourceTree({
      'Common/helper_y.h': '#pragma once\n#define TILE 128\n',
      'Samples/a/a.cu':
        '#include <helper_y.h>\n__global__ void k(float* x) { x[threadIdx.x] *= TILE; }\nvoid f(float* x) { k<<<1, TILE>>>(x); }\n',
      'Samples/b/b.cu':
        '#include <helper_absent.h>\n__global__ void g(float* x) { x[0] = 1; }\nvoid h(float* x) { g<<<1, 64>>>(x); }\n',
    });
    const json = await checkJsonOf(['.', '--arch', 'sm_80', '--nvcc', nvcc, '--no-cache', '--fail-on', 'never'], dir);
    const a = fileOf(json, 'a.cu');
    assert.ok(Number.isInteger(a.kernels[0].instances[0].resources.sm_80.numRegs), JSON.stringify(a.kernels[0]));
    assert.equal(a.launches[0].occupancy.sm_80?.occupancy, 1);
    const b = fileOf(json, 'b.cu');
    assert.match(b.diagnostics.find((d) => d.code === 'nvcc-failed')?.message ?? '', /helper_absent\.h: No such file/);
  });
});

describe('check passes compiler flags on to nvcc', () => {
  it('-I, -D, --std and the arguments after `--`, in that order, before its own', async () => {
    const dir = sourceTree({
      'launch.cu': '#include "k.cuh"\nvoid f(float* x) { kernel<<<1, 128>>>(x); }\n',
      'k.cuh': '__global__ void kernel(float* x) { x[0] = 1; }\n',
      'inc/x.h': '',
    });
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-args-')), 'args.jsonl');
    process.env.FAKE_NVCC_ARGS_LOG = log;
    try {
      const run = await runCli(
        [
          'check',
          'launch.cu',
          'k.cuh',
          '--arch',
          'sm_80',
          '--nvcc',
          fakeNvcc('nvcc-ok'),
          '-I',
          'inc',
          '-Iinc2',
          '-D',
          'FOO=1',
          '-DBAR',
          '--std',
          'c++17',
          '--format',
          'json',
          '--',
          '-Xptxas',
          '-O2',
          '--expt-relaxed-constexpr',
        ],
        dir,
      );
      assert.equal(run.code, 0, run.err);
      const [args] = loggedRuns(log);
      assert.deepEqual(args.slice(0, 11), [
        '-I',
        path.join(dir, 'inc'),
        '-I',
        path.join(dir, 'inc2'),
        '-DFOO=1',
        '-DBAR',
        '-std=c++17',
        '-Xptxas',
        '-O2',
        '--expt-relaxed-constexpr',
        '-arch=sm_80',
      ]);
      assert.equal(args[args.length - 1], path.join(dir, 'launch.cu'));
      // The fake compiles `_Z6kernelPf` at 10 + 80 % 7 = 13 registers: the header's kernel has them, through the launching unit.
      const json = JSON.parse(run.out) as CheckJson;
      assert.equal(json.files.find((f) => f.path === 'k.cuh')!.kernels[0].instances[0].resources.sm_80.numRegs, 13);
      assert.equal(json.files.find((f) => f.path === 'launch.cu')!.launches[0].occupancy.sm_80?.occupancy, 1);
    } finally {
      delete process.env.FAKE_NVCC_ARGS_LOG;
    }
  });

  it('tells nvcc the folders where the workspace found includes nobody said where to find, after every other flag', async () => {
    // A samples repository: each program includes `"helper.h"` from `Common/`, which no -I names.
    const dir = sourceTree({
      'Common/helper.h': '#pragma once\n#include "detail/more.h"\n',
      'Common/detail/more.h': '#define TILE 128\n',
      'Samples/a/a.cu':
        '#include "helper.h"\n#include "own.h"\n#include <vector>\n__global__ void k(float* x) { x[0] = TILE; }\nvoid f(float* x) { k<<<1, TILE>>>(x); }\n',
      'Samples/a/own.h': '',
    });
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-args-')), 'args.jsonl');
    process.env.FAKE_NVCC_ARGS_LOG = log;
    try {
      const run = await runCli(
        ['check', '.', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-ok'), '-I', 'inc', '--format', 'json'],
        dir,
      );
      assert.equal(run.code, 0, run.err);
      const [args] = loggedRuns(log);
      // `own.h` is beside the file and `detail/more.h` beside `helper.h`: only `Common` is new.
      assert.deepEqual(args.slice(0, 5), ['-I', path.join(dir, 'inc'), '-I', path.join(dir, 'Common'), '-arch=sm_80']);
    } finally {
      delete process.env.FAKE_NVCC_ARGS_LOG;
    }
  });

  it('refuses --jobs that is not a positive whole number', async () => {
    const run = await runCli(['check', 'x.cu', '--jobs', '0'], REPO_ROOT);
    assert.equal(run.code, 2);
    assert.match(run.err, /--jobs needs a positive whole number/);
  });
});

describe('check passes over kernel sources compiled at run time', () => {
  it('says nothing about a failed compile of a file with no #include and no host code; reports any other', async () => {
    const dir = sourceTree({
      // OpenMM-style: the program prepends its definitions (KEY_TYPE...) and compiles it with NVRTC.
      'kernels/sort.cu':
        'extern "C" __global__ void sortShortList(KEY_TYPE* data, unsigned int length) { data[threadIdx.x] = 0; }\n',
      'app.cu': '#include <cstdio>\n__global__ void k(float* x) { x[0] = 1; }\nint main() { k<<<1, 32>>>(nullptr); }\n',
    });
    const run = await runCli(
      [
        'check',
        '.',
        '--arch',
        'sm_80',
        '--nvcc',
        fakeNvcc('nvcc-fail'),
        '--format',
        'json',
        '--fail-on',
        'never',
        '--verbose',
      ],
      dir,
    );
    assert.equal(run.code, 0, run.err);
    assert.doesNotMatch(run.err, /sort\.cu/);
    assert.match(run.err, /app\.cu: nvcc failed: .*identifier "undefined_thing" is undefined/);
    const json = JSON.parse(run.out) as CheckJson;
    assert.deepEqual(
      fileOf(json, 'sort.cu').diagnostics.filter((d) => d.code === 'nvcc-failed'),
      [],
    );
    assert.equal(fileOf(json, 'app.cu').diagnostics.filter((d) => d.code === 'nvcc-failed').length, 1);
  });
});

describe("check's preprocessor reads the flags nvcc would get", () => {
  const source = `__global__ void k(float *p) { p[threadIdx.x] = 0; }
void run(float *p) {
#ifdef WIDE_BLOCKS
  const int threads = 512;
#else
  const int threads = 128;
#endif
  k<<<1, threads>>>(p);
}
`;
  const blocks = async (args: string[]) => {
    const dir = sourceTree({ 'a.cu': source });
    const json = await checkJsonOf(['a.cu', '--no-nvcc', '--jobs', '1', ...args], dir);
    return fileOf(json, 'a.cu').launches.map((l) => l.threadsPerBlock);
  };

  it('the nvcc that compiles the units decides `#if CUDART_VERSION` (the fake one is CUDA 99.0)', async () => {
    const dir = sourceTree({
      'v.cu': `__global__ void k(float *p) { p[threadIdx.x] = 0; }
void run(float *p) {
#if CUDART_VERSION >= 12000 && __CUDACC_VER_MAJOR__ >= 12
  k<<<1, 512>>>(p);
#else
  k<<<1, 64>>>(p);
#endif
}
`,
    });
    const json = await checkJsonOf(['v.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-ok'), '--no-cache'], dir);
    assert.deepEqual(
      fileOf(json, 'v.cu').launches.map((l) => `${l.line} ${l.threadsPerBlock}`),
      ['4 512'],
    );
  });

  it('-D decides an #ifdef, and so does a -D among the arguments after `--`', async () => {
    assert.deepEqual(await blocks(['-D', 'WIDE_BLOCKS']), [512]);
    assert.deepEqual(await blocks(['--', '-DWIDE_BLOCKS']), [512]);
    assert.deepEqual(await blocks(['-D', 'WIDE_BLOCKS', '--', '-UWIDE_BLOCKS']), [128]);
  });
});
