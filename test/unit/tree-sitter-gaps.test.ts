/**
 * Constructs tree-sitter-cuda does not parse as written (it leaves ERROR nodes). Each test checks
 * that the gap is still there in the grammar (so the test keeps meaning something), that the
 * unit's view reads the construct whole (no parse error left), and that kernels, launches and the
 * p estimate come out whole.
 */
import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
import { parseCuda } from '../support/grammar';

async function analyze(text: string, expectGap = true) {
  const raw = await parseCuda(text);
  const gap = raw.rootNode.hasError;
  raw.delete();
  if (expectGap) assert.ok(gap, 'tree-sitter-cuda parses this now: the gap is gone');
  const facts = await analyzeSnippet(text);
  assert.deepEqual(facts.parseErrors, [], 'the view leaves a parse error');
  return facts;
}
const AFTER =
  '\n__global__ void __launch_bounds__(64) after(const float* __restrict__ a, float* __restrict__ b) { b[threadIdx.x] = a[threadIdx.x]; }\nvoid go(float* a, float* b) { after<<<1, 128>>>(a, b); }\n';

function assertAfterIsWhole(facts: Awaited<ReturnType<typeof analyze>>) {
  const after = facts.kernels.find((k) => k.name === 'after');
  assert.equal(after?.launchBounds?.maxThreadsPerBlock, 64);
  const launch = facts.launches.find((l) => l.kernelName === 'after');
  assert.deepEqual(launch?.block.value, { x: 128, y: 1, z: 1 });
  assert.ok(
    facts.findings.some((f) => f.code === 'launch-exceeds-bounds' && f.span.start.line === launch!.span.start.line),
  );
  assert.equal(facts.memoryParallelism.find((m) => m.kernel === 'after')?.p, 1);
}

