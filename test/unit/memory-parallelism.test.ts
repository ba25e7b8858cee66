import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';

async function pOf(kernel: string, prelude = '') {
  const facts = await analyzeSnippet(`${prelude}\n${kernel}\n`);
  assert.equal(facts.memoryParallelism.length, 1);
  return facts.memoryParallelism[0];
}

describe('memory-parallelism', () => {
  it('counts the independent loads before the first use in straight-line code', async () => {
    const m = await pOf(
      '__global__ void saxpy(int n, float a, const float* x, float* y) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}',
    );
    assert.equal(m.p, 2);
    assert.deepEqual(
      m.loads.map((l) => [l.text, l.multiplicity]),
      [
        ['x[i]', 1],
        ['y[i]', 1],
      ],
    );
    assert.equal(m.stop?.span.start.line, 3);
    assert.match(m.reasoning.join(' '), /p = 2: 2 independent global loads/);
  });

  it('issues loads of one block before uses in it', async () => {
    const m = await pOf(
      '__global__ void add3(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c, float* __restrict__ out) {\n  int i = threadIdx.x;\n  float s = a[i] + b[i];\n  s += c[i];\n  out[i] = s;\n}',
    );
    assert.equal(m.p, 3);
    assert.equal(m.stop, null);
  });

  it('multiplies loads in an unrolled constant-trip loop', async () => {
    const m = await pOf(
      '#define K 4\n__global__ void sum(const float* __restrict__ a, float* __restrict__ out) {\n  float s = 0;\n#pragma unroll\n  for (int j = 0; j < K; ++j) s += a[threadIdx.x + j * 256];\n  out[threadIdx.x] = s;\n}',
    );
    assert.equal(m.p, 4);
    assert.deepEqual(
      m.loads.map((l) => l.multiplicity),
      [4],
    );
  });

  it('honours an unroll factor and counts one iteration of a runtime loop', async () => {
    const unrolled = await pOf(
      '__global__ void k(const float* __restrict__ a, float* __restrict__ out, int n) {\n  float s = 0;\n  #pragma unroll 2\n  for (int j = 0; j < n; j++) s += a[j];\n  out[0] = s;\n}',
    );
    assert.equal(unrolled.p, 2);
    const runtime = await pOf(
      '__global__ void k(const float* a, float* out, int n) {\n  float s = 0;\n  for (int j = threadIdx.x; j < n; j += blockDim.x) s += a[j] * a[j + n];\n  out[threadIdx.x] = s;\n}',
    );
    assert.equal(runtime.p, 2);
    assert.match(runtime.stop?.reason ?? '', /end of the first iteration/);
  });

  it('stops at a load whose address needs a loaded value (pointer chasing)', async () => {
    const m = await pOf(
      '__global__ void chase(const int* next, int* out) {\n  int j = next[threadIdx.x];\n  int k = next[j];\n  out[threadIdx.x] = k;\n}',
    );
    assert.equal(m.p, 1);
    assert.equal(m.stop?.reason, 'the load `next[j]` needs a loaded value for its address');
  });

  it('counts the two tile loads of a tiled GEMM before the barrier', async () => {
    const m = await pOf(
      [
        '#define TILE 16',
        '__global__ void gemm(const float* A, const float* B, float* C, int n) {',
        '  __shared__ float As[TILE][TILE], Bs[TILE][TILE];',
        '  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;',
        '  float acc = 0;',
        '  for (int t = 0; t < n / TILE; ++t) {',
        '    As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];',
        '    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];',
        '    __syncthreads();',
        '    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];',
        '    __syncthreads();',
        '  }',
        '  C[row * n + col] = acc;',
        '}',
      ].join('\n'),
    );
    assert.equal(m.p, 2);
    assert.match(m.stop?.reason ?? '', /__syncthreads/);
  });

  it('skips an early exit and follows the code after it', async () => {
    const m = await pOf(
      '__global__ void k(const float4* __restrict__ in, float* __restrict__ out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n  float4 v = __ldg(&in[i]);\n  out[i] = v.x + v.y + v.z + v.w;\n}',
    );
    assert.equal(m.p, 1);
    assert.deepEqual(
      m.loads.map((l) => l.text),
      ['__ldg(&in[i])'],
    );
  });

  it('says p = 0 when no global load is visible', async () => {
    const m = await pOf('__global__ void fill(float* out) { out[threadIdx.x] = 1.0f; }');
    assert.equal(m.p, 0);
    assert.match(m.reasoning[m.reasoning.length - 1], /p = 0/);
  });
});
