/**
 * A function's branches are its own: the same whatever else the file holds and in whatever order
 * (unrelated functions, kernels, types and macros before or after it), at the same places relative
 * to it. The analysis reads one function and what it calls, through the unit.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { analyzeSource } from '../support/divergence-fixtures';

const KERNEL = [
  'template <int TPB>',
  '__global__ void subject(const float* in, float* out, int n) {',
  '  int tid = threadIdx.x;',
  '  int lane = tid % 32;',
  '  if (tid < n) out[tid] = in[tid];',
  '  if (lane < 16) out[tid] += 1.0f;',
  '  for (int s = TPB / 2; s > 0; s >>= 1) {',
  '    if (tid < s) out[tid] += out[tid + s];',
  '    __syncthreads();',
  '  }',
  '  if (tid / 32 == 1) out[0] = scale(in[tid]);',
  '}',
  'void launch_subject(const float* in, float* out, int n) { subject<256><<<n / 256, 256>>>(in, out, n); }',
].join('\n');

/** Code that has nothing to do with `subject`: it must not change a verdict of it. */
const UNRELATED = [
  '__device__ float scale(float v) { return v * 2.0f; }',
  '__global__ void other(int* a, int n) {\n  if (threadIdx.x % 3 == 0) a[threadIdx.x] = n;\n}\nvoid launch_other(int* a) { other<<<1, 96>>>(a, 1); }',
  'struct Pair {\n  int lane;\n  __device__ bool first() const { return lane == 0; }\n};',
  '#define TILE 16\nconstexpr int kWidth = TILE * 2;',
  'static int host_helper(int x) {\n  for (int i = 0; i < x; ++i) x += i;\n  return x;\n}',
  'namespace util {\n__device__ int tid_in_tile() { return threadIdx.x % 16; }\n}',
];

async function subjectBranches(text: string): Promise<string[]> {
  const start = text.split('\n').indexOf('template <int TPB>');
  return (await analyzeSource(text))
    .filter((b) => b.kernel === 'subject')
    .map((b) => `${b.span.start.line - start}:${b.construct}:${b.kind}:${b.condition}`)
    .sort();
}

describe('a function analysed apart from the rest of its file', () => {
  it('has the same branches whatever unrelated code stands around it, in any order', async () => {
    // `scale` is called: it stays first, as C++ needs it declared before use.
    const alone = await subjectBranches(`${UNRELATED[0]}\n${KERNEL}\n`);
    assert.equal(alone.length, 4, alone.join('\n'));
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(UNRELATED.slice(1)),
        fc.shuffledSubarray(UNRELATED.slice(1)),
        async (before, after) => {
          const text = [UNRELATED[0], ...before, KERNEL, ...after.filter((x) => !before.includes(x))].join('\n');
          assert.deepEqual(await subjectBranches(text), alone);
        },
      ),
      { numRuns: 25 },
    );
  });
});
