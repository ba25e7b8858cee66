/**
 * `cuda-occupancy check`'s text output, as a terminal and an editor's problem matcher read it:
 * the exact lines for a small project, `-q` and `--verbose`, paths that never climb out of the
 * working directory, the `$gcc` problem matcher on every line, plain text for a template
 * launch, nvcc's failures summed up once on stderr, and JSON and SARIF byte for byte as they
 * were (golden files; `UPDATE_GOLDEN=1` rewrites them).
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runCli, sourceTree, REPO_ROOT } from '../support/cli-run';

const TILE_CU = `// occupancy: regs=40 smem=1024
template <int BS>
__global__ void tile_sum(const float* in, float* out, int n) {
  int i = blockIdx.x * BS + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// occupancy: regs=32
__global__ void __launch_bounds__(128) scale_rows(float* m) { m[threadIdx.x] *= 2.0f; }

void run(const float* in, float* out, float* m, int n, cudaStream_t st) {
  tile_sum<256><<<120, 256, 0, st>>>(in, out, n);
  scale_rows<<<64, 256>>>(m);
}
`;
const SIZES_CUH = '#pragma once\nconstexpr int kThreads = 256;\n';

const ERROR_LINE =
  'src/tile.cu:13:3: error: scale_rows is launched with 256 threads per block, but its `__launch_bounds__(128)` allows at most 128: this launch fails with cudaErrorInvalidValue / too many resources requested. [launch-exceeds-bounds]';
const BOUND_NOTE = 'src/tile.cu:9:17: note: `__launch_bounds__(128)` of scale_rows';
const SMALL_GRID_NOTE =
  "src/tile.cu:12:16: note: tile_sum: a grid of 120 blocks leaves 12 of the H100 SXM5's 132 SMs idle (the grid, not occupancy, limits this launch). [small-grid]";
const LATENCY_NOTE =
  'src/tile.cu:12:16: note: tile_sum<256> on sm_90: 48 warps resident, about 49 needed to keep DRAM busy (estimate: L ≈ 480 cycles, 1 load in flight per warp and 8 instructions per run of the kernel, estimated from the source); 98.0% of the latency is covered. More independent loads per thread (ILP) help as much as more warps. [latency-deficit]';

/** The `$gcc` problem matcher's pattern (ms-vscode.cpptools, contributes.problemMatchers "gcc"). */
const GCC_MATCHER = /^(.*?):(\d+):(\d*):?\s+(?:fatal\s+)?(warning|error):\s+(.*)$/;

const lines = (text: string) => text.split('\n').slice(0, -1);