describe('tree-sitter-cuda gaps', () => {
  it('_Pragma("unroll") before a loop', async () => {
    const facts = await analyze(
      '__global__ void k(const float* __restrict__ in, float* __restrict__ out) {\n  float s = 0;\n  _Pragma("unroll")\n  for (int j = 0; j < 8; ++j) s += in[threadIdx.x + j * 32];\n  out[threadIdx.x] = s;\n}' +
        AFTER,
    );
    assert.equal(facts.memoryParallelism[0].p, 8);
    assertAfterIsWhole(facts);
  });

  it('a macro that stands for _Pragma("unroll") before a loop (tiny-cuda-nn\'s TCNN_PRAGMA_UNROLL)', async () => {
    const facts = await analyze(
      '#define UNROLL _Pragma("unroll")\n__global__ void k(const int4* __restrict__ in, short* __restrict__ out) {\n  const unsigned o = 8 * threadIdx.x;\n  UNROLL\n  for (int j = 0; j < 2; ++j) {\n    *(int4*)&out[o + j * 256] = in[threadIdx.x + j * 32];\n  }\n}\nvoid run(const int4* a, short* b) { k<<<1, 32>>>(a, b); }' +
        AFTER,
    );
    assert.equal(facts.kernels[0].name, 'k');
    // Each lane stores 16 bytes, 16 bytes after its neighbour: coalesced, read through the cast.
    assert.deepEqual(
      facts.memory.filter((r) => r.rule === 'uncoalesced-access'),
      [],
    );
    assertAfterIsWhole(facts);
  });

  it('a macro call without a semicolon before a loop body', async () => {
    const facts = await analyze(
      '#define KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)\n__global__ void k(const float* in, float* out, int n) {\n  KERNEL_LOOP(i, n) {\n    out[i] = in[i] * 2.0f;\n  }\n}\nvoid run(float* a, float* b, int n) { k<<<(n + 255) / 256, 256>>>(a, b, n); }' +
        AFTER,
      false,
    );
    assert.equal(facts.kernels[0].name, 'k');
    assert.deepEqual(facts.launches[0].block.value, { x: 256, y: 1, z: 1 });
    assert.equal(facts.memoryParallelism[0].p, 1);
    assertAfterIsWhole(facts);
  });

  it('#if splitting a parameter list', async () => {
    const facts = await analyze(
      '__global__ void __launch_bounds__(256) k(float* a,\n#if defined(USE_B)\n    float* b,\n#endif\n    int n) {\n  a[threadIdx.x] = n;\n}\nvoid run(float* a) { k<<<1, 256>>>(a, 4); }' +
        AFTER,
    );
    // `USE_B` is undecided and its group has one arm: the view keeps it (it parses either way).
    assert.deepEqual(facts.kernels[0].parameters, ['float* a', 'float* b', 'int n']);
    assert.equal(facts.kernels[0].launchBounds?.maxThreadsPerBlock, 256);
    assert.deepEqual(facts.launches[0].block.value, { x: 256, y: 1, z: 1 });
    assertAfterIsWhole(facts);
  });

  it('#if/#else splitting an if/else in a body', async () => {
    const facts = await analyze(
      '__global__ void k(const float* in, float* out, int n) {\n  int i = threadIdx.x;\n#if USE_FAST\n  if (i < n) {\n#else\n  if (i < n && n > 0) {\n#endif\n    out[i] = in[i];\n  }\n}\nvoid run(float* a, float* b) { k<<<1, 64>>>(a, b, 4); }' +
        AFTER,
    );
    assert.deepEqual(facts.launches[0].block.value, { x: 64, y: 1, z: 1 });
    assertAfterIsWhole(facts);
  });

  it('__align__(N) on a struct and on shared memory', async () => {
    const facts = await analyze(
      'struct __align__(16) Vec4 { float x, y, z, w; };\n__global__ void k(float* out) {\n  __shared__ __align__(16) float tile[6];\n  out[threadIdx.x] = tile[threadIdx.x];\n}' +
        AFTER,
    );
    assert.equal(facts.kernels[0].staticSharedBytes, 32);
    assertAfterIsWhole(facts);
  });

  it('__device__ lambdas', async () => {
    const facts = await analyze(
      'template <typename F>\n__global__ void apply(F f, int n) { if (threadIdx.x < n) f(threadIdx.x); }\nvoid run(float* a, int n) {\n  auto f = [=] __device__ (int i) { a[i] *= 2.0f; };\n  apply<<<1, 96>>>(f, n);\n}' +
        AFTER,
    );
    assert.deepEqual(
      facts.launches.map((l) => [l.kernelName, l.block.value?.x]),
      [
        ['apply', 96],
        ['after', 128],
      ],
    );
    assertAfterIsWhole(facts);
  });

  it('CUDART_CB callbacks', async () => {
    const facts = await analyze(
      'void CUDART_CB done(cudaStream_t s, cudaError_t e, void* user) { }\n__global__ void k(float* p) { p[0] = 1; }\nvoid run(float* p, cudaStream_t s) {\n  k<<<1, 32, 0, s>>>(p);\n  cudaStreamAddCallback(s, done, nullptr, 0);\n}' +
        AFTER,
    );
    assert.deepEqual(facts.launches[0].block.value, { x: 32, y: 1, z: 1 });
    assert.equal(facts.launches[0].stream, 's');
    assertAfterIsWhole(facts);
  });

  it("a macro that writes a kernel's whole head, specifiers through another macro and `void` (RAFT_KERNEL)", async () => {
    const facts = await analyze(
      [
        '#if defined(__CUDACC_RDC__)',
        '#define HIDDEN __attribute__((visibility("hidden")))',
        '#else',
        '#define HIDDEN',
        '#endif',
        '#if defined(WITH_RDC)',
        '#define KERNEL HIDDEN __global__ void',
        '#else',
        '#define KERNEL static __global__ void',
        '#endif',
        'template <typename T>',
        'KERNEL fill(T* out, int n) { int i = threadIdx.x; if (i < n) out[i] = 0; }',
        'void go(float* p, int n) { fill<float><<<1, 128>>>(p, n); }',
      ].join('\n') + AFTER,
      false,
    );
    assert.deepEqual(
      facts.kernels.map((k) => k.name),
      ['fill', 'after'],
    );
    assert.deepEqual(facts.launches.find((l) => l.kernelName === 'fill')?.block.value, { x: 128, y: 1, z: 1 });
    assert.ok(
      facts.branches.some((b) => b.condition === 'i < n'),
      'the kernel body is read',
    );
    assertAfterIsWhole(facts);
  });

  it('3-argument __launch_bounds__', async () => {
    const facts = await analyze(
      '__global__ void __launch_bounds__(256, 2, 4) k(float* p) { p[0] = 0; }\nvoid run(float* p) { k<<<8, 512>>>(p); }' +
        AFTER,
    );
    const lb = facts.kernels[0].launchBounds;
    assert.deepEqual([lb?.maxThreadsPerBlock, lb?.minBlocksPerMultiprocessor, lb?.maxBlocksPerCluster], [256, 2, 4]);
    assert.equal(facts.findings.filter((f) => f.code === 'launch-exceeds-bounds').length, 2);
    assertAfterIsWhole(facts);
  });

  it('__cluster_dims__ and __maxnreg__', async () => {
    const facts = await analyze(
      '__global__ void __cluster_dims__(2, 1, 1) c(float* p) { p[0] = 0; }\n__global__ void __maxnreg__(40) m(float* p) { p[0] = 0; }\nvoid run(float* p) { c<<<8, 128>>>(p); m<<<8, 64>>>(p); }' +
        AFTER,
    );
    assert.deepEqual(facts.kernels[0].clusterDims, { x: 2, y: 1, z: 1 });
    assert.equal(facts.kernels[1].maxnreg, 40);
    assert.deepEqual(
      facts.launches.map((l) => l.block.value?.x),
      [128, 64, 128],
    );
    assertAfterIsWhole(facts);
  });
});
