/**
 * Thread uniformity on small kernels, read as the server reads a document (its unit, its IR): the
 * kind and shape of each variable's value where the kernel ends, where its thread dependence came
 * from, and the branches recorded with the conditions they run under.
 */
import * as assert from 'node:assert/strict';
import { lineOf, uniformityOf } from '../support/uniformity';
import { affineShape, dependenceKind } from '../../server/src/core/uniformity/dependence-kind';
import { simulateLoopCounter } from '../../server/src/core/uniformity/lane-evaluation';
import { symKey, type Sym } from '../../server/src/core/uniformity/symbolic-values';

const uniformity = (text: string) => uniformityOf(text);

async function kindsOf(body: string, prelude = ''): Promise<Record<string, string>> {
  const u = await uniformity(`${prelude}\n__global__ void k(int* a, float* f, int n) {\n${body}\n}\n`);
  const out: Record<string, string> = {};
  for (const [name, v] of u.variables) out[name] = dependenceKind(v.sym);
  return out;
}

describe('thread uniformity: kinds', () => {
  it('follows threadIdx through locals, arithmetic and compound assignments', async () => {
    const k = await kindsOf(
      '  int t = threadIdx.x;\n  int u = t * 2 + 1;\n  int w = t / 32;\n  int l = t & 31;\n  int m = n * 4;\n  m += 1;\n  u -= 3;',
    );
    assert.deepEqual(k, { t: 'laneVarying', u: 'laneVarying', w: 'warpUniform', l: 'laneVarying', m: 'uniform' });
  });

  it('knows a global index, and that `>> 5` is per warp', async () => {
    const k = await kindsOf(
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  int warp = threadIdx.x >> 5;\n  int wave = (threadIdx.x + 32) / 64;',
    );
    assert.deepEqual(k, { i: 'globalIndex', warp: 'warpUniform', wave: 'warpUniform' });
  });

  it('treats threadIdx.y as per warp under the default 32×8 shape', async () => {
    const u = await uniformity('__global__ void k(int* a) {\n  int y = threadIdx.y;\n  a[y] = 0;\n}\n');
    assert.equal(u.multiDimensional, true);
    assert.equal(dependenceKind(u.variables.get('y')!.sym), 'warpUniform');
    assert.equal(dependenceKind(u.variables.get('y')!.sym, { x: 16, y: 16, z: 1 }), 'laneVarying');
  });

  it('sees the other sources of lane-varying values', async () => {
    const prelude = 'namespace cg = cooperative_groups;';
    const body = [
      '  auto block = cg::this_thread_block();',
      '  int r = block.thread_rank();',
      '  int ix = block.thread_index().x;',
      '  unsigned lane;',
      '  asm("mov.u32 %0, %%laneid;" : "=r"(lane));',
      '  int old = atomicAdd(a, 1);',
      '  int loaded = a[threadIdx.x];',
      '  int shared0 = a[0];',
      '  int down = __shfl_down_sync(0xffffffff, r, 1);',
      '  int bcast = __shfl_sync(0xffffffff, r, 0);',
      '  int vote = __ballot_sync(0xffffffff, r > 3);',
      '  int same = __shfl_down_sync(0xffffffff, n, 1);',
    ].join('\n');
    const k = await kindsOf(body, prelude);
    assert.deepEqual(k, {
      block: 'uniform',
      r: 'laneVarying',
      ix: 'laneVarying',
      lane: 'laneVarying',
      old: 'laneVarying',
      loaded: 'laneVarying',
      shared0: 'uniform',
      down: 'laneVarying',
      bcast: 'warpUniform',
      vote: 'warpUniform',
      same: 'uniform',
    });
  });

  it('passes values through __device__ calls with parameters', async () => {
    const prelude =
      '__device__ int lane_of(int t) { return t & 31; }\n__device__ int warp_of(int t) { return t / 32; }\n__device__ int twice(int v) { return v * 2; }';
    const k = await kindsOf(
      '  int l = lane_of(threadIdx.x);\n  int w = warp_of(threadIdx.x);\n  int u = twice(n);',
      prelude,
    );
    assert.deepEqual(k, { l: 'laneVarying', w: 'warpUniform', u: 'uniform' });
  });

  it('keeps the values a helper writes through references bounded when it is called on its own outputs', async () => {
    // Double-single arithmetic: each call's outputs read every input several times, so written out
    // in the caller's values they would grow by a factor at each call (2^40 terms by the end).
    const prelude = [
      '__device__ void mul2(float& c0, float& c1, const float a0, const float a1, const float b0, const float b1) {',
      '  float s = a0 * 8193.0f - (a0 * 8193.0f - a0);',
      '  float t = b0 * 8193.0f - (b0 * 8193.0f - b0);',
      '  float p = a0 * b0;',
      '  float q = ((s * t - p) + s * (b0 - t)) + (a0 - s) * t + a1 * b0 + a0 * b1;',
      '  c0 = p + q;',
      '  c1 = q - (c0 - p);',
      '}',
    ].join('\n');
    const calls = Array.from(
      { length: 20 },
      () => '  mul2(x0, x1, x0, x1, y0, y1);\n  mul2(y0, y1, y0, y1, x0, x1);',
    ).join('\n');
    const k = await kindsOf(
      `  float x0 = threadIdx.x, x1 = 0.0f, y0 = n, y1 = 0.0f;\n${calls}\n  float u0 = y0;\n  float w0 = n * 2.0f;`,
      prelude,
    );
    assert.deepEqual(
      { x0: k.x0, y0: k.y0, u0: k.u0, w0: k.w0 },
      { x0: 'laneVarying', y0: 'laneVarying', u0: 'laneVarying', w0: 'uniform' },
    );
  });

  it('makes a value assigned under a lane-varying condition lane-varying (control dependence)', async () => {
    const k = await kindsOf(
      '  int v = 0;\n  if (threadIdx.x % 32 == 0) v = 1;\n  int s = 0;\n  if (threadIdx.x / 32 == 2) s = 5;\n  int q = 0;\n  if (n > 2) q = 3;',
    );
    assert.deepEqual(k, { v: 'laneVarying', s: 'warpUniform', q: 'uniform' });
  });

  it('ternaries keep the shape of both arms', async () => {
    const k = await kindsOf('  int a1 = n > 0 ? threadIdx.x / 32 : 0;\n  int a2 = threadIdx.x > 3 ? 1 : 0;');
    assert.deepEqual(k, { a1: 'warpUniform', a2: 'laneVarying' });
  });

  it('joins a flag set under two conditions as the choice of both (each lane its own)', async () => {
    const u = await uniformity(
      '__global__ void k(int* a) {\n  bool hit = false;\n  if (threadIdx.x < 8) hit = true;\n  if (threadIdx.x >= 40 && threadIdx.x < 48) hit = true;\n  if (hit) a[0] = 1;\n}\n',
    );
    const site = u.sites.find((s) => lineOf(u, s.at[0]) === 4)!;
    assert.equal(
      symKey(site.cond.sym),
      '(((threadIdx.x >= 40) && (threadIdx.x < 48)) ? 1 : ((threadIdx.x < 8) ? 1 : 0))',
    );
  });

  it('reads a loop variable that shadows an outer one as its own', async () => {
    const u = await uniformity(
      '__global__ void k(int* a, int n) {\n  for (int i = 0; i < 4; ++i) {\n    for (int i = threadIdx.x; i < n; i += blockDim.x) a[i] = 0;\n    a[i] = 1;\n  }\n}\n',
    );
    assert.deepEqual(
      u.sites.map((s) => [lineOf(u, s.at[0]), s.construct]),
      [[2, 'loop']],
      'the outer loop is uniform; the inner one runs a lane index',
    );
    const affine = affineShape((u.sites[0].cond.sym as Extract<Sym, { op: 'binary' }>).left);
    assert.equal(affine?.coefficients.x, 1);
  });

  it('keeps a shared flag one thread writes uniform after a barrier', async () => {
    const u = await uniformity(
      '__global__ void k(int* a) {\n  __shared__ int stop;\n  if (threadIdx.x == 0) stop = a[0];\n  __syncthreads();\n  if (stop) return;\n  a[threadIdx.x] = 1;\n}\n',
    );
    assert.deepEqual(
      u.sites.map((s) => lineOf(u, s.at[0])),
      [2],
    );
  });

  it('takes a vote the unit does not define by its name, and a name it does not declare as varying with the arguments', async () => {
    const k = await kindsOf(
      '  unsigned v = BALLOT(a[threadIdx.x] > 0);\n  float key = key_of(f[threadIdx.x]);\n  float same = key_of(f[0]);',
      '__device__ float key_of(float v) { return SORT_KEY; }',
    );
    assert.deepEqual(k, { v: 'warpUniform', key: 'laneVarying', same: 'uniform' });
  });
});

