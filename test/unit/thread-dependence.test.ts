/**
 * Thread-index dependence on small kernels: the kind and shape of each
 * variable's value and where its thread dependence came from.
 */
import * as assert from 'node:assert/strict';
import { parseCuda } from '../support/grammar';
import { makeSourceText } from '../../server/src/core/text/source-text';
import { findKernels } from '../../server/src/core/facts/kernel-finder';
import {
  affineShape,
  analyzeThreadDependence,
  dependenceKind,
  simulateLoopCounter,
  type KernelDependence,
  type Sym,
} from '../../server/src/core/body/thread-dependence';

async function dependence(text: string): Promise<KernelDependence> {
  const tree = await parseCuda(text);
  const kernels = findKernels(makeSourceText(text));
  const [result] = analyzeThreadDependence(tree, kernels);
  assert.ok(result, 'no kernel analysed');
  return result;
}

async function kindsOf(body: string, prelude = ''): Promise<Record<string, string>> {
  const dep = await dependence(`${prelude}\n__global__ void k(int* a, float* f, int n) {\n${body}\n}\n`);
  const out: Record<string, string> = {};
  for (const [name, v] of dep.variables) if (!['a', 'f', 'n'].includes(name)) out[name] = dependenceKind(v.sym);
  return out;
}

describe('thread dependence: kinds', () => {
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
    const dep = await dependence('__global__ void k(int* a) {\n  int y = threadIdx.y;\n  a[y] = 0;\n}\n');
    assert.equal(dep.usesMultiDimensionalBlock, true);
    assert.equal(dependenceKind(dep.variables.get('y')!.sym), 'warpUniform');
    assert.equal(dependenceKind(dep.variables.get('y')!.sym, { x: 16, y: 16, z: 1 }), 'laneVarying');
  });

  it('sees the other sources of lane-varying values', async () => {
    const prelude = '#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;';
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
});

describe('thread dependence: shapes, origins and sites', () => {
  it('gives the affine shape of an index', async () => {
    const dep = await dependence(
      '__global__ void k(int* a) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  int w = (2 * threadIdx.x) / 32;\n  int l = threadIdx.x % 32;\n  a[i + w + l] = 0;\n}\n',
    );
    const shape = (n: string) => affineShape(dep.variables.get(n)!.sym);
    assert.deepEqual(shape('i'), { coefficients: { x: 1, y: 0, z: 0 }, hasBlockOffset: true, transform: 'none' });
    assert.deepEqual(shape('w'), { coefficients: { x: 2, y: 0, z: 0 }, hasBlockOffset: false, transform: 'warp' });
    assert.deepEqual(shape('l'), { coefficients: { x: 1, y: 0, z: 0 }, hasBlockOffset: false, transform: 'lane' });
  });

  it('remembers where a value came from', async () => {
    const dep = await dependence(
      '__global__ void k(int* a) {\n  int t = threadIdx.x;\n  int u = t + 1;\n  if (u < 3) a[0] = 1;\n}\n',
    );
    assert.equal(dep.variables.get('t')!.origin?.text, 'int t = threadIdx.x;');
    assert.equal(dep.variables.get('u')!.origin?.text, 'int u = t + 1;');
    assert.equal(dep.sites.length, 1);
    assert.equal(dep.sites[0].condition.origin?.text, 'int u = t + 1;');
    assert.equal(dep.sites[0].construct, 'if');
  });

  it('models a halving loop counter and simulates it for a block size', async () => {
    const dep = await dependence(
      '__global__ void k(int* a) {\n  for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n    if (threadIdx.x < s) a[threadIdx.x] += a[threadIdx.x + s];\n  }\n}\n',
    );
    const site = dep.sites[0];
    const cond = site.condition.sym as Extract<Sym, { op: 'binary' }>;
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
    const dep = await dependence(
      '__global__ void k(int* a, int n) {\n  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) a[i] = 0;\n}\n',
    );
    assert.equal(dep.sites.length, 1);
    assert.equal(dep.sites[0].construct, 'loop');
    const shape = affineShape((dep.sites[0].condition.sym as Extract<Sym, { op: 'binary' }>).left);
    assert.equal(shape?.hasBlockOffset, true);
    assert.equal(shape?.coefficients.x, 1);
  });

  it('records branches inside a __device__ function reached from the kernel', async () => {
    const text =
      '__device__ void maybe(int* a, int t) {\n  if (t % 3 == 0) a[t] = 1;\n}\n__global__ void k(int* a) {\n  maybe(a, threadIdx.x);\n}\n';
    const dep = await dependence(text);
    assert.equal(dep.sites.length, 1);
    assert.equal(dep.sites[0].node.startPosition.row, 1);
    assert.equal(dep.sites[0].kernel, 'k');
  });
});
