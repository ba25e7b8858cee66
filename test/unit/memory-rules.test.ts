/**
 * The memory and barrier rules on small kernels, read as the server reads a document (its launches
 * give the block shape): each flagged case beside its unflagged neighbour (the uniform barrier, the
 * unit-stride access, the padded tile).
 */
import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
import type { MemoryRecord } from '../../server/src/core/body/memory-rules';
import { WorkspaceIndex } from '../../server/src/core/facts/workspace-index';

/** `rule severity line: text`, for the records of a snippet (lines 1-based). */
async function rulesOf(text: string): Promise<string[]> {
  const facts = await analyzeSnippet(text);
  return facts.memory.map((r) => `${r.rule} ${r.severity} ${r.span.start.line + 1}: ${r.text}`);
}

async function recordsOf(text: string): Promise<MemoryRecord[]> {
  return (await analyzeSnippet(text)).memory;
}

/** A kernel body launched with `block` threads per block. */
function kernel(body: string, block = '256', params = 'float* out, const float* in, int n'): string {
  return `__global__ void k(${params}) {\n${body}\n}\nvoid run(float* o, const float* i, int n) { k<<<64, ${block}>>>(o, i, n); }\n`;
}

describe('barrier-divergence', () => {
  it('is an error where the thread index splits the block', async () => {
    const got = await rulesOf(
      kernel(
        [
          '  __shared__ float s[256];',
          '  s[threadIdx.x] = in[threadIdx.x];',
          '  if (threadIdx.x < 128) {',
          '    s[threadIdx.x] += s[threadIdx.x + 128];',
          '    __syncthreads();',
          '  }',
          '  out[threadIdx.x] = s[0];',
        ].join('\n'),
      ),
    );
    assert.deepEqual(
      got.filter((g) => g.startsWith('barrier')),
      ['barrier-divergence error 6: __syncthreads()'],
    );
  });

  it('says how many threads arrive', async () => {
    const code =
      '  __shared__ float s[1];\n  if (threadIdx.x == 0) { s[0] = 1.f; __syncthreads(); }\n  out[threadIdx.x] = s[0];';
    const [r] = (await recordsOf(kernel(code))).filter((x) => x.rule === 'barrier-divergence');
    assert.deepEqual(r.measure, { actual: 1, ideal: 256 });
    assert.match(r.message, /1 of the 256 threads of a 256-thread block reach it/);
  });

  it('quotes a long condition as the code writes it, a short one as computed from the thread index', async () => {
    const text = kernel(
      [
        '  int row = blockIdx.x * (blockDim.x / 32 / n) + (threadIdx.x / 32) / n + (n >> 3) * (n & 7);',
        '  __shared__ float s[256];',
        '  if (row < n * n) {',
        '    s[threadIdx.x] = in[row];',
        '    __syncthreads();',
        '    out[row] = s[255 - threadIdx.x];',
        '  }',
        '  int i = threadIdx.x;',
        '  if (i < n) {',
        '    __syncthreads();',
        '  }',
      ].join('\n'),
    );
    const barriers = (await recordsOf(text)).filter((r) => r.rule === 'barrier-divergence');
    assert.deepEqual(
      barriers.map((r) => /runs only where `([^`]*)` holds/.exec(r.message)?.[1]),
      ['row < n * n', 'threadIdx.x < n'],
    );
  });

  it('is a hint where the threads that miss the barrier have left the kernel (an exit releases it: no hang)', async () => {
    const records = await recordsOf(
      kernel(
        [
          '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
          '  if (i >= n) return;',
          '  __shared__ float s[256];',
          '  s[threadIdx.x] = in[i];',
          '  __syncthreads();',
          '  out[i] = s[255 - threadIdx.x];',
        ].join('\n'),
      ),
    );
    const got = records.filter((r) => r.rule === 'barrier-divergence');
    assert.deepEqual(
      got.map((r) => `${r.severity} ${r.span.start.line + 1}`),
      ['hint 6'],
    );
    assert.match(got[0].message, /does not hang/);
    assert.match(got[0].message, /a departed thread would have written/);
  });

  it('stays a warning where the threads that skip it go on: to read shared memory, or to another barrier', async () => {
    // Threads past n read the tile without waiting for its writers.
    const reads = await rulesOf(
      kernel(
        [
          '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
          '  __shared__ float s[256];',
          '  if (i < n) {',
          '    s[threadIdx.x] = in[i];',
          '    __syncthreads();',
          '  }',
          '  out[threadIdx.x] = s[0];',
        ].join('\n'),
      ),
    );
    assert.deepEqual(
      reads.filter((g) => g.startsWith('barrier')),
      ['barrier-divergence warning 6: __syncthreads()'],
    );
    // Warps that leave the loop early wait at the barrier after it, the others inside it.
    const another = await rulesOf(
      kernel(
        [
          '  __shared__ float s[256];',
          '  for (int r = threadIdx.x / 32; r < n; r += 4) {',
          '    s[threadIdx.x] = in[r];',
          '    __syncthreads();',
          '  }',
          '  __syncthreads();',
          '  out[threadIdx.x] = 0;',
        ].join('\n'),
        '128',
      ),
    );
    assert.deepEqual(
      another.filter((g) => g.startsWith('barrier')),
      ['barrier-divergence warning 5: __syncthreads()'],
    );
  });

  it("is a hint where the threads that skip it meet a barrier in the branch's other arm (bar.sync counts arrivals)", async () => {
    const body = (other: string) =>
      [
        '  __shared__ float s[256];',
        '  s[threadIdx.x] = in[threadIdx.x];',
        '  if (threadIdx.x % 64 == 0) {',
        '    s[threadIdx.x] += s[threadIdx.x + 1];',
        '    __syncthreads();',
        '    out[threadIdx.x] = s[threadIdx.x];',
        `  } ${other} {`,
        '    __syncthreads();',
        '  }',
        '  out[threadIdx.x] += s[0];',
      ].join('\n');
    const paired = (await recordsOf(kernel(body('else')))).filter((r) => r.rule === 'barrier-divergence');
    assert.deepEqual(
      paired.map((r) => `${r.severity} ${r.span.start.line + 1}`),
      ['hint 6', 'hint 9'],
    );
    assert.match(
      paired[0].message,
      /the others meet a barrier in the other arm of that branch\. `__syncthreads\(\)` counts/,
    );
    // The other arm meets it only where `n > 2`: where it does not, the first barrier's block hangs.
    const half = (await recordsOf(kernel(body('else if (n > 2)')))).filter((r) => r.rule === 'barrier-divergence');
    assert.deepEqual(
      half.map((r) => `${r.severity} ${r.span.start.line + 1}`),
      ['error 6', 'hint 9'],
    );
  });

  it("pairs a callee's barriers across its arms, through a loop and a branch the template argument decides", async () => {
    const text = [
      'template <int np>',
      '__device__ void tile(float* out, float* s) {',
      '  if (np > 1 && threadIdx.y % np == 0) {',
      '    for (int k = 0; k < 4; k++) s[threadIdx.x] += s[threadIdx.x + k];',
      '    __syncthreads();',
      '  } else if (np > 1) {',
      '    __syncthreads();',
      '  }',
      '  out[threadIdx.x] = s[threadIdx.x];',
      '}',
      'template <int np>',
      '__global__ void k(float* out, const float* in) {',
      '  __shared__ float s[256];',
      '  s[threadIdx.x] = in[threadIdx.x];',
      '  tile<np>(out, s);',
      '}',
      'void run(float* o, const float* i) { k<2><<<64, dim3(32, 8)>>>(o, i); k<1><<<64, dim3(32, 8)>>>(o, i); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'barrier-divergence');
    assert.deepEqual(
      records.map((r) => r.severity),
      ['hint'],
    );
    assert.match(records[0].message, /reached through `tile<np>\(out, s\)`\) is reached by part of the block/);
  });

  it('is a warning under a condition on per-lane data', async () => {
    const got = await rulesOf(kernel('  if (in[threadIdx.x] > 0.f) __syncthreads();\n  out[threadIdx.x] = 0;'));
    assert.deepEqual(
      got.filter((g) => g.startsWith('barrier')),
      ['barrier-divergence warning 2: __syncthreads()'],
    );
  });

  it('follows a __device__ function that synchronises, and reports it at the call', async () => {
    const text = `__device__ void stage(float* s) { s[threadIdx.x] = 0; __syncthreads(); }\n${kernel('  __shared__ float s[256];\n  if (threadIdx.x % 2) stage(s);\n  out[0] = s[0];')}`;
    const got = await rulesOf(text);
    assert.deepEqual(
      got.filter((g) => g.startsWith('barrier')),
      ['barrier-divergence error 4: stage(s)'],
    );
  });

  it('sees cooperative groups and bar.sync in inline PTX', async () => {
    const text = `#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n${kernel(
      [
        '  auto block = cg::this_thread_block();',
        '  if (threadIdx.x < 32) block.sync();',
        '  if (threadIdx.x < 64) asm volatile("bar.sync 0;");',
        '  if (threadIdx.x < 64) asm volatile("bar.sync 1, 64;");',
      ].join('\n'),
    )}`;
    const got = (await rulesOf(text)).filter((g) => g.startsWith('barrier'));
    assert.deepEqual(
      got.map((g) => g.replace(/:.*/, '')),
      // Threads past 64 skip `bar.sync 0` and leave the kernel (a named barrier of 64 is not the block's): a hint.
      ['barrier-divergence error 5', 'barrier-divergence hint 6'],
    );
  });

  it('is quiet on block-uniform conditions: blockIdx, parameters, a shared flag read after a barrier, uniform loops', async () => {
    const got = await rulesOf(
      kernel(
        [
          '  __shared__ int flag;',
          '  __shared__ float s[256];',
          '  if (threadIdx.x == 0) flag = n > 3;',
          '  __syncthreads();',
          '  if (flag) { s[threadIdx.x] = 1; __syncthreads(); }',
          '  if (blockIdx.x > 2) __syncthreads();',
          '  if (n > 0) __syncthreads();',
          '  for (int step = blockDim.x / 2; step > 0; step >>= 1) {',
          '    if (threadIdx.x < step) s[threadIdx.x] += s[threadIdx.x + step];',
          '    __syncthreads();',
          '  }',
          '  for (int b = 0; b < n; b += blockDim.x) { s[threadIdx.x] = in[b + threadIdx.x]; __syncthreads(); }',
          '  if (threadIdx.x < 1024) __syncthreads();',
          '  out[threadIdx.x] = s[0];',
        ].join('\n'),
      ),
    );
    assert.deepEqual(
      got.filter((g) => g.startsWith('barrier')),
      [],
    );
  });

  it('checks __syncwarp masks against the lanes that reach them', async () => {
    const got = await rulesOf(
      kernel(
        [
          '  int lane = threadIdx.x % 32;',
          '  if (lane < 16) __syncwarp();',
          '  if (lane < 16) __syncwarp(0xffff);',
          '  __syncwarp(0xffff);',
          '  __syncwarp();',
        ].join('\n'),
      ),
    );
    assert.deepEqual(
      got.filter((g) => g.startsWith('barrier')).map((g) => g.replace(/:.*/, '')),
      ['barrier-divergence error 3', 'barrier-divergence error 5'],
    );
  });

  it('does not wait for lanes that left the kernel: __syncwarp after an early return is met by the lanes still there', async () => {
    const body = (exit: string) =>
      kernel(
        [
          '  int lane = threadIdx.x % 32;',
          `  ${exit}`,
          '  float v = in[threadIdx.x];',
          '  __syncwarp();',
          '  out[threadIdx.x] = v;',
        ].join('\n'),
      );
    // The lanes at or past n have exited: every lane that is left reaches the barrier.
    assert.deepEqual(
      (await rulesOf(body('if (lane >= n) return;'))).filter((g) => g.startsWith('barrier')),
      [],
    );
    // Lanes that skip a block and go on are still there: the barrier is missing them.
    const skipped = kernel(
      [
        '  int lane = threadIdx.x % 32;',
        '  float v = 0;',
        '  if (lane < 16) { v = in[threadIdx.x]; __syncwarp(); }',
        '  out[threadIdx.x] = v;',
      ].join('\n'),
    );
    assert.deepEqual(
      (await rulesOf(skipped)).filter((g) => g.startsWith('barrier')).map((g) => g.replace(/:.*/, '')),
      ['barrier-divergence error 4'],
    );
  });
});

describe('barrier-divergence: the same kernel read twice', () => {
  it("counts the same threads at a barrier each time, whatever numbers the walk gave a warp's unknowns", async () => {
    // Each warp's bound is its own value from memory (warp-uniform, unknown): the reach is sampled
    // per warp, and the samples must not follow the numbers one analysis of the process hands out.
    const text = kernel(
      [
        '  __shared__ float s[256];',
        '  int bound = (int)in[threadIdx.x / 32];',
        '  s[threadIdx.x] = in[threadIdx.x];',
        '  if (threadIdx.x < bound) {',
        '    __syncthreads();',
        '    out[threadIdx.x] = s[threadIdx.x ^ 1];',
        '  }',
      ].join('\n'),
    );
    const once = (await recordsOf(text)).map((r) => r.message);
    assert.match(once[0], /reach it/);
    for (let again = 0; again < 3; again++)
      assert.deepEqual(
        (await recordsOf(text)).map((r) => r.message),
        once,
      );
  });
});

describe('uncoalesced-access', () => {
  it("is a hint naming the vector access where a lane's neighbouring scalar accesses use the rest of the sectors", async () => {
    const text = kernel(
      [
        '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
        '  out[i] = in[4 * i] + in[4 * i + 1] + in[4 * i + 2] + in[4 * i + 3];',
        '  out[n + i] = in[8 * i];',
      ].join('\n'),
    );
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.severity} ${r.text} ${/rest of those sectors/.test(r.message)}`),
      [
        'hint in[4 * i] true',
        'hint in[4 * i + 1] true',
        'hint in[4 * i + 2] true',
        'hint in[4 * i + 3] true',
        // Eight apart, with no neighbour that moves with it: 4 bytes of each 32-byte sector are read.
        'warning in[8 * i] false',
      ],
    );
    assert.match(records[0].fix, /one vector access/);
  });

  it('reads neighbouring loads as neighbours where a run-time divisor, sampled at 0, leaves a sample without numbers', async () => {
    const text = [
      '__global__ void k(float* out, const float* in, int heads) {',
      '  int b = blockIdx.z / heads;',
      '  int i = b * 1024 + blockIdx.x * blockDim.x + threadIdx.x;',
      '  float a = in[4 * i] + in[4 * i + 1] + in[4 * i + 2] + in[4 * i + 3];',
      '  out[i] = a;',
      '}',
      'void run(float* o, const float* i, int h) { k<<<dim3(4, 1, 8), 256>>>(o, i, h); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.severity} ${r.text}`),
      ['hint in[4 * i]', 'hint in[4 * i + 1]', 'hint in[4 * i + 2]', 'hint in[4 * i + 3]'],
    );
    assert.match(records[0].message, /The lane's neighbouring loads from `in` use the rest of those sectors/);
  });

  it("is a hint where the lane's own iterations of a loop with a known trip count use the rest of the sectors", async () => {
    const loop = (stride: number, bound: string) =>
      kernel(
        [
          `  int i = (blockIdx.x * blockDim.x + threadIdx.x) * ${stride};`,
          `  for (int k = 0; k < ${bound}; ++k) out[i + k] = 2.f * in[i + k];`,
        ].join('\n'),
        '256',
        'float* out, const float* in, int n, int m',
      );
    const covered = (await recordsOf(loop(4, '4'))).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      covered.map((r) => `${r.severity} ${r.text} ${/other iterations of its loop/.test(r.message)}`),
      ['hint out[i + k] true', 'hint in[i + k] true'],
    );
    assert.match(covered[0].fix, /one vector access/);
    // Eight floats a lane, four of them used: half of each lane's sector is never read.
    const half = (await recordsOf(loop(8, '4'))).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      half.map((r) => `${r.severity} ${r.text}`),
      ['warning out[i + k]', 'warning in[i + k]'],
    );
    // A trip count the source does not fix: the iterations are not known to cover anything.
    const unknown = (await recordsOf(loop(4, 'm'))).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      unknown.map((r) => `${r.severity} ${r.text}`),
      ['warning out[i + k]', 'warning in[i + k]'],
    );
  });

  it('leaves out loads every block makes of the same bytes where the neighbours use the rest of the sectors, else a hint', async () => {
    // `gamma` and `beta` are read alike by every block (the address reads no blockIdx): after the
    // first block they are in L1 or L2. The row of `in` the block reads is its own: its bytes come
    // from DRAM once, and the finding stays (a hint naming the vector load).
    const text = [
      'struct P { const float* gamma; int n; };',
      '__global__ void norm(float* out, const float* in, const float* gamma, const float* beta, P p, int n) {',
      '  int c = 4 * threadIdx.x;',
      '  const float* row = in + blockIdx.x * n;',
      '  float g = gamma[c] + gamma[c + 1] + gamma[c + 2] + gamma[c + 3];',
      '  float x = row[c] + row[c + 1] + row[c + 2] + row[c + 3];',
      '  float h = p.gamma[c] + p.gamma[c + 1] + p.gamma[c + 2] + p.gamma[c + 3];',
      '  out[blockIdx.x * n + threadIdx.x] = g * x * h + beta[8 * threadIdx.x];',
      '  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = gamma[2 * i] + gamma[2 * i + 1];',
      '  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = in[blockIdx.x * n + 2 * i] + in[blockIdx.x * n + 2 * i + 1];',
      '}',
      'void run(float* o, const float* i, const float* g, const float* b, P p, int n) { norm<<<64, 256>>>(o, i, g, b, p, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.severity} ${r.span.start.line + 1}: ${r.text}`),
      [
        'hint 6: row[c]',
        'hint 6: row[c + 1]',
        'hint 6: row[c + 2]',
        'hint 6: row[c + 3]',
        'hint 8: beta[8 * threadIdx.x]',
        'hint 10: in[blockIdx.x * n + 2 * i]',
        'hint 10: in[blockIdx.x * n + 2 * i + 1]',
      ],
    );
    // Eight floats apart with no neighbour, `beta` would be a warning if each block read its own bytes.
    assert.match(records[4].message, /Every block reads the same bytes here/);
    const perBlock = text.replace('beta[8 * threadIdx.x]', 'beta[blockIdx.x * n + 8 * threadIdx.x]');
    const [own] = (await recordsOf(perBlock)).filter(
      (r) => r.rule === 'uncoalesced-access' && r.text.startsWith('beta'),
    );
    assert.equal(own.severity, 'warning');
  });

  it("reads a struct parameter's pointer member read twice as one pointer: its neighbouring loads are a hint too", async () => {
    const text = [
      'struct Param { const float* scale; float* out; };',
      '__global__ void k(Param p) {',
      '  int i = blockIdx.x * 1024 + threadIdx.x * 4;',
      '  float a = p.scale[i + 0] + p.scale[i + 1];',
      '  float b = p.scale[i + 2] + p.scale[i + 3];',
      '  p.out[threadIdx.x] = a + b;',
      '}',
      'void run(Param p) { k<<<64, 256>>>(p); }',
      '',
    ].join('\n');
    // Each block reads its own slice (the same slice for every block would be left out: see above).
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      [
        'uncoalesced-access hint 4: p.scale[i + 0]',
        'uncoalesced-access hint 4: p.scale[i + 1]',
        'uncoalesced-access hint 5: p.scale[i + 2]',
        'uncoalesced-access hint 5: p.scale[i + 3]',
      ],
    );
  });

  it('names the pointer an access through pointer arithmetic reads (`__ldg(in + 4 * i)` reads `in`)', async () => {
    const [r] = (await recordsOf(kernel('  out[threadIdx.x] = __ldg(in + 4 * threadIdx.x);'))).filter(
      (x) => x.rule === 'uncoalesced-access',
    );
    assert.match(r?.message ?? '', /^Uncoalesced load from `in`:/);
  });

  it('flags a thread per row of a row-major matrix, with sectors against the ideal', async () => {
    const text = kernel(
      '  int row = blockIdx.x * blockDim.x + threadIdx.x;\n  float acc = 0;\n  for (int c = 0; c < 64; ++c) acc += in[row * 64 + c];\n  out[row] = acc;',
    );
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.severity} ${r.span.start.line + 1}: ${r.text}`),
      ['warning 4: in[row * 64 + c]'],
    );
    assert.deepEqual(records[0].measure, { actual: 32, ideal: 4 });
    assert.match(records[0].message, /32 32-byte sectors where unit stride would touch 4/);
  });

  it('is quiet on unit stride, broadcasts, vectors and a loop index that follows the lane', async () => {
    const text = kernel(
      [
        '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
        '  float a = in[i] + in[0] + in[blockIdx.x];',
        '  float4 v = reinterpret_cast<const float4*>(in)[i];',
        '  for (int c = threadIdx.x; c < n; c += blockDim.x) a += in[c];',
        '  out[i] = a + v.x;',
      ].join('\n'),
    );
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });

  it('is a hint at stride 2, and absent where the stride is a run-time value or per-lane data', async () => {
    const text = kernel(
      [
        '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
        '  out[2 * i] = 0;',
        '  out[i * n] = 1;',
        '  int j = (int)in[i];',
        '  out[j] = 2;',
      ].join('\n'),
    );
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      ['uncoalesced-access hint 3: out[2 * i]'],
    );
  });

  it('is quiet where only widths below a warp run enough lanes to waste sectors (a store to column 0 of every row)', async () => {
    // A row of `n + pad` float2 holds a column `n / 2` only the lanes at `x == 0` store. Below 8
    // columns 8 or more lanes of a warp store, rows apart; at 64 columns and up one lane in each
    // warp does, alone in its request: one sector, all an 8-byte store can take.
    const column = [
      '__global__ void k(float2* out, const float2* in, int n, int pad) {',
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
      '  int x = i % (n / 2), y = i / (n / 2);',
      '  if (x == 0) out[y * (n + pad) + n / 2] = in[i];',
      '}',
      'void run(float2* o, const float2* i, int n, int p) { k<<<64, 256>>>(o, i, n, p); }',
      '',
    ].join('\n');
    assert.deepEqual(
      (await rulesOf(column)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
    // Its neighbour: a guard on a run-time width that leaves lone lanes only while the width is
    // small, and whole warps 64 floats apart at the widths data has.
    const strided = kernel(
      ['  int i = blockIdx.x * blockDim.x + threadIdx.x;', '  if (i < n) out[i * 64] = in[i];'].join('\n'),
    );
    assert.deepEqual(
      (await rulesOf(strided)).filter((g) => g.startsWith('uncoalesced')),
      ['uncoalesced-access warning 3: out[i * 64]'],
    );
  });

  it('gives no verdict where run-time sizes decide whether lanes share an address (a head index into rows of `C / NH`)', async () => {
    // With one head every lane of a batch reads the same address; with 12, 12 rows; with 32 or
    // more, one row per lane: the samples must reach across the sizes, not only their small corner.
    const text = [
      '__global__ void heads(float* out, const float* w, const float* in, int B, int T, int C, int NH) {',
      '  int idx = blockIdx.x * blockDim.x + threadIdx.x;',
      '  if (idx < B * T * NH) {',
      '    int h = idx % NH;',
      '    int t = (idx / NH) % T;',
      '    int b = idx / (NH * T);',
      '    int hs = C / NH;',
      '    float acc = 0.f;',
      '    for (int s = 0; s <= t; s++) {',
      '      const float* v = in + (b * T + s) * 2 * C + C + h * hs;',
      '      for (int k = 0; k < hs; k++) acc += w[s] * v[k];',
      '    }',
      '    out[idx] = acc;',
      '  }',
      '}',
      'void run(float* o, const float* w, const float* i, int B, int T, int C, int NH) { heads<<<64, 256>>>(o, w, i, B, T, C, NH); }',
      '',
    ].join('\n');
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });

  it('names no stride between lanes that moves with a run-time value (a thread per row of `T` elements)', async () => {
    const text = [
      '__global__ void rows(float* out, const float* in, int T) {',
      '  int r = blockIdx.x * blockDim.x + threadIdx.x;',
      '  if (r < T) {',
      '    for (int t = r; t < T; t++) {',
      '      const float* row = in + t * T;',
      '      float acc = 0.f;',
      '      for (int k = 0; k <= t; k++) acc += row[k];',
      '      out[t] = acc;',
      '    }',
      '  }',
      '}',
      'void run(float* o, const float* i, int T) { rows<<<64, 256>>>(o, i, T); }',
      '',
    ].join('\n');
    const [r] = (await recordsOf(text)).filter((x) => x.rule === 'uncoalesced-access');
    assert.match(
      r.message,
      /^Uncoalesced load from `row`: each warp request touches 32 32-byte sectors where unit stride would touch 4, so/,
    );
    assert.doesNotMatch(r.message, /elements of \d+ bytes apart/);
  });

  it('reads the element size from the pointer type and the block shape from the launch', async () => {
    const text = `__global__ void t(double* out, const double* in) {\n  out[threadIdx.y * 32 + threadIdx.x] = in[threadIdx.x * 32 + threadIdx.y];\n}\nvoid run(double* o, const double* i) { t<<<1, dim3(32, 32)>>>(o, i); }\n`;
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.text} ${r.measure?.actual}/${r.measure?.ideal}`),
      ['in[threadIdx.x * 32 + threadIdx.y] 32/8'],
    );
  });
});

