import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
import { formatBytes } from '../../server/src/core/facts/launch-checks';

const KERNELS =
  '__global__ void __launch_bounds__(128) scale_rows(float* p) { p[threadIdx.x] *= 2; }\n__global__ void plain(float* p) { extern __shared__ float buf[]; buf[0] = p[0]; }\n__global__ void with_static(float* p) { __shared__ float tile[4096]; tile[0] = p[0]; }\n';

async function findings(
  body: string,
  archs = [
    { arch: 'sm_80', maxOptInSmemBytes: 163 * 1024 },
    { arch: 'sm_90', maxOptInSmemBytes: 227 * 1024 },
  ],
) {
  const facts = await analyzeSnippet(`${KERNELS}void host(float* p, int n) {\n${body}\n}\n`, { archs });
  return facts.findings;
}

describe('launch-checks', () => {
  it('launch-exceeds-bounds: an error pointing at the __launch_bounds__', async () => {
    const [f, ...rest] = await findings('  scale_rows<<<1, 256>>>(p);');
    assert.deepEqual(rest, []);
    assert.equal(f.code, 'launch-exceeds-bounds');
    assert.equal(f.severity, 'error');
    assert.equal(
      f.message,
      'scale_rows is launched with 256 threads per block, but its `__launch_bounds__(128)` allows at most 128: this launch fails with cudaErrorInvalidValue / too many resources requested.',
    );
    assert.deepEqual(f.related, [
      {
        uri: null,
        span: { start: { line: 0, character: 16 }, end: { line: 0, character: 38 } },
        message: '`__launch_bounds__(128)` of scale_rows',
      },
    ]);
    assert.deepEqual(await findings('  scale_rows<<<1, 128>>>(p);'), []);
  });

  it('block-too-large: more than 1024 threads or a dimension over its limit', async () => {
    const fs = await findings('  plain<<<1, 2048>>>(p);\n  plain<<<1, dim3(1, 1, 128)>>>(p);');
    assert.deepEqual(
      fs.map((f) => [f.code, f.severity, f.message]),
      [
        [
          'block-too-large',
          'error',
          'plain is launched with 2048 threads per block: 2048 threads per block (at most 1024), block.x = 2048 (at most 1024). Every CUDA GPU rejects this launch with cudaErrorInvalidConfiguration.',
        ],
        [
          'block-too-large',
          'error',
          'plain is launched with a 1×1×128 block: block.z = 128 (at most 64). Every CUDA GPU rejects this launch with cudaErrorInvalidConfiguration.',
        ],
      ],
    );
  });

  it('block-not-warp-multiple: says how many lanes idle', async () => {
    const fs = await findings(
      '  plain<<<1, 100>>>(p);\n  plain<<<1, dim3(10, 10)>>>(p);\n  plain<<<1, 1>>>(p);\n  plain<<<1, dim3(16, 16)>>>(p);',
    );
    assert.deepEqual(
      fs.map((f) => [f.code, f.severity, f.span.start.line]),
      [
        ['block-not-warp-multiple', 'warning', 4],
        ['block-not-warp-multiple', 'warning', 5],
        ['block-not-warp-multiple', 'info', 6],
      ],
    );
    assert.equal(
      fs[0].message,
      'plain is launched with 100 threads per block (4 warps): the last warp runs with 4 of 32 lanes, 28 idle. A multiple of 32 (96 or 128) uses every lane.',
    );
    assert.equal(
      fs[2].message,
      'plain is launched with 1 thread per block (1 warp): the last warp runs with 1 of 32 lanes, 31 idle. A multiple of 32 (32) uses every lane.',
    );
  });

  it('block-not-warp-multiple: one finding for a macro use that launches at several such sizes, listing each', async () => {
    const fs = await findings(
      [
        '#define BY_CHANNELS(c) if (c == 280) plain<<<1, 140>>>(p); else if (c == 208) plain<<<1, 104>>>(p); else plain<<<1, 128>>>(p);',
        '  BY_CHANNELS(n);',
        '  plain<<<1, 100>>>(p);',
      ].join('\n'),
    );
    assert.deepEqual(
      fs.map((f) => [f.code, f.severity, f.span.start.line, f.message]),
      [
        [
          'block-not-warp-multiple',
          'warning',
          5,
          '2 launches here have blocks that are not a multiple of 32 threads, so the last warp of each runs with lanes idle: plain with 140 (20 idle), plain with 104 (24 idle). A multiple of 32 uses every lane.',
        ],
        [
          'block-not-warp-multiple',
          'warning',
          6,
          'plain is launched with 100 threads per block (4 warps): the last warp runs with 4 of 32 lanes, 28 idle. A multiple of 32 (96 or 128) uses every lane.',
        ],
      ],
    );
  });

  it('dynamic-smem-needs-opt-in: above 48 KB without cudaFuncSetAttribute', async () => {
    const [f] = await findings('  plain<<<1, 256, 64 * 1024>>>(p);');
    assert.equal(f.code, 'dynamic-smem-needs-opt-in');
    assert.equal(
      f.message,
      'plain asks for 64 KB of dynamic shared memory, above the 48 KB a block gets by default, and no `cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536)` is in view: this launch fails with cudaErrorInvalidValue.',
    );
    assert.deepEqual(
      await findings(
        '  cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n  plain<<<1, 256, 64 * 1024>>>(p);',
      ),
      [],
    );
    const [low] = await findings(
      '  cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, 50000);\n  plain<<<1, 256, 64 * 1024>>>(p);',
    );
    assert.equal(
      low.message,
      'plain asks for 64 KB of dynamic shared memory, but cudaFuncSetAttribute raises its limit to 48.8 KB only: this launch fails with cudaErrorInvalidValue.',
    );
    assert.equal(low.related.length, 1);
  });

  it('counts static shared memory with the dynamic amount', async () => {
    const [f] = await findings('  with_static<<<1, 256, 40 * 1024>>>(p);');
    assert.equal(f.code, 'dynamic-smem-needs-opt-in');
    assert.match(f.message, /asks for 40 KB of dynamic shared memory plus 16 KB static/);
  });

  it('dynamic-smem-over-limit: above the opt-in maximum of a target arch', async () => {
    const fs = await findings(
      '  cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);\n  plain<<<1, 256, 200 * 1024>>>(p);',
    );
    assert.deepEqual(
      fs.map((f) => [f.code, f.message]),
      [
        [
          'dynamic-smem-over-limit',
          'plain asks for 200 KB of dynamic shared memory, more than a block can have on sm_80 (163 KB) even with the opt-in: this launch fails there.',
        ],
      ],
    );
  });

  it('launch-unresolved-kernel is information; a launch written in a macro is read at its use', async () => {
    const fs = await findings('  elsewhere<<<1, 64>>>(p);\n#define GO(k) k<<<1, 64>>>(p)\n  GO(plain);');
    assert.deepEqual(
      fs.map((f) => [f.code, f.severity]),
      [['launch-unresolved-kernel', 'info']],
    );
    assert.equal(
      fs[0].message,
      'Cannot tell which kernel this launch of elsewhere starts (no kernel named `elsewhere` in this translation unit); its launch bounds and resources are not checked.',
    );
  });

  it('says nothing about values it cannot resolve', async () => {
    assert.deepEqual(await findings('  int t = rand();\n  plain<<<1, t, t * 1024>>>(p);'), []);
  });

  it('formats bytes', () => {
    assert.deepEqual(
      [formatBytes(512), formatBytes(1024), formatBytes(49152), formatBytes(1536)],
      ['512 B', '1 KB', '48 KB', '1.5 KB'],
    );
  });
});
