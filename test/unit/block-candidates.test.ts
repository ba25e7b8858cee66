/**
 * Block sizes that are one of a few the source fixes: a ternary on a run-time condition, a local
 * an if-chain or a `switch` changes before the launch. The launch lists them, and the hover and
 * the CLI show a row per candidate with its occupancy.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { loadFileAloneParser, readAlone } from '../support/file-alone';
import { analyzeSnippet } from '../support/analyze-snippet';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import { launchHoverMarkdown } from '../../server/src/core/report/launch-report';
import { checkJsonOf, sourceTree } from '../support/cli-run';

/** Each launch's candidate block sizes (threads), or null. */
const candidates = (text: string) =>
  readAlone(text).launches.map(
    (l) => l.candidates?.map((c) => (c.y === 1 && c.z === 1 ? `${c.x}` : `${c.x}x${c.y}x${c.z}`)) ?? null,
  );

describe('block size candidates', () => {
  before(loadFileAloneParser);

  it('reads a local an if-chain shifts, and a dim3 of it', () => {
    const text = [
      '#define BASE_THREADS 256',
      'void host(float* p, int width) {',
      '  int threads = BASE_THREADS;',
      '  if (width > 4096 && width <= 8192)',
      '    threads <<= 1;',
      '  else if (width > 8192 && width <= 16384)',
      '    threads <<= 2;',
      '  else if (width > 16384)',
      '    throw std::runtime_error("too wide");',
      '  dim3 block(threads);',
      '  norm_rows<<<width, block>>>(p);',
      '  norm_cols<<<width, dim3(threads / 2, 2)>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(candidates(text), [
      ['256', '512', '1024'],
      ['128x2x1', '256x2x1', '512x2x1'],
    ]);
  });

  it('reads a ternary on a template parameter, a switch over sizes, and a ternary at the launch', () => {
    const text = [
      'static const int kSmallBlock = 256;',
      'template <int K>',
      'void pick(float* p, int rows, int mode) {',
      '  const int per_block = (K < 16) ? (K < 8) ? kSmallBlock : 128 : 64;',
      '  topk_pass<K, per_block><<<rows, per_block>>>(p);',
      '  int t = 64;',
      '  switch (mode) {',
      '    case 0: t = 128; break;',
      '    case 1:',
      '    case 2: t = 256; break;',
      '    default: break;',
      '  }',
      '  mode_pass<<<rows, t>>>(p);',
      '  wide_pass<<<rows, rows > 1000 ? 512 : t>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(candidates(text), [
      ['64', '128', '256'],
      ['64', '128', '256'],
      ['64', '128', '256', '512'],
    ]);
  });

  it("reads each arm of an `#if` the unit cannot decide as the build's choice, not the view's arm alone", () => {
    const text = [
      '__global__ void k(float* p) {}',
      'void host(float* p) {',
      '#ifdef USE_ROCM',
      '  const int threads = 64;',
      '#elif CUDART_VERSION >= 11000',
      '  const int threads = 256;',
      '#else',
      '  const int threads = 128;',
      '#endif',
      '  k<<<1, threads>>>(p);',
      '  int wide = 128;',
      '#ifdef WIDE_BLOCKS',
      '  wide = 512;',
      '#ifdef HUGE_BLOCKS',
      '  wide *= 2;',
      '#endif',
      '#endif',
      '  k<<<1, wide>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(candidates(text), [
      ['64', '128', '256'],
      ['128', '512', '1024'],
    ]);
  });

  it("reads a constant declared in each arm of an undecided `#if` as one of their values, the view's where another arm's cannot be read", () => {
    const text = [
      '#ifdef USE_ROCM',
      'constexpr int kThreads = 64;',
      'static const int kRows = 4;',
      '#else',
      'constexpr int kThreads = 128;',
      'static const int kRows = 8;',
      'constexpr int kOnlyHere = 256;',
      '#endif',
      '#ifdef USE_ROCM',
      'constexpr int kCalled = wavefront_size();',
      '#else',
      'constexpr int kCalled = 512;',
      '#endif',
      '__global__ void k(float* p) {}',
      'void host(float* p) {',
      '  k<<<1, kThreads>>>(p);',
      '  k<<<1, dim3(32, kRows)>>>(p);',
      '  k<<<1, kOnlyHere>>>(p);',
      '  k<<<1, kCalled>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(candidates(text), [['64', '128'], ['32x4x1', '32x8x1'], null, null]);
    assert.deepEqual(
      readAlone(text)
        .launches.slice(2)
        .map((l) => l.block.value?.x ?? null),
      [256, 512],
    );
  });

  it('keeps one value where the unit decides the `#if`, and reports only the launches of the build the view reads', () => {
    const text = [
      '#define USE_WIDE 1',
      '__global__ void k(float* p) {}',
      'void host(float* p) {',
      '#if USE_WIDE',
      '  const int threads = 512;',
      '#else',
      '  const int threads = 128;',
      '#endif',
      '  k<<<1, threads>>>(p);',
      '#ifdef USE_ROCM',
      '  k<<<1, 64>>>(p);',
      '#else',
      '  k<<<1, 32>>>(p);',
      '#endif',
      '}',
    ].join('\n');
    const launches = readAlone(text).launches;
    assert.deepEqual(
      launches.map((l) => [l.span.start.line + 1, l.block.value?.x ?? null, l.candidates ?? null]),
      [
        [9, 512, null],
        [13, 32, null],
      ],
    );
  });

  it("reads the view's arm where the arms split a statement between them (their text together does not parse)", () => {
    const text = [
      '__global__ void k(float* p) {}',
      'void host(float* p, bool a, bool b) {',
      '  int threads = 128;',
      '#ifdef USE_A',
      '  if (a) {',
      '#else',
      '  if (b) {',
      '#endif',
      '    threads = 256;',
      '  }',
      '  k<<<1, threads>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(candidates(text), [['128', '256']]);
  });

  it("reads the view's arm where an arm is the body of an `if` without braces (with every arm, the next would leave the `if`)", () => {
    const text = [
      '__global__ void k(float* p) {}',
      'void host(float* p, bool big) {',
      '  int threads = 64;',
      '  if (big)',
      '#ifdef USE_A',
      '    threads = 512;',
      '#else',
      '    threads *= 2;',
      '#endif',
      '  k<<<1, threads>>>(p);',
      '}',
    ].join('\n');
    // The view's build (USE_A undefined): 64 or 128. Read with both arms as statements, 1024 would appear.
    assert.deepEqual(candidates(text), [['64', '128']]);
  });

  it('reads a launch in a host template of a .cu over the calls the unit makes, where every use of its name is one', async () => {
    const text = [
      '__global__ void k(float* p) {}',
      'template <int BLOCK>',
      'void launch(float* p, int n) { k<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(p); }',
      'void run(float* p, int n) {',
      '  launch<128>(p, n);',
      '  if (n > 4096) launch<256>(p, n);',
      '}',
      'template <int B>',
      'void once(float* p) { k<<<1, B>>>(p); }',
      'void run_once(float* p) { once<96>(p); }',
      '// An explicit instantiation is an instance no call shows:',
      'template <int B>',
      'void explicit_too(float* p) { k<<<1, B>>>(p); }',
      'template void explicit_too<64>(float*);',
      'void run_explicit(float* p) { explicit_too<32>(p); }',
    ].join('\n');
    const template = (line: number) => readAlone(text).launches.find((l) => l.span.start.line === line - 1)!;
    assert.deepEqual(
      template(3).candidates?.map((c) => c.x),
      [128, 256],
    );
    assert.equal(template(3).blockFromInstances, 2);
    assert.equal(template(9).block.value?.x, 96);
    assert.equal(template(13).block.value, null);
    assert.equal(template(13).candidates ?? null, null);
    const report = buildDocumentReport({
      facts: await analyzeSnippet(text),
      archs: ['sm_80'],
      figuresFor: new FiguresRegistry().figuresFor,
    });
    const firstLines = report.analyses.map((a) => launchHoverMarkdown(a).split('\n')[0]);
    assert.ok(
      firstLines.includes(
        '**k**: block size `BLOCK` one of 128 or 256 threads over the 2 calls of `launch` in this unit, 0 B dynamic shared memory',
      ),
      firstLines.join('\n'),
    );
    assert.ok(
      firstLines.includes(
        '**k**: 96 threads (from the call of `once` in this unit), 3 warps per block, 0 B dynamic shared memory',
      ),
      firstLines.join('\n'),
    );
    // A header's template may be instantiated by any unit that includes it: left to each call.
    assert.equal(
      readAlone(text, '/kernels.cuh').launches.find((l) => l.span.start.line === 2)!.candidates ?? null,
      null,
    );
  });

  it('reads the value a switch case or an equality test fixes for the local it compares', () => {
    // PyTorch3D's farthest point sampling: `threads` from a run-time size, then one launch per
    // `case` of `switch (threads)`, each with `threads` as its block.
    const text = [
      '__global__ void k(float* p) {}',
      'void host(float* p, int n) {',
      '  const size_t threads = n > 1024 ? 1024 : 2 * n;',
      '  switch (threads) {',
      '    case 1024:',
      '      k<<<1, threads>>>(p);',
      '      break;',
      '    case 4:',
      '    case 2:',
      '      k<<<threads, threads>>>(p);',
      '      break;',
      '    default:',
      '      k<<<1, threads>>>(p);',
      '  }',
      '  switch (threads / 2) {',
      '    case 256:',
      '      k<<<1, threads>>>(p);',
      '  }',
      '  int t = n;',
      '  if (t == 64) k<<<1, t>>>(p);',
      '  if (t != 128) k<<<1, t>>>(p);',
      '  else k<<<1, t>>>(p);',
      '}',
    ].join('\n');
    const launches = readAlone(text).launches;
    assert.deepEqual(
      launches.map((l) => l.block.value?.x ?? null),
      [1024, null, null, null, 64, null, 128],
    );
    // `case 4: case 2:` share the arm; the default, a switch on `threads / 2` and `!=`'s then-arm fix nothing.
    assert.deepEqual(candidates(text), [null, ['2', '4'], null, null, null, null, null]);
  });

  it('takes a macro a build may leave undefined as defined where its name would then name nothing', () => {
    // darknet's `#define BLOCK 512` sits under `#ifdef GPU`, which only the builds that compile its
    // .cu files set: a build without it would read `BLOCK` as a name nothing declares, and not compile.
    const text = [
      '#ifdef GPU',
      '#define BLOCK 512',
      '#define SMALL_BLOCK 128',
      '#endif',
      '#ifndef GPU',
      'static const int SMALL_BLOCK = 64;',
      '#endif',
      '__global__ void k(float* p) {}',
      'void host(float* p, int n) {',
      '  k<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(p);',
      '  const int block_size = BLOCK;',
      '  k<<<n / block_size + 1, dim3(block_size / 16, 16)>>>(p);',
      '  k<<<n, SMALL_BLOCK>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(
      readAlone(text).launches.map((l) => l.block.value?.x ?? null),
      [512, 32, null],
    );
    // The build without GPU declares SMALL_BLOCK itself: one of the two.
    assert.deepEqual(candidates(text), [null, null, ['64', '128']]);
    // A macro that renames a runtime function (ggml's HIP build) names what the toolkit's headers,
    // which the unit cannot read, declare: the CUDA build's launch stays, with its block.
    const renamed = [
      '#ifdef GGML_USE_HIP',
      '#define cudaLaunchCooperativeKernel hipLaunchCooperativeKernel',
      '#endif',
      '__global__ void k(float* p) {}',
      'void host(float* p, void** args) {',
      '  cudaLaunchCooperativeKernel((void*)k, dim3(8), dim3(32 * 8), args, 0, 0);',
      '}',
    ].join('\n');
    assert.deepEqual(
      readAlone(renamed).launches.map((l) => [l.kernelName, l.block.value?.x ?? null]),
      [['k', 256]],
    );
  });

  it('gives no set when a loop, a call or an unknown value can change the local, or the set is one value', () => {
    const text = [
      'void host(float* p, int n) {',
      '  int a = 32;',
      '  for (int i = 0; i < n; ++i) a *= 2;',
      '  loop_pass<<<n, a>>>(p);',
      '  int b = 64;',
      '  tune(&b);',
      '  tuned_pass<<<n, b>>>(p);',
      '  int c = 64;',
      '  if (n > 10) c = n;',
      '  runtime_pass<<<n, c>>>(p);',
      '  one_pass<<<n, n > 3 ? 128 : 128>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(candidates(text), [null, null, null, null]);
  });

  it('shows a row per candidate in the hover, with its occupancy', async () => {
    const text = [
      '// occupancy: regs=64',
      '__global__ void rows_kernel(float* p) { p[threadIdx.x] = 0; }',
      'void host(float* p, bool wide) {',
      '  int threads = 256;',
      '  if (wide) threads = 1024;',
      '  rows_kernel<<<1, threads>>>(p);',
      '}',
    ].join('\n');
    const facts = await analyzeSnippet(text);
    const report = buildDocumentReport({
      facts,
      archs: ['sm_80', 'sm_90'],
      figuresFor: new FiguresRegistry().figuresFor,
    });
    const markdown = launchHoverMarkdown(report.analyses[0]);
    assert.equal(
      markdown.split('\n\n').slice(0, 3).join('\n\n'),
      [
        '**rows_kernel**: block size `threads` one of 256 or 1024 threads, whichever a run-time condition or the build picks, 0 B dynamic shared memory',
        '',
        'Figures: 64 registers, 0 B static smem (annotation, sm_80 and sm_90).',
        '',
        '| block | sm_80 | sm_90 |',
        '|---|---|---|',
        '| 256 | **50%** (4 blocks/SM, registers) | **50%** (4 blocks/SM, registers) |',
        '| 1024 | **50%** (1 block/SM, registers) | **50%** (1 block/SM, registers) |',
      ].join('\n'),
    );
  });

  it('lists the candidates in the JSON of `check`, each with its occupancy per architecture', async () => {
    const dir = sourceTree({
      'tiles.cu': [
        '// occupancy: regs=32',
        '__global__ void tile(float* p) { p[threadIdx.x] = 1; }',
        'void run(float* p, int n) {',
        '  tile<<<n, n > 64 ? 512 : 128>>>(p);',
        '}',
        '',
      ].join('\n'),
    });
    try {
      const json = await checkJsonOf(['--arch', 'sm_80', '--no-nvcc', 'tiles.cu'], dir);
      const [launch] = json.files[0].launches;
      assert.equal(launch.block, null);
      const rows = (
        launch.blockCandidates as Array<{
          x: number;
          y: number;
          z: number;
          threadsPerBlock: number;
          occupancy: Record<string, { occupancy: number; activeBlocksPerMultiprocessor: number } | null>;
        }>
      ).map((c) => [
        { x: c.x, y: c.y, z: c.z },
        c.threadsPerBlock,
        c.occupancy.sm_80?.occupancy,
        c.occupancy.sm_80?.activeBlocksPerMultiprocessor,
      ]);
      assert.deepEqual(rows, [
        [{ x: 128, y: 1, z: 1 }, 128, 1, 16],
        [{ x: 512, y: 1, z: 1 }, 512, 1, 4],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