describe('bank-conflict', () => {
  it('is 32-way for s[threadIdx.x * 32], with the padding advice on a 2-D tile', async () => {
    const text = kernel(
      [
        '  __shared__ float s[32 * 32];',
        '  __shared__ float t[32][32];',
        '  s[threadIdx.x * 32] = in[threadIdx.x];',
        '  t[threadIdx.x % 32][threadIdx.x / 32] = in[threadIdx.x];',
        '  __syncthreads();',
        '  out[threadIdx.x] = s[threadIdx.x] + t[0][threadIdx.x % 32];',
      ].join('\n'),
    );
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    assert.deepEqual(
      records.map((r) => `${r.severity} ${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}-way`),
      ['warning 4: s[threadIdx.x * 32] 32-way', 'warning 5: t[threadIdx.x % 32][threadIdx.x / 32] 32-way'],
    );
    assert.match(records[1].fix, /from 32 to 33 elements/);
  });

  it('advises the shortest row that removes the conflict: a padding the index never needed is taken away', async () => {
    // Half warps of a 16x16 block read rows 17 words apart: the second row's banks overlap the
    // first's in one place (2-way); rows of 16 words put the warp on 32 consecutive words.
    const text = [
      '__global__ void tile(float* out, const float* in, int n) {',
      '  __shared__ float b[16][17];',
      '  for (int t = 0; t < n; t++) { b[threadIdx.y][threadIdx.x] = in[t * 256 + threadIdx.y * n + threadIdx.x];',
      '  __syncthreads();',
      '  out[t * 256 + threadIdx.y * n + threadIdx.x] = b[threadIdx.x][threadIdx.y]; __syncthreads(); }',
      '}',
      'void run(float* o, const float* i, int n) { tile<<<1, dim3(16, 16)>>>(o, i, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    // The column read (line 5) is 2-way too: lanes 0 and 31 meet on bank 0 (words 0 and 17 * 15 + 1).
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}-way`),
      ['3: b[threadIdx.y][threadIdx.x] 2-way', '5: b[threadIdx.x][threadIdx.y] 2-way'],
    );
    // No row length clears the row store without making the column read worse (16 and 48 make it
    // 8-way): the general advice. Rows of 18 clear the column read and leave the store 2-way.
    assert.match(records[0].fix, /^Give neighbouring lanes/);
    assert.match(records[1].fix, /from 17 to 18 elements/);
    const rowsOnly = text.replace('= b[threadIdx.x][threadIdx.y]', '= b[threadIdx.y][threadIdx.x]');
    const [alone] = (await recordsOf(rowsOnly)).filter((r) => r.rule === 'bank-conflict');
    assert.match(alone.fix, /Make each row 16 elements instead of 17 \(`\[17\]` → `\[16\]`/);
  });

  it("gives a range of ways over a loop's steps, and only the most where a run-time guard decides how many lanes run", async () => {
    const text = [
      '__global__ void k(float* out, const float* in, int n) {',
      '  __shared__ float s[32 * 33];',
      '  s[threadIdx.x] = in[threadIdx.x];',
      '  __syncthreads();',
      '  float acc = 0.f;',
      '  for (int r = 0; r < 64; r++) {',
      '    if (threadIdx.x < n) acc += s[(threadIdx.x * 32 + r) % 1024];',
      '    for (int w = 2; w <= 16; w *= 2) acc += s[threadIdx.x * w % 1024];',
      '  }',
      '  out[threadIdx.x] = acc;',
      '}',
      'void run(float* o, const float* i, int n) { k<<<64, 32>>>(o, i, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.message.slice(0, r.message.indexOf(' instead'))}`),
      [
        '7: Up to 32-way bank conflict on the shared-memory load from `s`: lanes of a warp fall on the same bank at different addresses, so the request is served in up to 32 passes',
        '8: 2- to 16-way bank conflict on the shared-memory load from `s`: lanes of a warp fall on the same bank at different addresses, so the request is served in 16 passes',
      ],
    );
  });

  it("finds a conflict on a loop's steps where the last steps leave one or two lanes (conflict-free) to run", async () => {
    // A triangular factorisation: lane t works on row t while t > i; the lanes of a 16-float row
    // fall on two banks (8-way) until one or two lanes are left. The padded row is conflict-free.
    const text = [
      '__global__ void k(float* out) {',
      '  __shared__ float a[16][16];',
      '  __shared__ float b[16][17];',
      '  a[threadIdx.x][0] = 1.f;',
      '  b[threadIdx.x][0] = 1.f;',
      '  __syncthreads();',
      '  for (int i = 0; i < 15; i++) {',
      '    if (threadIdx.x > i) {',
      '      a[threadIdx.x][i] /= a[i][i];',
      '      b[threadIdx.x][i] /= b[i][i];',
      '    }',
      '    __syncthreads();',
      '  }',
      '  out[threadIdx.x] = a[threadIdx.x][3] + b[threadIdx.x][3];',
      '}',
      'void run(float* o) { k<<<1, 16>>>(o); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.message.slice(0, r.message.indexOf(' bank'))}`),
      ['4: a[threadIdx.x][0] 8-way', '9: a[threadIdx.x][i] Up to 8-way', '14: a[threadIdx.x][3] 8-way'],
    );
  });

  it('is quiet on the padded tile, on a row read and on a broadcast', async () => {
    const text = kernel(
      [
        '  __shared__ float t[32][33];',
        '  t[threadIdx.x % 32][threadIdx.x / 32] = in[threadIdx.x];',
        '  __syncthreads();',
        '  out[threadIdx.x] = t[threadIdx.x % 32][3] + t[threadIdx.x / 32][threadIdx.x % 32] + t[0][0];',
      ].join('\n'),
    );
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('bank')),
      [],
    );
  });

  it('counts 8-byte accesses a half warp at a time: doubles at unit stride are conflict-free, at stride 2 2-way', async () => {
    const text = `__global__ void d(double* out, int n) {\n  __shared__ double s[512];\n  for (int k = 0; k < n; k++) {\n  s[threadIdx.x] = 1.0;\n  s[2 * threadIdx.x] = 2.0;\n  __syncthreads();\n  out[threadIdx.x] += s[threadIdx.x];\n  }\n}\nvoid run(double* o, int n) { d<<<1, 256>>>(o, n); }\n`;
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}-way`),
      ['5: s[2 * threadIdx.x] 2-way'],
    );
  });

  it('counts 16-byte accesses a quarter warp at a time, and bytes of one word as one access (a broadcast)', async () => {
    // A float4 per lane at unit stride: each quarter warp's 8 lanes fill the 32 banks once (4 passes
    // for the warp, as any 16-byte access takes); two float4 apart, 2-way within each quarter warp.
    // Chars: four lanes share a word at unit stride, a word each four apart, 2-way eight apart.
    const text = [
      '__global__ void v(float4* out, char* flags, int n) {',
      '  __shared__ float4 s[512];',
      '  __shared__ char c[2048];',
      '  for (int k = 0; k < n; k++) {',
      '    s[threadIdx.x] = out[threadIdx.x];',
      '    s[2 * threadIdx.x] = out[threadIdx.x];',
      '    c[threadIdx.x] = 1; c[4 * threadIdx.x] = 2; c[8 * threadIdx.x] = 3;',
      '    __syncthreads();',
      '  }',
      '}',
      'void run(float4* o, char* f, int n) { v<<<1, 256>>>(o, f, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}-way`),
      ['6: s[2 * threadIdx.x] 2-way', '7: c[8 * threadIdx.x] 2-way'],
    );
  });

  it('is weighed by how often it runs: a conflict run once per thread for a few passes is not a finding', async () => {
    // Once per thread: a 2-way transpose of an int8 tile costs each warp one pass more, and a 4-way
    // read of a 32 x 4 reduction table that only warp 0 makes costs the block's warps 3/8 of a pass
    // each; 32-way once is 31 passes. In a loop each pass is paid every iteration.
    const text = [
      '__global__ void w(float* out, const float* in, int n) {',
      '  __shared__ signed char t[32][33];',
      '  __shared__ float r[32][4];',
      '  __shared__ float s[32 * 32];',
      '  t[threadIdx.x / 8][4 * (threadIdx.x % 8) + 1] = 1;',
      '  r[threadIdx.x % 32][threadIdx.x / 64] = in[threadIdx.x];',
      '  s[threadIdx.x * 32 % 1024] = in[threadIdx.x];',
      '  __syncthreads();',
      '  float v = 0.f;',
      '  if (threadIdx.x < 32) v = r[threadIdx.x][1];',
      '  for (int k = 0; k < n; k++) v += t[threadIdx.x / 8][4 * (threadIdx.x % 8) + 1];',
      '  out[threadIdx.x] = v;',
      '}',
      'void run(float* o, const float* i, int n) { w<<<64, 256>>>(o, i, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    assert.deepEqual(
      records.map((r) => `${r.severity} ${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}-way`),
      ['warning 7: s[threadIdx.x * 32 % 1024] 32-way', 'hint 11: t[threadIdx.x / 8][4 * (threadIdx.x % 8) + 1] 2-way'],
    );
  });

  it('weighs a conflict in a loop against one iteration of it: a tile copy beside a long product loop is a hint', async () => {
    // Each iteration of the outer loop copies a tile into `a` with an 8-way store (7 passes more per
    // warp) and then runs 16 x 16 multiply-adds that read it: the copy's conflict is a sliver of the
    // iteration. The same 8-way read in a loop of its own is most of that loop's body.
    const text = [
      '__global__ void g(float* out, const float* in, int n) {',
      '  __shared__ float a[64 * 32];',
      '  float acc = 0.f;',
      '  for (int t = 0; t < n; t++) {',
      '    a[(threadIdx.x % 8) * 128 + threadIdx.x / 8] = in[t * 256 + threadIdx.x];',
      '    __syncthreads();',
      '    for (int i = 0; i < 16; i++)',
      '      for (int j = 0; j < 16; j++) acc += a[i * 64 + j] * a[j * 64 + threadIdx.x % 32];',
      '    __syncthreads();',
      '  }',
      '  for (int t = 0; t < n; t++) acc += a[(threadIdx.x % 8) * 128 + t];',
      '  out[threadIdx.x] = acc;',
      '}',
      'void run(float* o, const float* i, int n) { g<<<64, 256>>>(o, i, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'bank-conflict');
    assert.deepEqual(
      records.map((r) => `${r.severity} ${r.span.start.line + 1} ${r.measure?.actual}-way`),
      ['hint 5 8-way', 'warning 11 8-way'],
    );
    assert.match(
      records[0].message,
      /(?:about \d+|under 1)% of the estimated work of one iteration of `for \(int t = 0; t < n; t\+\+\)`/,
    );
    assert.doesNotMatch(records[1].message, /estimated work/);
  });

  it("is a hint where the lane's loop reads consecutive aligned words the compiler may merge into a vector load", async () => {
    // As 4-byte loads, lanes 4 (or 8) words apart are 4-way (8-way); as the 16-byte loads the
    // compiler may make of a lane's run of 4 aligned words, served a quarter warp at a time, they
    // are conflict-free (2-way). One word off the vector boundary, it cannot merge them.
    const run = (index: string) =>
      kernel(
        [
          '  __shared__ float t[32 * 9];',
          '  t[threadIdx.x] = in[threadIdx.x];',
          '  __syncthreads();',
          '  float r = 0.f;',
          `  for (int i = 0; i < 4; ++i) r += t[${index}];`,
          '  out[threadIdx.x] = r;',
        ].join('\n'),
        '32',
      );
    const conflicts = async (index: string) =>
      (await recordsOf(run(index)))
        .filter((r) => r.rule === 'bank-conflict')
        .map((r) => `${r.severity} ${r.measure?.actual}-way ${/if the compiler merges/.test(r.message)}`);
    assert.deepEqual(await conflicts('threadIdx.x * 4 + i'), ['hint 4-way true']);
    assert.deepEqual(await conflicts('threadIdx.x * 8 + i'), ['hint 8-way true']);
    const [free] = (await recordsOf(run('threadIdx.x * 4 + i'))).filter((r) => r.rule === 'bank-conflict');
    assert.match(
      free.message,
      /16-byte accesses \(`LDS\.128`, served a quarter of a warp at a time\), they are conflict-free; the SASS tells which/,
    );
    assert.deepEqual(await conflicts('threadIdx.x * 8 + i + 1'), ['warning 8-way false']);
  });

  it('reads an operand of `?:` or `&&` as running only where its condition selects it', async () => {
    // The last step of a block reduction: lanes below blockDim.x / 32 read the table, the others
    // take 0. With 8 warps, 8 lanes 4 words apart: no conflict; read by every lane it is 4-way.
    const body = (read: string) =>
      [
        '  __shared__ float r[32][4];',
        '  r[threadIdx.x / 32][threadIdx.x % 4] = in[threadIdx.x];',
        '  __syncthreads();',
        '  float v = 0.f;',
        `  for (int k = 0; k < n; k++) v += ${read};`,
        '  out[threadIdx.x] = v;',
      ].join('\n');
    const guarded = kernel(body('threadIdx.x < blockDim.x / 32 ? r[threadIdx.x % 32][1] : 0.f'));
    const anded = kernel(body('(threadIdx.x < blockDim.x / 32 && r[threadIdx.x % 32][1] > 0.f)'));
    const every = kernel(body('r[threadIdx.x % 32][1]'));
    const banks = async (text: string) => (await rulesOf(text)).filter((g) => g.startsWith('bank'));
    assert.deepEqual(await banks(guarded), []);
    assert.deepEqual(await banks(anded), []);
    assert.deepEqual(await banks(every), ['bank-conflict warning 6: r[threadIdx.x % 32][1]']);
  });
});