describe('thread uniformity: shapes, origins and sites', () => {
  it('gives the affine shape of an index', async () => {
    const u = await uniformity(
      '__global__ void k(int* a) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  int w = (2 * threadIdx.x) / 32;\n  int l = threadIdx.x % 32;\n  a[i + w + l] = 0;\n}\n',
    );
    const shape = (n: string) => affineShape(u.variables.get(n)!.sym);
    assert.deepEqual(shape('i'), { coefficients: { x: 1, y: 0, z: 0 }, hasBlockOffset: true, transform: 'none' });
    assert.deepEqual(shape('w'), { coefficients: { x: 2, y: 0, z: 0 }, hasBlockOffset: false, transform: 'warp' });
    assert.deepEqual(shape('l'), { coefficients: { x: 1, y: 0, z: 0 }, hasBlockOffset: false, transform: 'lane' });
  });

  it('remembers where a value came from', async () => {
    const u = await uniformity(
      '__global__ void k(int* a) {\n  int t = threadIdx.x;\n  int u = t + 1;\n  if (u < 3) a[0] = 1;\n}\n',
    );
    const text = (v: { origin: { at: readonly [number, number] } | null }) =>
      v.origin && u.text.slice(v.origin.at[0], v.origin.at[1]);
    assert.equal(text(u.variables.get('t')!), 'int t = threadIdx.x;');
    assert.equal(text(u.variables.get('u')!), 'int u = t + 1;');
    assert.equal(u.sites.length, 1);
    assert.equal(text(u.sites[0].cond), 'int u = t + 1;');
    assert.equal(u.sites[0].construct, 'if');
  });

  it('models a halving loop counter and simulates it for a block size', async () => {
    const u = await uniformity(
      '__global__ void k(int* a) {\n  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n    if (threadIdx.x < s) a[threadIdx.x] += a[threadIdx.x + s];\n  }\n}\n',
    );
    const site = u.sites.find((x) => x.construct === 'if')!;
    const cond = site.cond.sym as Extract<Sym, { op: 'binary' }>;
    assert.equal(cond.right.op, 'free');
    const s = cond.right as Extract<Sym, { op: 'free' }>;
    assert.equal(s.loop?.role, 'counter');
    const base = {
      threadIdx: { x: 0, y: 0, z: 0 },
      blockIdx: { x: 0, y: 0, z: 0 },
      blockDim: { x: 128, y: 1, z: 1 },
      gridDim: { x: 1, y: 1, z: 1 },
      warpKey: 0,
    };
    assert.deepEqual(simulateLoopCounter(s, base), [64, 32, 16, 8, 4, 2, 1]);
  });

  it('records a grid-stride loop variable as the global index plus a uniform offset', async () => {
    const u = await uniformity(
      '__global__ void k(int* a, int n) {\n  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) a[i] = 0;\n}\n',
    );
    assert.equal(u.sites.length, 1);
    assert.equal(u.sites[0].construct, 'loop');
    const shape = affineShape((u.sites[0].cond.sym as Extract<Sym, { op: 'binary' }>).left);
    assert.equal(shape?.hasBlockOffset, true);
    assert.equal(shape?.coefficients.x, 1);
  });

  it('records branches inside a __device__ function reached from the kernel, under the caller’s conditions', async () => {
    const u = await uniformity(
      '__device__ void maybe(int* a, int t) {\n  if (t % 3 == 0) a[t] = 1;\n}\n__global__ void k(int* a) {\n  if (threadIdx.x < 64) maybe(a, threadIdx.x);\n}\n',
    );
    assert.deepEqual(
      u.sites.map((s) => [lineOf(u, s.at[0]), s.guards.map(symKey)]),
      [
        [1, ['(threadIdx.x < 64)']],
        [4, []],
      ],
    );
  });

  it('binds a template kernel’s parameters per instance', async () => {
    const text =
      'template <int T>\n__global__ void k(float* out) {\n  if ((threadIdx.x / T) % 2 == 0) out[threadIdx.x] = 1;\n}\n';
    const at = async (t: number) =>
      (await uniformityOf(text, { args: [{ k: 'num', values: [t], integer: true }] })).sites;
    assert.equal(symKey((await at(32))[0].cond.sym), '(((threadIdx.x / 32) % 2) == 0)');
    assert.equal(symKey((await at(4))[0].cond.sym), '(((threadIdx.x / 4) % 2) == 0)');
  });
});