describe('check: text output', function () {
  this.timeout(60_000);
  let dir: string;

  before(() => {
    dir = sourceTree({ 'src/tile.cu': TILE_CU, 'src/sizes.cuh': SIZES_CUH });
    mkdirSync(path.join(dir, 'build'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the findings as path:line:col: severity: message [code], then the kernels and launches of the files named, per architecture, then a summary', async () => {
    const run = await runCli(['check', '--no-nvcc', '--arch', 'sm_80,sm_90', 'src', 'src/tile.cu'], dir);
    assert.equal(run.code, 1, 'an error finding');
    assert.equal(run.err, '');
    assert.deepEqual(lines(run.out), [
      LATENCY_NOTE,
      SMALL_GRID_NOTE,
      ERROR_LINE,
      BOUND_NOTE,
      'src/tile.cu: 2 kernels, 2 launches; 1 error, 2 notes',
      '  kernel tile_sum (line 3)',
      '    sm_80   40 registers, 1 KB static smem [annotation]',
      '    sm_90   40 registers, 1 KB static smem [annotation]',
      '  kernel scale_rows (line 9) __launch_bounds__(128)',
      '    sm_80   32 registers, 0 B static smem [annotation]',
      '    sm_90   32 registers, 0 B static smem [annotation]',
      '  launch line 12: tile_sum<256>: 256 threads, 8 warps per block, 0 B dynamic shared memory',
      '    sm_80      75%   6 blocks/SM  48/64 warps  limited by registers  [40 regs, annotation]',
      '    sm_90      75%   6 blocks/SM  48/64 warps  limited by registers  [40 regs, annotation]',
      '    120 blocks = 0.19 of a wave on the A100 SXM4 40GB (6 blocks per SM × 108 SMs = 648 per wave): 12 SMs run 2 and 96 SMs run 1, of the 6 each could hold. The grid, not occupancy, limits this launch.',
      '    120 blocks = 0.15 of a wave on the H100 SXM5 (6 blocks per SM × 132 SMs = 792 per wave): 120 SMs run 1, of the 6 each could hold; 12 SMs stay idle. The grid, not occupancy, limits this launch.',
      '  launch line 13: scale_rows: 256 threads, 8 warps per block, 0 B dynamic shared memory',
      '    sm_80        -  the launch fails: 256 threads per block is above `__launch_bounds__(128)`',
      '    sm_90        -  the launch fails: 256 threads per block is above `__launch_bounds__(128)`',
      '2 files, 2 kernels, 2 launches: 1 error, 0 warnings, 2 notes; occupancy on 1 of 2 launches',
    ]);
  });

  it('on a folder prints the findings and the summary, and says where the tables are', async () => {
    const run = await runCli(['check', '--no-nvcc', '--arch', 'sm_80,sm_90', 'src'], dir);
    assert.deepEqual(lines(run.out), [
      LATENCY_NOTE,
      SMALL_GRID_NOTE,
      ERROR_LINE,
      BOUND_NOTE,
      '(kernel and launch tables: name the files, or add --verbose)',
      '2 files, 2 kernels, 2 launches: 1 error, 0 warnings, 2 notes; occupancy on 1 of 2 launches',
    ]);
  });

  it('folds repeated notes into one line with a count, and prints a failed compile once per translation unit', async () => {
    const tree = sourceTree({
      // Three launches of a kernel the unit does not declare: the same note at each of them.
      'src/wrap.cu': `void launch(float* p) {
  elsewhere<<<1, 128>>>(p);
  elsewhere<<<2, 128>>>(p);
  elsewhere<<<4, 128>>>(p);
}
`,
      // A unit that fails and the two headers of kernels it includes: the failure once, for the unit.
      'src/unit.cu': '#include "a.cuh"\n#include "b.cuh"\nvoid run(float* p) { ka<<<1, 64>>>(p); kb<<<1, 64>>>(p); }\n',
      'src/a.cuh': '#pragma once\n__global__ void ka(float* p) { p[0] = 1; }\n',
      'src/b.cuh': '#pragma once\n__global__ void kb(float* p) { p[0] = 2; }\n',
    });
    try {
      const failing = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-nvcc', 'nvcc-fail');
      const run = await runCli(['check', '--nvcc', failing, '-q', 'src'], tree);
      const unit = path.join(tree, 'src', 'unit.cu');
      const unresolved =
        'note: Cannot tell which kernel this launch of elsewhere starts (no kernel named `elsewhere` in this translation unit); its launch bounds and resources are not checked. [launch-unresolved-kernel]';
      assert.deepEqual(lines(run.out), [
        `src/a.cuh:1:1: note: nvcc failed, so register figures are missing: ${unit}(7): error: identifier "undefined_thing" is undefined. To fix it, if the build defines it or includes its header, set \`-D NAME=VALUE\` or \`-I DIR\`, or use \`-p DIR\` with the build's \`compile_commands.json\`. [nvcc-failed] (and 2 more like it: src/a.cuh, src/b.cuh)`.replace(
          'src/a.cuh:1:1',
          'src/unit.cu:1:1',
        ),
        `src/unit.cu:7:1: note: nvcc: identifier "undefined_thing" is undefined`,
        // Another unit's failure is its own (its message names it).
        `src/wrap.cu:1:1: note: nvcc failed, so register figures are missing: ${path.join(tree, 'src', 'wrap.cu')}(7): error: identifier "undefined_thing" is undefined. To fix it, if the build defines it or includes its header, set \`-D NAME=VALUE\` or \`-I DIR\`, or use \`-p DIR\` with the build's \`compile_commands.json\`. [nvcc-failed]`,
        'src/wrap.cu:7:1: note: nvcc: identifier "undefined_thing" is undefined',
        `src/wrap.cu:2:3: ${unresolved} (and 2 more like it: src/wrap.cu:3, src/wrap.cu:4)`,
        '4 files, 2 kernels, 5 launches: 0 errors, 0 warnings, 7 notes; occupancy on 0 of 5 launches',
      ]);
      // --verbose folds nothing.
      const verbose = await runCli(['check', '--nvcc', failing, '--verbose', 'src'], tree);
      assert.equal(verbose.out.split('[launch-unresolved-kernel]').length - 1, 3, verbose.out);
      assert.equal(verbose.out.split('[nvcc-failed]').length - 1, 4, verbose.out);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it('-q prints the findings and the summary only; --verbose adds the files with no kernels or launches', async () => {
    const quiet = await runCli(['check', '--no-nvcc', '--arch', 'sm_80,sm_90', '-q', 'src'], dir);
    assert.deepEqual(lines(quiet.out), [
      LATENCY_NOTE,
      SMALL_GRID_NOTE,
      ERROR_LINE,
      BOUND_NOTE,
      '2 files, 2 kernels, 2 launches: 1 error, 0 warnings, 2 notes; occupancy on 1 of 2 launches',
    ]);
    assert.deepEqual(lines((await runCli(['check', '--no-nvcc', '--quiet', 'src'], dir)).out), [
      ERROR_LINE,
      BOUND_NOTE,
      '2 files, 2 kernels, 2 launches: 1 error, 0 warnings; occupancy on 1 of 2 launches',
    ]);

    const verbose = await runCli(['check', '--no-nvcc', '--verbose', 'src'], dir);
    assert.deepEqual(lines(verbose.out), [
      ERROR_LINE,
      BOUND_NOTE,
      'src/sizes.cuh: no kernels or launches',
      'src/tile.cu: 2 kernels, 2 launches; 1 error',
      '  kernel tile_sum (line 3)',
      '    sm_80   40 registers, 1 KB static smem [annotation]',
      '  kernel scale_rows (line 9) __launch_bounds__(128)',
      '    sm_80   32 registers, 0 B static smem [annotation]',
      '  launch line 12: tile_sum<256>: 256 threads, 8 warps per block, 0 B dynamic shared memory',
      '    sm_80      75%   6 blocks/SM  48/64 warps  limited by registers  [40 regs, annotation]',
      '    120 blocks = 0.19 of a wave on the A100 SXM4 40GB (6 blocks per SM × 108 SMs = 648 per wave): 12 SMs run 2 and 96 SMs run 1, of the 6 each could hold. The grid, not occupancy, limits this launch.',
      '    Latency on the A100 SXM4 40GB: 24–52 warps needed to keep DRAM busy (bandwidth-bound, L = 290–640 cycles as published, 1 load in flight per warp and 8 instructions per run of the kernel, estimated from the source); 48 resident, covered at the low latency, 92.3% at the high.',
      '  launch line 13: scale_rows: 256 threads, 8 warps per block, 0 B dynamic shared memory',
      '    sm_80        -  the launch fails: 256 threads per block is above `__launch_bounds__(128)`',
      '2 files, 2 kernels, 2 launches: 1 error, 0 warnings; occupancy on 1 of 2 launches',
    ]);
    assert.match(
      (await runCli(['check', '--no-nvcc', '-q', '-v', 'src'], dir)).err,
      /^cuda-occupancy: --quiet and --verbose exclude each other\n$/,
    );
  });

  it('gives a file outside the working directory by its absolute path, never as ../..', async () => {
    const run = await runCli(['check', '--no-nvcc', '-q', '../src/tile.cu'], path.join(dir, 'build'));
    const tile = path.join(dir, 'src', 'tile.cu');
    assert.deepEqual(lines(run.out), [
      `${tile}:13:3: ${ERROR_LINE.slice('src/tile.cu:13:3: '.length)}`,
      `${tile}:9:17: note: \`__launch_bounds__(128)\` of scale_rows`,
      '1 file, 2 kernels, 2 launches: 1 error, 0 warnings; occupancy on 1 of 2 launches',
    ]);
    assert.doesNotMatch(run.out, /\.\.\//);
  });

  it("is read by VS Code's $gcc problem matcher: exactly the errors and warnings, each at its file, line and column", async () => {
    const run = await runCli(['check', '--no-nvcc', '--arch', 'sm_80,sm_90', 'src'], dir);
    const matched = lines(run.out)
      .map((l) => GCC_MATCHER.exec(l))
      .filter((m) => m !== null);
    assert.deepEqual(
      matched.map((m) => m.slice(1, 5)),
      [['src/tile.cu', '13', '3', 'error']],
    );
    assert.equal(matched[0][5], ERROR_LINE.slice(ERROR_LINE.indexOf('error: ') + 'error: '.length));
    // The matcher's fileLocation is relative to the task's cwd: the path opens the file.
    assert.equal(readFileSync(path.join(dir, matched[0][1]), 'utf8'), TILE_CU);
    const sourceLine = TILE_CU.split('\n')[Number(matched[0][2]) - 1];
    assert.equal(sourceLine.slice(Number(matched[0][3]) - 1), 'scale_rows<<<64, 256>>>(m);');

    // The examples: every error and warning line matches, and nothing else does.
    const examples = await runCli(['check', '--no-nvcc', '--fail-on', 'never', 'examples'], REPO_ROOT);
    const findingLines = lines(examples.out).filter((l) => / (error|warning): .* \[[a-z-]+\]$/.test(l));
    // Both kinds the matcher reads are there.
    assert.ok(
      findingLines.some((l) => / error: /.test(l)) && findingLines.some((l) => / warning: /.test(l)),
      examples.out,
    );
    assert.deepEqual(
      lines(examples.out).filter((l) => GCC_MATCHER.test(l)),
      findingLines,
    );
  });

  it('is plain text: a template launch reads block_sum<REDUCE_THREADS>, with no markdown escapes', async () => {
    const run = await runCli(['check', '--no-nvcc', '--fail-on', 'never', 'examples/reduce.cu'], REPO_ROOT);
    assert.ok(
      lines(run.out).includes(
        '  launch line 37: block_sum<REDUCE_THREADS>: 256 threads, 8 warps per block, 0 B dynamic shared memory',
      ),
      run.out,
    );
    assert.doesNotMatch(run.out, /\\[<>*]|\*\*/);
  });

  it('shows what ptxas said per architecture: registers, static smem, stack and spills, and the source', async () => {
    const plain = sourceTree({
      'k.cu':
        '__global__ void kernel(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { kernel<<<1, 128>>>(p); }\n',
    });
    try {
      // The fake nvcc reports _Z6kernelPf with 10 + (arch % 7) registers, 1 KB smem, no stack, no spills.
      const nvcc = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-nvcc', 'nvcc-ok');
      const run = await runCli(['check', '--nvcc', nvcc, '--arch', 'sm_80,sm_90', 'k.cu'], plain);
      assert.deepEqual(lines(run.out), [
        'k.cu: 1 kernel, 1 launch',
        '  kernel kernel (line 1)',
        '    sm_80   13 registers, 1 KB static smem, 0 B stack, no spills [ptxas]',
        '    sm_90   16 registers, 1 KB static smem, 0 B stack, no spills [ptxas]',
        '  launch line 2: kernel: 128 threads, 4 warps per block, 0 B dynamic shared memory',
        '    sm_80     100%  16 blocks/SM  64/64 warps  limited by warp slots  [13 regs, ptxas]',
        '    sm_90     100%  16 blocks/SM  64/64 warps  limited by warp slots  [16 regs, ptxas]',
        '1 file, 1 kernel, 1 launch: 0 errors, 0 warnings; occupancy on 1 of 1 launch',
      ]);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    const spills = sourceTree({
      'k.cu':
        '// occupancy: regs=255 smem=49152 spill=128\n__global__ void heavy(float* p) { extern __shared__ float s[]; p[0] = s[0]; }\nvoid run(float* p) { heavy<<<1, 256, 1024>>>(p); }\n',
    });
    try {
      const run = await runCli(['check', '--no-nvcc', '--fail-on', 'never', 'k.cu'], spills);
      assert.deepEqual(lines(run.out), [
        // No latency note: the kernel reads shared memory only (it once got one for "1 load in flight per warp").
        'k.cu: 1 kernel, 1 launch',
        '  kernel heavy (line 2), extern __shared__ (dynamic shared memory set at launch)',
        '    sm_80   255 registers, 48 KB static smem, 128 B spill stores, 128 B spill loads [annotation]',
        '  launch line 3: heavy: 256 threads, 8 warps per block, 1 KB dynamic shared memory',
        '    sm_80    12.5%   1 block/SM    8/64 warps  limited by registers  [255 regs, annotation]',
        '1 file, 1 kernel, 1 launch: 0 errors, 0 warnings; occupancy on 1 of 1 launch',
      ]);
    } finally {
      rmSync(spills, { recursive: true, force: true });
    }
  });

  it('gives what got worse against a baseline as finding lines too', async () => {
    const tree = sourceTree({
      'k.cu':
        '// occupancy: regs=32\n__global__ void k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<1, 256>>>(p); }\n',
    });
    try {
      assert.equal((await runCli(['baseline', 'write', 'base.json', '--no-nvcc', 'k.cu'], tree)).code, 0);
      writeFileSync(
        path.join(tree, 'k.cu'),
        readFileSync(path.join(tree, 'k.cu'), 'utf8').replace('regs=32', 'regs=64'),
      );
      const run = await runCli(['check', '--no-nvcc', '-q', '--baseline', 'base.json', 'k.cu'], tree);
      assert.deepEqual(lines(run.out).slice(-3), [
        'against the baseline:',
        "k.cu:2:17: warning: k on sm_80 uses 64 registers per thread, 32 more than the baseline's 32. [baseline-more-registers]",
        'k.cu:3:22: warning: The launch k<<<..., 256x1x1>>> on sm_80 reaches 50% occupancy (4 blocks, 32 warps per SM, limited by registers), down from 100% occupancy (8 blocks, 64 warps per SM, limited by warps and registers) in the baseline. [baseline-lower-occupancy]',
      ]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it("sums nvcc's failures up once on stderr, with the first error of each file on --verbose", async () => {
    const failing = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-nvcc', 'nvcc-fail');
    const run = await runCli(['check', '--nvcc', failing, '-q', '--fail-on', 'never', 'examples'], REPO_ROOT);
    assert.equal(run.err, 'cuda-occupancy: nvcc failed for 5 files: first error in each with --verbose\n');
    const verbose = await runCli(
      ['check', '--nvcc', failing, '--verbose', '--fail-on', 'never', 'examples/nbody.cu', 'examples/saxpy.cu'],
      REPO_ROOT,
    );
    assert.deepEqual(lines(verbose.err), [
      'cuda-occupancy: nvcc failed for 2 files; the first error in each:',
      `cuda-occupancy: examples/nbody.cu: nvcc failed: ${path.join(REPO_ROOT, 'examples', 'nbody.cu')}(7): error: identifier "undefined_thing" is undefined`,
      `cuda-occupancy: examples/saxpy.cu: nvcc failed: ${path.join(REPO_ROOT, 'examples', 'saxpy.cu')}(7): error: identifier "undefined_thing" is undefined`,
    ]);
  });
});

describe('check: JSON and SARIF are unchanged by the text format', function () {
  this.timeout(60_000);
  const golden = (name: string) => path.join(REPO_ROOT, 'test', 'fixtures', 'cli', name);
  const CLI_BUNDLE = path.join(REPO_ROOT, 'dist', 'cli', 'cuda-occupancy.js');
  const version = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
    .version;
  const stable = (text: string) =>
    text.split(`file://${REPO_ROOT}/`).join('file:///REPO/').split(`"${version}"`).join('"VERSION"');

  for (const [format, file] of [
    ['json', 'examples.no-nvcc.json'],
    ['sarif', 'examples.no-nvcc.sarif.json'],
  ] as const) {
    it(`--format ${format} over examples/ is byte for byte test/fixtures/cli/${file}`, async () => {
      // The bundle, as it ships (its version is the package's).
      const run = spawnSync(
        process.execPath,
        [
          CLI_BUNDLE,
          'check',
          '--no-nvcc',
          '--arch',
          'sm_80,sm_90',
          '--fail-on',
          'never',
          '--format',
          format,
          'examples',
        ],
        { cwd: REPO_ROOT, encoding: 'utf8' },
      );
      assert.equal(run.status, 0, run.stderr);
      if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden(file), stable(run.stdout));
      assert.equal(stable(run.stdout), readFileSync(golden(file), 'utf8'));
    });
  }
});