describe('memory rules: struct-held pointers, members of an element, template instances', () => {
  it("reads a pointer a kernel's struct parameter holds with its declared element, per instance of a template", async () => {
    const text = [
      'template <typename T> struct Args { T* dst; const T* src; int stride; };',
      'template <typename T> __global__ void copy(Args<T> a) {',
      '  a.dst[threadIdx.x * a.stride] = a.src[threadIdx.x];',
      '  T* d = a.dst + blockIdx.x * 256;',
      '  d[threadIdx.x * 32] = a.src[threadIdx.x + 1];',
      '}',
      'void run(Args<float> a) { copy<float><<<8, 256>>>(a); }',
      '',
    ].join('\n');
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      ['uncoalesced-access warning 5: d[threadIdx.x * 32]'],
    );
  });

  it('counts a member of an element as its own bytes: `p[i].w` of a float4 is 16 sectors where 4 would do', async () => {
    const text = [
      'struct Pair { float a; float b; };',
      '__global__ void setw(float4* p, float2* v, Pair* q, const float* c, int n) {',
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
      '  if (i < n) {',
      '    p[i].w = c[i];',
      '    v[i].x = c[i];',
      '    q[i].b = c[i];',
      '    p[i] = make_float4(0.f, 0.f, 0.f, c[i]);',
      '  }',
      '}',
      'void run(float4* p, float2* v, Pair* q, const float* c, int n) { setw<<<n / 256, 256>>>(p, v, q, c, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}/${r.measure?.ideal}`),
      ['5: p[i].w 16/4', '6: v[i].x 8/4', '7: q[i].b 8/4'],
    );
  });

  it('reads the layout of a record a typedef names: `typedef struct { … } Point;`, `typedef struct tag { … } Name;`', async () => {
    // C's idiom: an anonymous record named by its typedef, or a tagged one given a second name.
    // A member 32 or 8 bytes apart per lane; the neighbour, an array of one member per point, is unit stride.
    const text = [
      'typedef struct { float weight; float *coord; long assign; float cost; } Point;',
      'typedef struct latLong { float lat; float lng; } LatLong;',
      '__global__ void k(Point* p, LatLong* d, const float* weight, float* out, int n) {',
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
      '  if (i < n) {',
      '    LatLong* here = d + i;',
      '    out[i] = p[i].weight + here->lat + weight[i];',
      '    out[n + i] = (float)p[i].assign;',
      '  }',
      '}',
      'void run(Point* p, LatLong* d, const float* w, float* o, int n) { k<<<n / 256, 256>>>(p, d, w, o, n); }',
      '',
    ].join('\n');
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}/${r.measure?.ideal}`),
      ['7: p[i].weight 32/4', '7: here->lat 8/4', '8: p[i].assign 32/8'],
    );
  });

  it('gives no verdict for a member of an element whose layout is not known', async () => {
    const text = [
      '__global__ void setw(real4* p, const float* c, int n) {',
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
      '  if (i < n) p[i].w = c[i];',
      '}',
      'void run(real4* p, const float* c, int n) { setw<<<n / 256, 256>>>(p, c, n); }',
      '',
    ].join('\n');
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });
});

describe('memory rules: instances from explicit instantiations, directives in a body without braces, partial warps', () => {
  it('reads a template kernel no launch names per explicit instantiation (the code that is compiled)', async () => {
    const text = (args: string) =>
      [
        'template <typename T, int S> __global__ void strided(T* out, const T* in) {',
        '  out[threadIdx.x * S] = in[threadIdx.x];',
        '}',
        `template __global__ void strided<${args}>(float*, const float*);`,
        '',
      ].join('\n');
    const [record] = (await recordsOf(text('float, 4'))).filter((r) => r.rule === 'uncoalesced-access');
    assert.equal(record?.text, 'out[threadIdx.x * S]');
    assert.equal(record.assumptions[0], 'for the instance strided<float, 4>');
    assert.match(record.assumptions[1], /for any block of 64, 128, 256, 512, 1024 threads/);
    assert.deepEqual(
      (await rulesOf(text('float, 1'))).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });

  it("reads a launch in a function template per that template's explicit instantiations, its types deduced", async () => {
    const text = (extra: string) =>
      [
        'template <typename T> __global__ void pick(T* out, const T* in) {',
        '  out[threadIdx.x] = in[threadIdx.x * 2];',
        '}',
        'template <typename T> void launch(T* out, const T* in, int n) { pick<T><<<n / 256, 256>>>(out, in); }',
        'template void launch(double* out, const double* in, int n);',
        extra,
        '',
      ].join('\n');
    const [record] = (await recordsOf(text(''))).filter((r) => r.rule === 'uncoalesced-access');
    // Doubles two apart: 16 bytes per lane where 8 are used, 16 sectors for the 8 of unit stride.
    assert.equal(`${record?.text} ${record?.measure?.actual}/${record?.measure?.ideal}`, 'in[threadIdx.x * 2] 16/8');
    assert.equal(record.assumptions[0], 'for the instance pick<double>');
    assert.match(record.assumptions[1], /for blocks of 256 threads \(the launches'\)/);
    // An explicit specialization for double replaces the template's body: nothing is read from it.
    const specialized = text(
      'template <> __global__ void pick(double* out, const double* in) { out[threadIdx.x] = in[threadIdx.x]; }',
    );
    assert.deepEqual(
      (await rulesOf(specialized)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });

  it('keeps a loop after `else` and a `#pragma unroll` line inside the else (the tail path one lane reaches)', async () => {
    const text = kernel(
      [
        '  int i = threadIdx.x * 32;',
        '  if (i + 32 < n) {',
        '    out[threadIdx.x] = in[threadIdx.x];',
        '  } else',
        '#pragma unroll',
        '    for (int k = 0; k < 32; k++)',
        '      if (i < n && i + k < n) out[i + k] = in[i + k];',
      ].join('\n'),
    );
    // Read as a statement of its own, the loop would run for every lane with i < n: 32 floats apart.
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
    const unguarded = text.replace('  } else\n#pragma unroll\n', '  }\n#pragma unroll\n');
    assert.deepEqual(
      (await rulesOf(unguarded)).filter((g) => g.startsWith('uncoalesced')),
      // A lane's 32 iterations write the 32 floats up to the next lane's: what is lost is requests
      // (a hint). `in[i + k]` is the same in every block as well, from L1 or L2: no finding.
      ['uncoalesced-access hint 8: out[i + k]'],
    );
  });

  it('judges a request a lane short of a warp by the bytes its lanes use: 31 float4 two apart are uncoalesced', async () => {
    const text = kernel(
      '  if (threadIdx.x % 32 < 31) out4[threadIdx.x * 2] = in4[threadIdx.x];',
      '256',
      'float4* out4, const float4* in4, int n',
    );
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    assert.deepEqual(
      records.map((r) => `${r.text} ${r.measure?.actual}/${r.measure?.ideal}`),
      ['out4[threadIdx.x * 2] 31/16'],
    );
  });
});

