import * as assert from 'node:assert/strict';
import { loadFileAloneParser, readAlone } from '../support/file-alone';
import { evaluateInteger } from '../../server/src/core/text/const-eval';
import { analyzeSnippet } from '../support/analyze-snippet';

/** The block and smem of the one launch in `body`, written inside `void host(int n, int threads)`. */
function launchIn(prelude: string, body: string) {
  const launches = readAlone(`${prelude}\nvoid host(int n, int threads, float* p) {\n${body}\n}\n`).launches;
  assert.equal(launches.length, 1);
  return launches[0];
}
const blockOf = (prelude: string, body: string) => launchIn(prelude, body).block.value;

describe('constant resolution', () => {
  before(loadFileAloneParser);

  it('evaluates integer arithmetic, casts and sizeof of built-in types', () => {
    assert.equal(evaluateInteger('(1 << 8) + 2 * 3 - 6'), 256);
    assert.equal(evaluateInteger('sizeof(float4) * 32'), 512);
    assert.equal(evaluateInteger('(int)sizeof(double) * static_cast<int>(4)'), 32);
    assert.equal(evaluateInteger('1024u / 4'), 256);
    assert.equal(evaluateInteger('2.5f * 100'), null);
    assert.equal(evaluateInteger('sizeof(MyStruct)'), null);
    assert.equal(
      evaluateInteger('n / 0 + 1', () => 4),
      null,
    );
  });

  it('resolves literals and dim3 forms', () => {
    assert.deepEqual(blockOf('', 'k<<<1, 256>>>(p);'), { x: 256, y: 1, z: 1 });
    assert.deepEqual(blockOf('', 'dim3 b(16, 16);\nk<<<1, b>>>(p);'), { x: 16, y: 16, z: 1 });
    assert.deepEqual(blockOf('', 'dim3 b = {8, 8, 4};\nk<<<1, b>>>(p);'), { x: 8, y: 8, z: 4 });
    assert.deepEqual(blockOf('', 'dim3 b{32, 4};\nk<<<1, b>>>(p);'), { x: 32, y: 4, z: 1 });
    assert.deepEqual(blockOf('', 'const dim3 b = dim3(64, 2);\nk<<<1, b>>>(p);'), { x: 64, y: 2, z: 1 });
    assert.deepEqual(blockOf('', 'k<<<1, dim3(128)>>>(p);'), { x: 128, y: 1, z: 1 });
  });

  it('resolves const, constexpr, static const, #define and enumerators', () => {
    assert.deepEqual(blockOf('#define BLOCK (2 * 64)', 'k<<<1, BLOCK>>>(p);'), { x: 128, y: 1, z: 1 });
    assert.deepEqual(blockOf('static const int kThreads = 512;', 'k<<<1, kThreads>>>(p);'), { x: 512, y: 1, z: 1 });
    assert.deepEqual(blockOf('constexpr unsigned TX = 32, TY = 8;', 'k<<<1, dim3(TX, TY)>>>(p);'), {
      x: 32,
      y: 8,
      z: 1,
    });
    assert.deepEqual(blockOf('enum { WARPS = 4, THREADS = WARPS * 32 };', 'k<<<1, THREADS>>>(p);'), {
      x: 128,
      y: 1,
      z: 1,
    });
    assert.deepEqual(blockOf('enum class Size : int { Small = 64, Large };', 'k<<<1, (int)Size::Large>>>(p);'), {
      x: 65,
      y: 1,
      z: 1,
    });
    assert.deepEqual(blockOf('namespace cfg { constexpr int bs = 96; }', 'k<<<1, bs>>>(p);'), { x: 96, y: 1, z: 1 });
  });

  it('resolves `const` written after the type, at file scope and in the function', () => {
    assert.deepEqual(blockOf('int const kThreads = 192;', 'k<<<1, kThreads>>>(p);'), { x: 192, y: 1, z: 1 });
    assert.deepEqual(blockOf('static unsigned long\tconst  kWide = 320;', 'k<<<1, kWide>>>(p);'), {
      x: 320,
      y: 1,
      z: 1,
    });
    assert.deepEqual(blockOf('', 'size_t const bs = 224;\nk<<<1, bs>>>(p);'), { x: 224, y: 1, z: 1 });
    assert.deepEqual(blockOf('', 'const int a = 1; int const bs = 2 * 80;\nk<<<1, bs>>>(p);'), { x: 160, y: 1, z: 1 });
  });

  it('resolves local constants and unreassigned locals, not reassigned ones', () => {
    assert.deepEqual(blockOf('', 'const int bs = 256;\nk<<<(n + bs - 1) / bs, bs>>>(p);'), { x: 256, y: 1, z: 1 });
    assert.deepEqual(blockOf('', 'int bs = 128;\nk<<<1, bs>>>(p);'), { x: 128, y: 1, z: 1 });
    const reassigned = launchIn('const int bs = 64;', 'int bs = 128;\nif (n > 1000) bs = 256;\nk<<<1, bs>>>(p);');
    assert.equal(reassigned.block.value, null);
    // Assigned again on every path: the value the launch sees.
    assert.deepEqual(blockOf('', 'int bs = 128;\nbs *= 2;\nk<<<1, bs>>>(p);'), { x: 256, y: 1, z: 1 });
    assert.deepEqual(blockOf('', 'dim3 b(128);\nb.x = 64;\nk<<<1, b>>>(p);'), { x: 64, y: 1, z: 1 });
  });

  it('does not resolve runtime values, and says why', () => {
    const param = launchIn('', 'k<<<1, threads>>>(p);');
    assert.equal(param.block.value, null);
    assert.equal(param.block.note, '`threads` is a parameter');
    const grid = launchIn('', 'k<<<(n + 255) / 256, 256>>>(p);');
    assert.equal(grid.grid.value, null);
    assert.deepEqual(grid.block.value, { x: 256, y: 1, z: 1 });
    const device = launchIn('', 'k<<<1, blockDim.x>>>(p);');
    assert.equal(device.block.value, null);
    assert.match(device.block.note ?? '', /`blockDim` is known only at run time/);
    assert.equal(blockOf('', 'int t = compute();\nk<<<1, t * 2>>>(p);'), null);
    assert.equal(blockOf('', 'for (int t = 32; t <= 1024; t *= 2) k<<<1, t>>>(p);'), null);
  });

  it('says where a resolved value came from', () => {
    const l = launchIn('#define BLOCK 256', 'k<<<1, BLOCK, BLOCK * sizeof(float)>>>(p);');
    assert.equal(l.block.note, 'BLOCK = 256 (#define, line 1)');
    assert.equal(l.dynamicSmem.value, 1024);
  });

  it("resolves template arguments at the launch against the kernel's launch bounds", async () => {
    const facts = await analyzeSnippet(
      [
        'template <typename T, int BS>',
        '__global__ void __launch_bounds__(BS) tile(const T* in, T* out) {}',
        'void run(float* a, float* b) {',
        '  constexpr int kBS = 512;',
        '  tile<float, 256><<<1, 256>>>(a, b);',
        '  tile<float, kBS><<<1, 512>>>(a, b);',
        '}',
      ].join('\n'),
    );
    assert.deepEqual(
      facts.launchTargets.map((t) => t.launchBounds?.maxThreadsPerBlock ?? null),
      [256, 512],
    );
    assert.deepEqual(
      facts.launches.map((l) => l.templateArgValues),
      [
        [null, 256],
        [null, 512],
      ],
    );
  });
});