describe('memory rules: a kernel in a header, launched from the .cu that includes it', () => {
  it("reads the header's kernels with the main file's launches: their blocks and template arguments", async () => {
    const header = [
      '#pragma once',
      'template <int TILE> __global__ void tiles(float* out, const float* in) {',
      '  __shared__ float t[TILE * TILE];',
      '  t[threadIdx.x * TILE] = in[threadIdx.x];',
      '  __syncthreads();',
      '  out[threadIdx.x] = t[threadIdx.x];',
      '}',
      '',
    ].join('\n');
    const main = [
      '#include "tiles.cuh"',
      'void run(float* o, const float* i) {',
      '  const int T = 16;',
      '  tiles<T><<<64, 128>>>(o, i);',
      '}',
      '',
    ].join('\n');
    const index = new WorkspaceIndex();
    index.update('/ws/src/tiles.cuh', header);
    const alone = await analyzeSnippet(header, { workspace: index, path: '/ws/src/tiles.cuh' });
    // No launch in view: TILE is not known, and no verdict holds for every value it could take.
    assert.deepEqual(
      alone.memory.map((r) => r.rule),
      [],
    );
    index.update('/ws/src/run.cu', main);
    const facts = await analyzeSnippet(header, { workspace: index, path: '/ws/src/tiles.cuh' });
    assert.deepEqual(
      facts.memory.map((r) => `${r.rule} ${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}`),
      ['bank-conflict 4: t[threadIdx.x * TILE] 16'],
    );
    assert.deepEqual(facts.memory[0].assumptions, [
      'for the instance tiles<16>',
      "for blocks of 128 threads (the launches')",
      'launched from run.cu, which includes this file',
    ]);
  });
});

describe('memory rules: vector casts of a narrower element, row pitches', () => {
  it('reads `reinterpret_cast<float4*>(&a[k])[0]` as a 16-byte access at float k of `a`', async () => {
    const text = kernel(
      [
        '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
        '  float4 v = reinterpret_cast<const float4*>(&in[4 * i])[0];',
        '  float4 w = reinterpret_cast<const float4*>(&in[8 * i])[0];',
        '  out[i] = v.x + w.x;',
      ].join('\n'),
    );
    const records = (await recordsOf(text)).filter((r) => r.rule === 'uncoalesced-access');
    // Four floats apart a float4 is unit stride; eight apart, every other 16 bytes: 32 sectors for 16.
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}/${r.measure?.ideal}`),
      ['4: reinterpret_cast<const float4*>(&in[8 * i])[0] 32/16'],
    );
    assert.match(records[0].message, /^Uncoalesced load from `in`: .*neighbouring lanes 8 elements of 4 bytes apart/);
  });

  it('gives no verdict through a cast pointer kept in a local or moved by arithmetic (its steps count another element)', async () => {
    const text = kernel(
      [
        '  float4* p = reinterpret_cast<float4*>(&out[8 * threadIdx.x]);',
        '  p[0] = make_float4(0, 0, 0, 0);',
        '  float4* q = reinterpret_cast<float4*>(&out[8 * threadIdx.x]) + 1;',
        '  q[0] = make_float4(1, 1, 1, 1);',
      ].join('\n'),
    );
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });

  /** A block of 64 threads storing a 2-D tile of a row-major matrix whose row pitch `N` is a parameter: 8 floats per lane. */
  const tile = (perRow: number) =>
    [
      '__global__ void store(int N, float* C) {',
      `  const int col = threadIdx.x % ${perRow};`,
      `  const int row = threadIdx.x / ${perRow};`,
      '  for (int j = 0; j < 8; j += 4) {',
      '    float4 v = make_float4(1, 2, 3, 4);',
      `    reinterpret_cast<float4*>(&C[row * 8 * N + col * ${64 / perRow} + j])[0] = v;`,
      '  }',
      '}',
      'void run(int N, float* C) { store<<<N / 64, 64>>>(N, C); }',
      '',
    ].join('\n');

  it('flags a warp spanning several rows of a matrix whose pitch is a parameter, naming the pitch it assumes', async () => {
    // Eight lanes a row, each 32 bytes from the next: four rows of 8 sectors, 32 for 16. With `N` = 1
    // the rows would fold onto each other, but a row holds the 60 columns its lanes index.
    const [r] = (await recordsOf(tile(8))).filter((x) => x.rule === 'uncoalesced-access');
    assert.equal(r?.text, 'reinterpret_cast<float4*>(&C[row * 8 * N + col * 8 + j])[0]');
    assert.deepEqual(r.measure, { actual: 32, ideal: 16 });
    assert.deepEqual(r.assumptions, [
      "for blocks of 64 threads (the launches')",
      'assuming `N` ≥ 60 (it is the row pitch, and a row holds the 60 columns a warp indexes in it)',
    ]);
  });

  it('is quiet where the same tile is a warp per row (unit stride), and where a warp indexes one column (the stride is the pitch itself)', async () => {
    // A row of 64 floats is one float4 per lane, lanes 16 bytes apart: unit stride.
    const wide = await recordsOf(tile(64).replace('col * 1 + j', 'col * 4'));
    assert.deepEqual(
      wide.filter((x) => x.rule === 'uncoalesced-access').map((x) => x.text),
      [],
    );
    // One column, a lane per row: the lanes are `N` apart, and `N` may be 1 (nothing says it is more).
    const column = kernel('  out[(blockIdx.x * blockDim.x + threadIdx.x) * n + blockIdx.y] = 0;');
    assert.deepEqual(
      (await rulesOf(column)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });

  it('takes no pitch where the row reads another run-time value (`w * (i / w) + i % w` is `i`, unit stride)', async () => {
    // A field read twice is two unknowns here: the width that multiplies could be taken apart from the one that divides.
    const split = [
      'struct Shape { int w; int h; };',
      '__global__ void k(float* out, Shape s) {',
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
      '  out[s.h * s.w * 7 + s.w * (i / s.w) + i % s.w] = 0;',
      '}',
      'void run(float* o, Shape s) { k<<<64, 256>>>(o, s); }',
      '',
    ].join('\n');
    assert.deepEqual(
      (await rulesOf(split)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
  });
});

describe('memory rules: arguments every launch passes', () => {
  /** A row of `S` per thread, `Bc` floats long: `Bc` a parameter, given at the launches below. */
  const rows = (launches: string) =>
    [
      '__global__ void rows(float* out, int Bc, int n) {',
      '  extern __shared__ float S[];',
      '  for (int y = 0; y < Bc; y++) S[(Bc * threadIdx.x) + y] = out[y];',
      '  __syncthreads();',
      '  out[threadIdx.x] = S[threadIdx.x];',
      '}',
      `void run(float* o, int n) {\n  const int Bc = 32;\n${launches}\n}`,
      '',
    ].join('\n');

  it('reads a parameter every launch passes one constant as that constant, and names it', async () => {
    const records = (await recordsOf(rows('  rows<<<n, 32, 32 * 32 * 4>>>(o, Bc, n);'))).filter(
      (r) => r.rule === 'bank-conflict',
    );
    assert.deepEqual(
      records.map((r) => `${r.span.start.line + 1}: ${r.text} ${r.measure?.actual}`),
      ['3: S[(Bc * threadIdx.x) + y] 32'],
    );
    assert.deepEqual(records[0].assumptions, [
      "for blocks of 32 threads (the launches')",
      'with `Bc` = 32, as every launch in view passes',
    ]);
  });

  it('leaves it unknown where the launches pass different values, or a run-time one', async () => {
    for (const launches of [
      '  rows<<<n, 32, 32 * 32 * 4>>>(o, Bc, n);\n  rows<<<n, 32, 32 * 33 * 4>>>(o, Bc + 1, n);',
      '  rows<<<n, 32, 32 * 32 * 4>>>(o, n, n);',
    ])
      assert.deepEqual(
        (await recordsOf(rows(launches))).filter((r) => r.rule === 'bank-conflict').map((r) => r.text),
        [],
        launches,
      );
  });

  it('reads a pointer every launch passes as NULL as null: what it guards never runs', async () => {
    const text = [
      '__global__ void k(float* out, float* probs) {',
      '  if (probs != 0) probs[threadIdx.x * 32] = 1;',
      '  out[threadIdx.x] = 0;',
      '}',
      'void run(float* o, float* p) {',
      '  k<<<1, 256>>>(o, 0);',
      '}',
      '',
    ].join('\n');
    assert.deepEqual(
      (await rulesOf(text)).filter((g) => g.startsWith('uncoalesced')),
      [],
    );
    assert.deepEqual(
      (await rulesOf(text.replace('k<<<1, 256>>>(o, 0);', 'k<<<1, 256>>>(o, p);'))).filter((g) =>
        g.startsWith('uncoalesced'),
      ),
      ['uncoalesced-access warning 2: probs[threadIdx.x * 32]'],
    );
  });
});

describe('barrier-divergence: a loop over tokens by threadIdx.z', () => {
  /** A block's z-slices take tokens `tidx` in turn; each token is reduced over the slice's x and y, with a barrier. */
  const tokens = (start: string, step: string, block: string) =>
    [
      '__global__ void norm(float* out, const float* in, int N, int C) {',
      '  extern __shared__ float s_mean[];',
      `  for (int tidx = ${start}; tidx < N; tidx += ${step}) {`,
      '    if (threadIdx.x == 0) s_mean[threadIdx.y] = in[tidx * C + threadIdx.y];',
      '    __syncthreads();',
      '    out[tidx * C + threadIdx.x] = s_mean[0];',
      '  }',
      '}',
      `void run(float* o, const float* i, int N, int C, int z) { norm<<<80, ${block}, 1024>>>(o, i, N, C); }`,
      '',
    ].join('\n');

  it('is a hint where the slices of a block deeper than one run different numbers of tokens (the slices done leave the kernel)', async () => {
    const got = await rulesOf(
      tokens('blockIdx.x * blockDim.z + threadIdx.z', 'gridDim.x * blockDim.z', 'dim3(32, 4, z)'),
    );
    assert.deepEqual(
      got.filter((g) => g.startsWith('barrier')),
      ['barrier-divergence hint 5: __syncthreads()'],
    );
  });

  it('is quiet where the block is one slice deep, and where the loop steps by block', async () => {
    const flat = await rulesOf(
      tokens('blockIdx.x * blockDim.z + threadIdx.z', 'gridDim.x * blockDim.z', 'dim3(32, 4, 1)'),
    );
    assert.deepEqual(
      flat.filter((g) => g.startsWith('barrier')),
      [],
    );
    const byBlock = await rulesOf(tokens('blockIdx.x', 'gridDim.x', 'dim3(32, 4)'));
    assert.deepEqual(
      byBlock.filter((g) => g.startsWith('barrier')),
      [],
    );
  });
});

describe('memory rules: static constants of a class template instance', () => {
  const packed = (body: string, block: string) =>
    [
      'template <class ElementType> struct alignas(16) Packed128 {',
      '  static constexpr const int size = sizeof(int4) / sizeof(ElementType);',
      '  ElementType payload[size];',
      '};',
      'typedef float floatX;',
      'typedef Packed128<floatX> x128;',
      '__global__ void k(float* out) {',
      '  extern __shared__ float shared[];',
      body,
      '}',
      `void run(float* o) { k<<<1, ${block}, 4096>>>(o); }`,
      '',
    ].join('\n');

  it('reads `x128::size` through the alias and the instance: 4 floats in 16 bytes', async () => {
    const got = await rulesOf(
      packed(
        [
          '  for (int k = 0; k < 8; k++) shared[threadIdx.x * x128::size + threadIdx.y] = k;',
          '  if (threadIdx.y >= x128::size) return;',
          '  __syncthreads();',
          '  out[threadIdx.x] = shared[threadIdx.x];',
        ].join('\n'),
        'dim3(32, 8)',
      ),
    );
    // Lanes 4 words apart: 8 banks, 4 lanes on each; warps of rows 4 to 7 return before the barrier
    // (and leave the kernel: a hint).
    assert.deepEqual(got, [
      'bank-conflict warning 9: shared[threadIdx.x * x128::size + threadIdx.y]',
      'barrier-divergence hint 11: __syncthreads()',
    ]);
  });

  it("is quiet where the instance's value keeps every row at the barrier", async () => {
    const got = await rulesOf(
      packed('  if (threadIdx.y >= x128::size) return;\n  __syncthreads();\n  out[threadIdx.x] = 0;', 'dim3(32, 4)'),
    );
    assert.deepEqual(got, []);
  });
});

describe('barrier-divergence without a launch shape in view', () => {
  const kernel = (condition: string) =>
    `__global__ void k(float* out) {\n  if (${condition}) return;\n  __syncthreads();\n  out[threadIdx.x] = 0;\n}\n`;

  it('flags it where some of the common shapes split the block, naming one (a hint: the others have left)', async () => {
    const [r] = await recordsOf(kernel('threadIdx.y >= 8'));
    assert.equal(`${r?.rule} ${r?.severity}`, 'barrier-divergence hint');
    assert.match(r.message, /e\.g\. blocks of 16×16 threads/);
  });

  it('is quiet where none does', async () => {
    assert.deepEqual(await rulesOf(kernel('threadIdx.y >= 64')), []);
  });
});
