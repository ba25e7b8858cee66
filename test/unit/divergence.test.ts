/**
 * The labelled fixtures under test/fixtures/divergence: every `// expect:`
 * label must match the verdict on its line, every reported branch must sit on
 * a labelled line, and precision/recall of `divergent` are printed.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import {
  DIVERGENCE_FIXTURES,
  analyzeSource,
  runFixture,
  verdictOnLine,
  type FixtureRun,
} from '../support/divergence-fixtures';
import type { Branch } from '../../server/src/core/body/divergence';
import { divergenceFindings, severityNote } from '../../server/src/core/report/divergence-findings';
import { branchesForCli } from '../../server/src/cli/check-json';

const files = fs
  .readdirSync(DIVERGENCE_FIXTURES)
  .filter((f) => f.endsWith('.cu'))
  .sort();

describe('divergence: labelled fixtures', () => {
  const runs: FixtureRun[] = [];
  before(async () => {
    for (const f of files) runs.push(await runFixture(f));
  });

  it('has fixtures with labels of every kind', () => {
    assert.ok(files.length >= 3);
    const kinds = new Set(runs.flatMap((r) => r.labels.map((l) => l.expected)));
    for (const k of ['divergent', 'warp-uniform', 'tail', 'none']) assert.ok(kinds.has(k as never), `no ${k} label`);
  });

  for (const file of files) {
    it(`${file}: every label matches its branch`, () => {
      const run = runs.find((r) => r.file === file)!;
      assert.ok(run.labels.length > 0);
      const wrong = run.labels
        .map((l) => ({ l, got: verdictOnLine(run.branches, l.line) }))
        .filter(({ l, got }) => got !== l.expected)
        .map(({ l, got }) => `${file}:${l.line + 1} expected ${l.expected}, got ${got}: ${l.text}`);
      assert.deepEqual(wrong, []);
    });

    it(`${file}: no branch outside the labelled lines`, () => {
      const run = runs.find((r) => r.file === file)!;
      const labelled = new Set(run.labels.map((l) => l.line));
      const extra = run.branches
        .filter((b) => !labelled.has(b.span.start.line))
        .map((b) => `${file}:${b.span.start.line + 1} ${b.construct} ${b.kind} \`${b.condition}\``);
      assert.deepEqual(extra, []);
    });
  }

  it('reports precision and recall of `divergent` (no false divergent)', () => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    const byKind = new Map<string, number>();
    for (const run of runs) {
      for (const l of run.labels) {
        const got = verdictOnLine(run.branches, l.line);
        byKind.set(l.expected, (byKind.get(l.expected) ?? 0) + 1);
        if (got === 'divergent' && l.expected === 'divergent') tp++;
        else if (got === 'divergent') fp++;
        else if (l.expected === 'divergent') fn++;
      }
    }
    const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
    const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
    console.log(
      `      divergent: precision ${precision.toFixed(3)} (${tp}/${tp + fp}), recall ${recall.toFixed(3)} (${tp}/${tp + fn}); labels: ${[...byKind].map(([k, n]) => `${n} ${k}`).join(', ')}`,
    );
    assert.equal(fp, 0, 'a false divergent');
    assert.ok(recall >= 0.9, `recall ${recall}`);
  });
});

describe('divergence: verdicts and wording', () => {
  const kernel = (body: string, launch = '') =>
    `__global__ void k(float* buf, int n) {\n${body}\n}\n${launch ? `void h(float* b, int n) { ${launch} }\n` : ''}`;
  const only = (branches: Branch[], construct = 'if') => {
    const found = branches.filter((b) => b.construct === construct);
    assert.equal(found.length, 1, JSON.stringify(branches.map((b) => [b.construct, b.condition])));
    return found[0];
  };

  it('explains `t % 2 == 0` with no else as in the ux sketch: two groups of 16, 50% lanes, no extra issue slots', async () => {
    const b = only(
      await analyzeSource(
        kernel('  int t = threadIdx.x;\n  if (t % 2 == 0) buf[t] += buf[t + 1] * 0.5f;', 'k<<<1, 256>>>(b, n);'),
      ),
    );
    assert.equal(b.kind, 'divergent');
    assert.equal(b.laneActivity, 0.5);
    assert.deepEqual(b.split?.groups, [16, 16]);
    assert.equal(b.split?.warps, 'every warp');
    assert.equal(b.efficiency, 1);
    assert.equal(b.source.text, 'int t = threadIdx.x;');
    assert.equal(b.source.span.start.line, 1);
    assert.match(
      b.explanation,
      /^`t % 2 == 0` splits every warp into two groups of 16 lanes; the idle lanes wait through the body \(about \d+ instructions, estimated from the syntax\) \(50% of the lanes active there\)\. The else path is empty, so no extra issue slots are paid\./,
    );
    assert.equal(b.costSource, 'syntax-estimate');
    assert.ok(b.assumptions.some((a) => a.startsWith('path costs are estimates')));
  });

  it('names no groups a run-time value decides: `lane < k` splits the warp 3 against 29 for one k, 16 and 16 for another', async () => {
    const b = only(
      await analyzeSource(
        kernel('  int t = threadIdx.x;\n  if (t % n == 0) buf[t] += buf[t + 1] * 0.5f;', 'k<<<1, 256>>>(b, n);'),
      ),
    );
    assert.equal(b.kind, 'divergent');
    assert.equal(b.split?.groupsVary, true);
    assert.match(b.explanation, /^`t % n == 0` splits every warp; the idle lanes wait/);
  });

  it('quotes where the thread index comes from in code only the device pass compiles (`#if __CUDA_ARCH__`)', async () => {
    const b = only(
      await analyzeSource(
        kernel(
          '#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n  int t = threadIdx.x;\n  if (t % 2 == 0) buf[t] += buf[t + 1] * 0.5f;\n#endif',
          'k<<<1, 256>>>(b, n);',
        ),
      ),
    );
    assert.equal(b.source.text, 'int t = threadIdx.x;');
    assert.equal(b.source.span.start.line, 2);
  });

  it('quotes a condition continued over lines with a backslash as the code it is, on one line', async () => {
    const b = only(
      await analyzeSource(
        kernel(
          '  int t = threadIdx.x \\\n    + 0;\n  if (t % 2 \\\n      == 0) buf[t] += buf[t + 1] * 0.5f;',
          'k<<<1, 256>>>(b, n);',
        ),
      ),
    );
    assert.equal(b.condition, 't % 2 == 0');
    assert.equal(b.source.text, 'int t = threadIdx.x + 0;');
    assert.match(b.explanation, /^`t % 2 == 0` splits every warp/);
  });

  it('says nothing alarming about `if (i < n)` on a global index: tail guard', async () => {
    const b = only(
      await analyzeSource(kernel('  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) buf[i] = 0;')),
    );
    assert.equal(b.kind, 'tail');
    assert.equal(b.explanation, 'tail guard: splits at most the last warp.');
    assert.equal(b.suggestion, null);
  });

  it('uses the launch block size: `threadIdx.y == 0` is warp-uniform with 32×8 and divergent with 16×16', async () => {
    const body = '  if (threadIdx.y == 0) buf[threadIdx.x] = 1.0f;';
    const wide = only(await analyzeSource(kernel(body, 'k<<<1, dim3(32, 8)>>>(b, n);')));
    assert.equal(wide.kind, 'warp-uniform');
    assert.match(wide.explanation, /for the launched block sizes/);
    const narrow = only(await analyzeSource(kernel(body, 'k<<<1, dim3(16, 16)>>>(b, n);')));
    assert.equal(narrow.kind, 'divergent');
    assert.equal(narrow.split?.warps, 'warp 0 of each block');
  });

  it('says what a warp-uniform verdict assumes when no launch gives the block size', async () => {
    const b = only(await analyzeSource(kernel('  if (threadIdx.x < 64) buf[threadIdx.x] = 1.0f;')));
    assert.equal(b.kind, 'warp-uniform');
    assert.match(b.explanation, /assuming blockDim.x is a multiple of 32/);
    assert.ok(
      b.assumptions.some((a) => /no launch of k with a known block size/.test(a)),
      b.assumptions.join('|'),
    );
  });

  it('with 48-thread blocks `threadIdx.x < 64` is still uniform per warp, `threadIdx.x < 40` is not', async () => {
    const branches = await analyzeSource(
      kernel('  if (threadIdx.x < 64) buf[0] = 1;\n  if (threadIdx.x < 40) buf[1] = 1;', 'k<<<1, 48>>>(b, n);'),
    );
    assert.deepEqual(
      branches.map((b) => b.kind),
      ['warp-uniform', 'divergent'],
    );
  });

  it('explains the reduction loop: divergent only in the last steps (s < 32)', async () => {
    const b = only(
      await analyzeSource(
        kernel(
          '  unsigned tid = threadIdx.x;\n  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {\n    if (tid < s) buf[tid] += buf[tid + s];\n    __syncthreads();\n  }',
          'k<<<8, 512>>>(b, n);',
        ),
      ),
    );
    assert.equal(b.kind, 'divergent');
    assert.equal(b.split?.when, 's < 32 (s = 16, 8, 4, 2, 1)');
    assert.equal(b.split?.warps, 'warp 0 of each block');
    assert.match(b.suggestion ?? '', /__shfl_down_sync/);
    assert.ok(b.assumptions.includes('s takes 256, 128, 64, …, 2, 1 with 512-thread blocks'), b.assumptions.join('|'));
  });

  it('lists early return, break, continue, ternary, switch and short-circuit branches', async () => {
    const branches = await analyzeSource(
      kernel(
        [
          '  int t = threadIdx.x;',
          '  for (int k = 0; k < n; ++k) {',
          '    if (t == k) break;',
          '    if (t & 1) continue;',
          '    buf[k] += 1.0f;',
          '  }',
          '  float v = t < 5 ? 1.0f : 2.0f;',
          '  switch (t % 4) { case 0: v += 1; break; default: v -= 1; }',
          '  if (t > 3 && buf[t] > 0) v = 0;',
          '  if (t == 7) return;',
          '  buf[t] = v;',
        ].join('\n'),
        'k<<<1, 128>>>(b, n);',
      ),
    );
    const constructs = branches.map((b) => `${b.construct}:${b.kind}`);
    for (const c of [
      'break:divergent',
      'continue:divergent',
      'ternary:divergent',
      'switch:divergent',
      'short-circuit:divergent',
      'if:divergent',
      'return:divergent',
    ])
      assert.ok(constructs.includes(c), `${c} missing from ${constructs.join(', ')}`);
    const ret = branches.find((b) => b.construct === 'return')!;
    assert.equal(ret.paths[0].label, 'rest of the function');
    assert.equal(ret.laneActivity, 0.969);
  });

  it('does not list branches that depend on no thread index', async () => {
    const branches = await analyzeSource(
      kernel(
        '  if (n > 4) buf[0] = 1;\n  for (int k = 0; k < n; ++k) buf[k] = 0;\n  if (blockIdx.x == 0) buf[1] = 2;\n  int w = gridDim.x > 2 ? 1 : 0;',
      ),
    );
    assert.deepEqual(branches, []);
  });
});

describe('divergence: findings and CLI', () => {
  it('warns on divergent branches whose idle lanes cost a material share of the kernel, hints below, nothing for a leader; related information at the thread-index origin', async () => {
    const text = [
      '__global__ void k(float* buf, int n) {',
      '  int t = threadIdx.x;',
      '  int lane = t % 32;',
      '  int i = blockIdx.x * blockDim.x + t;',
      '  if (i < n) buf[i] = buf[i] * 2.0f + 1.0f;',
      '  if (t / 32 == 1) buf[t] = buf[t] * 3.0f + buf[t + 1] * 0.5f;',
      '  for (int r = 0; r < n; ++r) if (t % 2 == 0) buf[t] = buf[t] * 3.0f + buf[t + 1] * 0.5f;',
      '  if (lane == 0) buf[t] = 1.0f;',
      '  if (t < 3) buf[t] = 0;',
      '}',
      'void h(float* b, int n) { k<<<4, 256>>>(b, n); }',
    ].join('\n');
    const branches = await analyzeSource(text);
    assert.deepEqual(
      branches.map((b) => b.kind),
      ['tail', 'warp-uniform', 'divergent', 'divergent', 'divergent'],
    );
    // half of each warp idles through 8 slots each time round its loop: 4 slots of the kernel's 48; the leader's store costs
    // the warp nothing it would not pay anyway; three lanes leave 29 idle through 2 slots
    assert.deepEqual(
      branches.slice(2).map((b) => [b.idleIssueSlots, b.kernelIssueSlots]),
      [
        [4, 48],
        [0, 48],
        [1.812, 48],
      ],
    );
    const findings = divergenceFindings(branches, { minCostThreshold: 4, minSharePercent: 8 });
    assert.deepEqual(
      findings.map((x) => [x.span.start.line, x.severity]),
      [
        [6, 'warning'],
        [8, 'hint'],
      ],
    );
    const f = findings[0];
    assert.equal(f.code, 'divergent-branch');
    assert.equal(f.message, branches[2].explanation);
    assert.equal(f.related.length, 1);
    assert.equal(f.related[0].span.start.line, 1);
    assert.match(f.related[0].message, /int t = threadIdx.x;/);
    // lower thresholds do not make three lanes' store a warning: a path for a few lanes is worth
    // rewriting only when long (three times the threshold); the lane-0 leader is never reported
    const low = divergenceFindings(branches, { minCostThreshold: 1, minSharePercent: 0 });
    assert.deepEqual(
      low.map((x) => [x.span.start.line, x.severity]),
      [
        [6, 'warning'],
        [8, 'hint'],
      ],
    );
    assert.match(
      severityNote(branches[4], { minCostThreshold: 1, minSharePercent: 0 })!,
      /but only warp 0 of each block splits, 0.2 slots per warp over the block/,
    );
    assert.match(
      severityNote(branches[4], { minCostThreshold: 0.1, minSharePercent: 0 })!,
      /only a few lanes of the warp run the path \(a leader's work\): it is worth rewriting when it holds a loop the idle lanes could share and costs 0.3 slots or more/,
    );
    // however low the thresholds, three lanes' straight-line store has no work to hand the idle lanes
    const lower = divergenceFindings(branches, { minCostThreshold: 0.05, minSharePercent: 0 });
    assert.deepEqual(
      lower.map((x) => [x.span.start.line, x.severity]),
      [
        [6, 'warning'],
        [8, 'hint'],
      ],
    );
    // a larger kernel around the same branch makes it a hint
    const share = divergenceFindings(branches, { minCostThreshold: 4, minSharePercent: 10 });
    assert.deepEqual(
      share.map((x) => [x.span.start.line, x.severity]),
      [
        [6, 'hint'],
        [8, 'hint'],
      ],
    );
  });

  it('warns of work for a few lanes per group only where it is a loop the idle lanes could share', async () => {
    // One lane in each group of four writes what the group reduced: every lane of the group holds the
    // same sum, so the idle ones have nothing to take over. One lane in four walking a row alone is
    // work the other three could split.
    const text = [
      '__global__ void k(const float* in, float* out, int n) {',
      '  int t = threadIdx.x;',
      '  float s = in[blockIdx.x * blockDim.x + t];',
      '  for (int o = 1; o < 4; o <<= 1) s += __shfl_xor_sync(0xffffffff, s, o);',
      '  if (t % 4 == 0) {',
      '    float r = rsqrtf(s + 1e-6f) * in[t / 4] + in[t / 4 + 1] * s - in[t / 4 + 2];',
      '    out[blockIdx.x * 64 + t / 4] = r * r + s * 0.5f - r / (s + 1.0f) + in[t / 4 + 3] * r;',
      '  }',
      '  if (t % 4 == 1) {',
      '    float acc = 0.0f;',
      '    for (int j = 0; j < n; j++) acc += in[j * 64 + t / 4] * in[j] - in[j + n] * in[j * 64 + t / 4 + 1];',
      '    out[blockIdx.x * 64 + t / 4] = acc;',
      '  }',
      '  if (t % 4 == 2) {',
      '    char tag[16];',
      '    for (int j = 0; j < n % 15; j++) tag[j] = (char)(65 + (j * 7 + n) % 26) + (j * 3 ^ n) % 2;',
      '    tag[n % 15] = 0;',
      '    printf("%s %f\\n", tag, s * 2.0f + rsqrtf(s + 3.0f) - s / (s + 1.0f) * 0.25f);',
      '  }',
      '}',
      'void h(const float* i, float* o, int n) { k<<<4, 256>>>(i, o, n); }',
    ].join('\n');
    const branches = (await analyzeSource(text)).filter((b) => b.construct === 'if');
    // The third lane's loop fills its own array for its message: nothing the idle lanes could take.
    assert.deepEqual(
      branches.map((b) => [b.span.start.line, b.kind, b.laneActivity, !!b.paths[0].loops]),
      [
        [4, 'divergent', 0.25, false],
        [8, 'divergent', 0.25, true],
        [13, 'divergent', 0.25, false],
      ],
    );
    assert.ok(branches[0].idleIssueSlots >= 12, `the leader's path is long: ${branches[0].idleIssueSlots} slots`);
    const findings = divergenceFindings(branches, { minCostThreshold: 4, minSharePercent: 8 });
    assert.deepEqual(
      findings.map((x) => [x.span.start.line, x.severity]),
      [
        [4, 'hint'],
        [8, 'warning'],
        [13, 'hint'],
      ],
    );
    assert.match(severityNote(branches[0])!, /a leader's work\): it is worth rewriting when it holds a loop/);
  });

  it('reports nothing for paths run one after the other at 100% issue efficiency (one of them empty), and says why in the hover', async () => {
    const text = [
      '__global__ void k(float* buf, float* out) {',
      '  int t = threadIdx.x;',
      '  float v = buf[t];',
      '  if (v == 0.0f) {} else { out[t] = v * 2.0f + 1.0f; }',
      '  if (t % 2 == 0) out[t] = 0; else out[t] = v * 3.0f + 1.0f;',
      '}',
      'void h(float* b, float* o) { k<<<4, 256>>>(b, o); }',
    ].join('\n');
    const branches = await analyzeSource(text);
    const [empty, both] = branches;
    assert.equal(empty.efficiency, 1);
    assert.ok(both.efficiency < 1);
    const findings = divergenceFindings(branches, { minCostThreshold: 0, minSharePercent: 0 });
    assert.deepEqual(
      findings.map((x) => x.span.start.line),
      [4],
    );
    assert.equal(
      severityNote(empty),
      'Not reported: one of its paths is empty, so the warp issues no more than if its lanes agreed (issue efficiency 100%).',
    );
  });

  it('hints, not warns, at a split that happens only for some values of a kernel argument, and says which', async () => {
    const body = Array.from(
      { length: 12 },
      (_, i) => `  out[row * n + col + ${i}] = out[row * n + col] * ${i + 2}.0f + 1.0f;`,
    );
    const text = [
      '__global__ void rows(float* out, int n, int mask) {',
      '  int lane = threadIdx.x % 32;',
      '  int row = blockIdx.x * 8 + threadIdx.x / 32;',
      '  int col = lane * 4;',
      '  if ((lane & mask) != 0) return;',
      ...body,
      '  if (lane >= 16) return;',
      ...body,
      '}',
      'void h(float* o, int n, int m) { rows<<<64, 256>>>(o, n, m); }',
    ].join('\n');
    const branches = await analyzeSource(text);
    const [chosen, half] = branches;
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [
        ['(lane & mask) != 0', 'divergent'],
        ['lane >= 16', 'divergent'],
      ],
    );
    assert.deepEqual(chosen.split?.onlyFor, ['mask']);
    assert.equal(half.split?.onlyFor, undefined);
    assert.deepEqual(
      divergenceFindings(branches).map((f) => [f.span.start.line, f.severity]),
      [
        [4, 'hint'],
        [17, 'warning'],
      ],
    );
    assert.match(
      severityNote(chosen)!,
      /the warps split only for some values of `mask`, which the source does not fix/,
    );
    assert.deepEqual(
      branchesForCli(branches).map((b) => b.splitBy),
      ['run-time-value', 'thread-index'],
    );
  });

  it("hints, not warns, at a split only the blocks the block index picks make (one task per thread, a 2-D grid's diagonal)", async () => {
    const text = [
      '__global__ void tasks(int* a, float* d, const float* s, int leaf, int n) {',
      '  const int t = threadIdx.x + blockIdx.x * blockDim.x;',
      '  if (t == 0) {',
      '    a[leaf] = n - 1; a[n] = n - 1; a[n + 1] = ~leaf; a[n + 2] = ~n;',
      '    d[leaf] = s[0] * s[1] + s[2] * s[3] - s[4] / (s[5] + 1.0f);',
      '  } else if (t == 1) {',
      '    d[n - 1] = s[6] * s[7] + s[8] * s[9] - s[10] / (s[11] + 1.0f);',
      '    d[n] = s[12] * s[13] + s[14] * s[15] - s[16] / (s[17] + 1.0f);',
      '  } else if (t == 2) {',
      '    d[n + 1] = s[18] * s[19] + s[20];',
      '  }',
      '}',
      '__global__ void diagonal(float* out, const float* in, int w) {',
      '  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;',
      '  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;',
      '  float v;',
      '  if (x != y) {',
      '    float p = in[y * w + x] * 2.0f + in[x * w + y];',
      '    float q = in[x] * in[y] - p * p;',
      '    v = sqrtf(p * p + q * q) / (p + q + 1.0f) + expf(-p) * logf(q + 2.0f);',
      '  } else {',
      '    v = in[x] * 0.5f + 1.0f;',
      '  }',
      '  out[y * w + x] = v;',
      '}',
      '__global__ void bitonic(float* v) {',
      '  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;',
      '  for (unsigned j = 16; j > 0; j /= 2) {',
      '    unsigned ixj = i ^ j;',
      '    if (ixj > i) {',
      '      float a = v[i], b = v[ixj];',
      '      if (a > b) { v[i] = b; v[ixj] = a; }',
      '    }',
      '    __syncthreads();',
      '  }',
      '}',
      'void h(int* a, float* d, const float* s, float* o, const float* i, int w) {',
      '  tasks<<<3, 64>>>(a, d, s, 1, 9);',
      '  diagonal<<<dim3(w / 16, w / 16), dim3(16, 16)>>>(o, i, w);',
      '  bitonic<<<w / 256, 256>>>(o);',
      '}',
    ].join('\n');
    const branches = (await analyzeSource(text)).filter(
      (b) => b.kind === 'divergent' && b.construct !== 'short-circuit',
    );
    assert.deepEqual(
      branches.map((b) => [b.condition, !!b.split?.someBlocks]),
      [
        ['t == 0', true],
        ['t == 1', true],
        ['t == 2', true],
        ['x != y', true],
        ['ixj > i', false],
        ['a > b', false],
      ],
    );
    // Only block 0's first warp splits at `t == 0`; only the diagonal's blocks at `x != y`: each split
    // costs what it says, in the warps that make it, but how many of the launch's warps those are
    // depends on the grid. A bitonic step on the global index splits every block the same way.
    // (`t == 2` has an empty else and one lane on its path: nothing to report.)
    assert.deepEqual(
      divergenceFindings(branches, { minCostThreshold: 1, minSharePercent: 1 }).map((f) => [
        f.span.start.line,
        f.severity,
      ]),
      [
        [2, 'hint'],
        [5, 'hint'],
        [16, 'hint'],
        [29, 'warning'],
        [31, 'hint'],
      ],
    );
    assert.match(branches[3].explanation, /^`x != y` splits every warp of some blocks \(/);
    assert.match(severityNote(branches[0])!, /only some blocks split \(the block index decides which/);
  });

  it('counts a path one lane takes as issued once in a warp of fewer than 32 lanes too (a leader in a 2-thread block)', async () => {
    const text = [
      '__global__ void print(int depth, int uid) {',
      '  if (threadIdx.x == 0) {',
      '    char buffer[32];',
      '    for (int i = 0; i < depth; ++i) { buffer[3 * i] = 124; buffer[3 * i + 1] = 32; buffer[3 * i + 2] = 32; }',
      '    buffer[3 * depth] = 0;',
      '    printf("%sBLOCK %d at depth %d of %d\\n", buffer, uid, depth, uid * depth + 1);',
      '  }',
      '}',
      'void h(int d) { print<<<2, 2>>>(d, 0); }',
    ].join('\n');
    const [leader] = await analyzeSource(text);
    assert.deepEqual([leader.kind, leader.split?.groups], ['divergent', [1, 1]]);
    // The else path is empty and the body is one lane's: regrouping the lanes gives nothing back.
    assert.equal(leader.idleIssueSlots, 0);
    assert.deepEqual(divergenceFindings([leader], { minCostThreshold: 0, minSharePercent: 0 }), []);
  });

  it('keeps an outer lane-stride index passed to a call in an inner loop with an early exit as it is (a tail, not per-lane data)', async () => {
    // A row view called for its elements, as mdspan-like views are: the call takes the outer index
    // by value, and the inner search leaves at a different step in each lane.
    const text = [
      'template <typename T> struct view {',
      '  T* data_;',
      '  int cols_;',
      '  __device__ int extent(int d) const { return d == 0 ? 1 : cols_; }',
      '  __device__ T operator()(int r, int c) const { return data_[r * cols_ + c]; }',
      '};',
      '__global__ void recall(view<const int> found, view<const int> ref, int* out) {',
      '  const int row = blockIdx.x;',
      '  const int lane = threadIdx.x % 32;',
      '  int score = 0;',
      '  for (int col = lane; col < found.extent(1); col += 32) {',
      '    for (int k = 0; k < ref.extent(1); k++) {',
      '      if (found(row, col) == ref(row, k)) {',
      '        score += 1;',
      '        break;',
      '      }',
      '    }',
      '  }',
      '  out[blockIdx.x * 32 + lane] = score;',
      '}',
      'void h(view<const int> a, view<const int> b, int* o, int n) { recall<<<n, 32>>>(a, b, o); }',
    ].join('\n');
    const branches = await analyzeSource(text);
    assert.deepEqual(
      branches.map((b) => [b.span.start.line, b.kind, b.split?.dataDependent ?? false]),
      [
        [10, 'tail', false],
        [12, 'divergent', true],
      ],
    );
  });

  it('calls a bound the kernel reads at run time a tail where each split warp changes once (the end of its row)', async () => {
    const branches = await analyzeSource(
      [
        '__global__ void rows(float* out, int n) {',
        '  int lane = threadIdx.x % 32;',
        '  int row = blockIdx.x * 8 + threadIdx.x / 32;',
        '  if (lane * 4 >= n) return;',
        '  out[row * n + lane * 4] = 1.0f;',
        '}',
        'void h(float* o, int n) { rows<<<64, 256>>>(o, n); }',
      ].join('\n'),
    );
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [['lane * 4 >= n', 'tail']],
    );
  });

  it('keeps a split that walks through every tile of a loop divergent, and a loop over the row a tail', async () => {
    const branches = await analyzeSource(
      [
        '#include <cooperative_groups.h>',
        'namespace cg = cooperative_groups;',
        'template <typename T, int padded>',
        '__global__ void rotary(T* q, int rotary_dim) {',
        '  constexpr int vec = 16 / sizeof(T);',
        '  cg::thread_block tb = cg::this_thread_block();',
        '  cg::thread_block_tile<padded / vec> head = cg::tiled_partition<padded / vec>(tb);',
        '  const int base = head.thread_rank() * vec;',
        '  const int half = rotary_dim / 2;',
        '  for (int i = 0; i < vec; i++) {',
        '    q[base + i] = base + i >= half ? q[base + i - half] : -q[base + i + half];',
        '  }',
        '  for (int k = threadIdx.x % 32; k < rotary_dim; k += 32) q[k] = 0;',
        '}',
        'void h(float* q, int r) { rotary<float, 128><<<1, 256>>>(q, r); }',
      ].join('\n'),
    );
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [
        ['base + i >= half', 'divergent'],
        ['k < rotary_dim', 'tail'],
      ],
    );
    // `16 / sizeof(T)` is 4 in this instance, so the tile is 32 lanes and its rank is the lane: the
    // split comes from the thread index, for the values of `rotary_dim` that fall inside a tile.
    assert.deepEqual(branches[0].split?.onlyFor, ['rotary_dim']);
    assert.equal(branchesForCli(branches)[0].splitBy, 'run-time-value');
  });

  it("reads a class template's member type through the specialization its arguments select (a vector type per element type and head size)", async () => {
    const kernel = (launch: string) =>
      [
        'template <typename T, int Dh> struct Vec_ {};',
        'template <> struct Vec_<float, 64> { using Type = float2; };',
        'template <> struct Vec_<float, 128> { using Type = float4; };',
        'template <typename T> struct Vec_<T, 32> { typedef T Type; };',
        'using fp8_4_t = __nv_fp8x4_e4m3;',
        'template <> struct Vec_<__nv_fp8_e4m3, 128> { using Type = fp8_4_t; };',
        'template <typename T, int Dh>',
        '__global__ void attend(T* q, const T* k) {',
        '  using V = typename Vec_<T, Dh>::Type;',
        '  constexpr int VEC = sizeof(V) / sizeof(T);',
        '  constexpr int VECS = Dh / VEC;',
        '  const bool masked = threadIdx.x >= VECS;',
        '  if (!masked) q[threadIdx.x * VEC] = k[threadIdx.x * VEC];',
        '}',
        launch,
      ].join('\n');
    const cases: Array<[string, string | null]> = [
      // float4: 32 vectors of 128 floats, one full warp.
      ['void h(float* q, const float* k) { attend<float, 128><<<1, 64>>>(q, k); }', 'warp-uniform'],
      // float2: 32 vectors of 64 floats, one full warp.
      ['void h(float* q, const float* k) { attend<float, 64><<<1, 64>>>(q, k); }', 'warp-uniform'],
      // The partial specialization: T itself, 32 vectors.
      ['void h(double* q, const double* k) { attend<double, 32><<<1, 64>>>(q, k); }', 'warp-uniform'],
      // A namespace-scope alias of cuda_fp8.h's four-byte vector: 4 elements, 32 vectors.
      [
        'void h(__nv_fp8_e4m3* q, const __nv_fp8_e4m3* k) { attend<__nv_fp8_e4m3, 128><<<1, 64>>>(q, k); }',
        'warp-uniform',
      ],
      // The primary template declares no `Type`: the vector size is unknown, and so is the split.
      ['void h(double* q, const double* k) { attend<double, 48><<<1, 64>>>(q, k); }', null],
    ];
    for (const [launch, kind] of cases) {
      const branches = await analyzeSource(kernel(launch));
      const masked = branches.find((b) => b.condition === '!masked');
      if (kind !== null) assert.equal(masked?.kind, kind, launch);
      // Unresolved: a split only for some values of the size nothing computes, never a verdict.
      else assert.deepEqual([masked?.kind, masked?.split?.onlyFor], ['divergent', ['sizeof']], launch);
    }
  });

  it("reads a class's static constexpr member as one constant inside its methods, whatever lanes the object was made from", async () => {
    const branches = await analyzeSource(
      [
        'template <int TILE, int BLOCK>',
        'struct Loader {',
        '  static constexpr int PER_LOAD = (BLOCK * 8) / 32;',
        '  const float* base;',
        '  float* smem;',
        '  __device__ Loader(const float* p, float* s) : base(p + threadIdx.x * 8), smem(s) {}',
        '  __device__ void load(int k) {',
        '    for (int i = 0; i < (TILE + PER_LOAD - 1) / PER_LOAD; ++i) smem[threadIdx.x + i * BLOCK] = base[i * k];',
        '    for (int i = 0; i < this->PER_LOAD; ++i) smem[i] = base[i];',
        '  }',
        '};',
        'template <int TILE, int BLOCK>',
        '__global__ void gemm(const float* a, int k) {',
        '  __shared__ float s[4096];',
        '  Loader<TILE, BLOCK> loader(a, s);',
        '  for (int t = 0; t < k; ++t) loader.load(t);',
        '  if (threadIdx.x < loader.PER_LOAD) s[threadIdx.x] = 0.0f;',
        '}',
        'void host(const float* a, int k) { gemm<64, 128><<<1, 128>>>(a, k); }',
      ].join('\n'),
    );
    // The loops run alike in every lane; the last test is 32 lanes at 128 threads: a warp's boundary.
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [['threadIdx.x < loader.PER_LOAD', 'warp-uniform']],
    );
  });

  it('reaches a method called with its template arguments written (`w.transform<true, true>(...)`, `w.template ...`)', async () => {
    const branches = await analyzeSource(
      [
        'template <int WX>',
        'class Win {',
        '  template <bool CHECK_LOADS, bool CHECK_WRITES>',
        '  __device__ void transform(const int* in, int* out) {',
        '    int boundary = 0;',
        '    if (threadIdx.x < 3) boundary = in[threadIdx.x];',
        '    out[threadIdx.x] = boundary;',
        '  }',
        '  __device__ void plain(const int* in, int* out) {',
        '    if (threadIdx.x < 5) out[threadIdx.x] = in[0];',
        '  }',
        ' public:',
        '  __device__ static void run(const int* in, int* out, int sx) {',
        '    Win<WX> w;',
        '    if (sx > 4) w.transform<true, true>(in, out);',
        '    else w.template transform<false, false>(in, out);',
        '    w.plain(in, out);',
        '  }',
        '};',
        'template <int WX>',
        '__global__ void k(const int* in, int* out, int sx) { Win<WX>::run(in, out, sx); }',
        'void host(const int* in, int* out, int sx) { k<64><<<1, 64>>>(in, out, sx); }',
      ].join('\n'),
    );
    // The member's name is read apart from its template arguments (Rodinia's dwt2d: the first 3
    // threads load the boundary columns); before, only `plain`'s branch was listed.
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [
        ['threadIdx.x < 3', 'divergent'],
        ['threadIdx.x < 5', 'divergent'],
      ],
    );
  });

  it("reads a class template's constant named with the kernel's own template parameter (`L<BLOCK>::P`) at each instance", async () => {
    const branches = await analyzeSource(
      [
        'template <int B> struct L { static constexpr int P = (B * 8) / 32; };',
        'template <int BLOCK> __global__ void h(float* s) {',
        '  if (threadIdx.x < L<BLOCK>::P) s[threadIdx.x] = 1.0f;',
        '}',
        'void host(float* a) { h<128><<<1, 128>>>(a); h<16><<<1, 128>>>(a); }',
      ].join('\n'),
    );
    // 32 lanes at h<128> (a warp's boundary), 4 at h<16> (warp 0 splits 4 against 28).
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [['threadIdx.x < L<BLOCK>::P', 'divergent']],
    );
    assert.deepEqual(branches[0].split?.groups, [28, 4]);
  });

  it('reads a typedef declared twice with the same type (a file and a header it includes both name `x4`)', async () => {
    const branches = await analyzeSource(
      [
        'template <typename T> struct P { static constexpr int size = 16 / sizeof(T); };',
        'typedef P<float> x4;',
        'typedef P<float> x4;',
        '__global__ void k(float* p) {',
        '  if (threadIdx.x < x4::size) p[threadIdx.x] = 0.0f;',
        '}',
        'void h(float* p) { k<<<1, 256>>>(p); }',
      ].join('\n'),
    );
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind, b.split?.groups ?? null, b.split?.onlyFor ?? []]),
      [['threadIdx.x < x4::size', 'divergent', [28, 4], []]],
    );
  });

  it('reads a launch a macro writes in a function template once per explicit instantiation of that template', async () => {
    const branches = await analyzeSource(
      [
        'template <typename T, int WIDTH>',
        '__global__ void fill(T* p) {',
        '  constexpr int LANES = WIDTH / sizeof(T);',
        '  if (threadIdx.x < LANES) p[threadIdx.x] = T(0);',
        '}',
        '#define LAUNCH(T, B) fill<T, 128><<<1, B>>>(p)',
        'template <typename T>',
        'void run(T* p, int n) {',
        '  if (n < 64) { LAUNCH(T, 64); } else { LAUNCH(T, 128); }',
        '}',
        'template void run<float>(float* p, int n);',
        'template void run<double>(double* p, int n);',
      ].join('\n'),
    );
    // float: 32 lanes, double: 16 of each warp's 32, both proven from the instances.
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind, b.split?.groups ?? null, b.split?.onlyFor ?? []]),
      [['threadIdx.x < LANES', 'divergent', [16, 16], []]],
    );
  });

  it('reads the most distinct instances when a kernel has more than it analyses, and not the rest with their arguments unknown', async () => {
    const launches = [32, 64, 96, 128, 160, 192].map((k) => `  rows<${k}><<<1, 256>>>(p);`);
    const branches = await analyzeSource(
      [
        'template <int K>',
        '__global__ void rows(float* p) {',
        '  if (threadIdx.x < K) p[threadIdx.x] = 0.0f;',
        '}',
        'void run(float* p) {',
        ...launches,
        '}',
      ].join('\n'),
    );
    // Every K a launch gives is a whole number of warps: no split, and no hint for values of K no launch makes.
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [['threadIdx.x < K', 'warp-uniform']],
    );
  });

  it('does not take a loop guard on run-time values for one lane because each sample of them lets one lane in', async () => {
    // The attention softmax's walk over time steps: how many lanes the guard lets in depends on the
    // lengths the kernel reads, which the samples stand in for together.
    const branches = await analyzeSource(
      [
        'struct Params { const int* mem_len; const int* len_per_sample; int timestep; int prefix; int max_len; const bool* mask; float* out; };',
        'template <bool CROSS>',
        '__global__ void logits(Params p) {',
        '  const int bi = blockIdx.x;',
        '  const int tlength = CROSS ? p.mem_len[bi] - 1 : (p.len_per_sample == nullptr ? p.timestep : p.len_per_sample[bi] + p.prefix);',
        '  const int first = max(0, tlength + 1 - p.max_len);',
        '  for (int t = first + threadIdx.x; t <= tlength; t += 128) {',
        '    p.out[t] = p.mask[t] ? 0.f : 1.f;',
        '  }',
        '}',
        'void h(Params p) { logits<CROSS_FLAG><<<1, 128>>>(p); }',
      ].join('\n'),
    );
    assert.deepEqual(
      branchesForCli(branches).map((b) => [b.condition, b.kind, b.splitBy ?? null]),
      [
        ['t <= tlength', 'tail', null],
        ['p.mask[t]', 'divergent', 'data'],
      ],
    );
  });

  it('reads a local written through a pointer that holds its address as changed (a packed arg-max reduced in place)', async () => {
    const kernel = (reduce: string) =>
      [
        'struct Pair { int idx; float val; };',
        '__device__ void reduce_block(long long* v);',
        '__global__ void topk(float* s) {',
        '  Pair res = {(int)threadIdx.x, s[threadIdx.x]};',
        '  long long* packed = reinterpret_cast<long long*>(&res);',
        reduce,
        '  if (threadIdx.x == res.idx) s[threadIdx.x] = 0;',
        '}',
        'void h(float* s) { topk<<<1, 128>>>(s); }',
      ].join('\n');
    const reduced = await analyzeSource(kernel('  reduce_block(packed);'));
    assert.deepEqual(
      branchesForCli(reduced).map((b) => [b.condition, b.kind, b.splitBy]),
      [['threadIdx.x == res.idx', 'divergent', 'data']],
    );
    // Nothing writes through the pointer: each thread still holds its own index.
    const kept = await analyzeSource(kernel('  (void)packed;'));
    assert.deepEqual(
      kept.map((b) => [b.condition, b.kind]),
      [['threadIdx.x == res.idx', 'warp-uniform']],
    );
  });

  it('weighs a split of one warp of the block by the block: a leader branch in warp 0 of eight warps is a hint', async () => {
    // The arms differ in an operator, not only in operands: two copies of code (see merged-arms.ts).
    const work = (k: number, op: string) =>
      Array.from({ length: 12 }, (_, i) => `    out[${k} + ${i}] = v ${op} ${i + 2}.0f + out[${i}];`);
    const text = (threads: number) =>
      [
        '__global__ void lead(float* out, const float* in) {',
        '  float v = in[threadIdx.x];',
        // In a loop: each thread passes the split more than once (see oncePerThread).
        '  for (int r = 0; r < 2; ++r) {',
        '  if (threadIdx.x == 0) {',
        ...work(0, '*'),
        '  } else {',
        ...work(100, '-'),
        '  }',
        '  }',
        '}',
        `void h(float* o, const float* i) { lead<<<64, ${threads}>>>(o, i); }`,
      ].join('\n');
    const thresholds = { minCostThreshold: 1, minSharePercent: 0 };
    const eight = await analyzeSource(text(256));
    assert.equal(eight[0].split?.warps, 'warp 0 of each block');
    assert.ok(eight[0].idleIssueSlots >= 2, `${eight[0].idleIssueSlots} idle slots in the split warp`);
    assert.deepEqual(
      divergenceFindings(eight, thresholds).map((f) => f.severity),
      ['hint'],
    );
    assert.match(
      severityNote(eight[0], thresholds)!,
      /only warp 0 of each block splits, 0.3 slots per warp over the block/,
    );
    const one = await analyzeSource(text(32));
    assert.deepEqual(
      divergenceFindings(one, thresholds).map((f) => f.severity),
      ['warning'],
    );
  });

  it("reads libcu++'s %laneid as the lane index", async () => {
    const branches = await analyzeSource(
      [
        '#include <cuda/ptx>',
        '__global__ void k(float* out) {',
        '  auto lane = cuda::ptx::get_sreg_laneid();',
        '  if (lane == 0) out[blockIdx.x] = 1.0f;',
        '}',
        'void h(float* o) { k<<<8, 128>>>(o); }',
      ].join('\n'),
    );
    assert.deepEqual(
      branchesForCli(branches).map((b) => [b.condition, b.kind, b.splitBy]),
      [['lane == 0', 'divergent', 'thread-index']],
    );
  });

  it("computes CUDA's integer functions of one value lane by lane (`__clz`, `__popc`, `__ffs`, `abs`), not as per-lane data", async () => {
    const branches = await analyzeSource(
      [
        '__global__ void k(float* out, const float* in, unsigned n) {',
        '  unsigned len = n + threadIdx.x / 32;',
        '  float acc = 0.0f;',
        '  for (unsigned s = 1u << (32 - __clz(len)); s > 0; s >>= 1) acc += in[s];',
        '  if (__popc(threadIdx.x) % 2 == 0) out[threadIdx.x] = acc;',
        '  if (abs((int)(threadIdx.x / 32) - 2) < 1) out[threadIdx.x + 1] = acc;',
        '  if (__ffs(threadIdx.x) > 3) out[threadIdx.x + 2] = acc;',
        '}',
        'void h(float* o, const float* i, unsigned n) { k<<<8, 128>>>(o, i, n); }',
      ].join('\n'),
    );
    // A halving loop from the power of two above a length each warp holds once: every lane of a warp
    // runs it as often. The parity of a lane's set bits and its lowest set bit follow the thread index.
    assert.deepEqual(
      branchesForCli(branches).map((b) => [b.condition, b.kind, b.splitBy ?? null]),
      [
        ['s > 0', 'warp-uniform', null],
        ['__popc(threadIdx.x) % 2 == 0', 'divergent', 'thread-index'],
        ['abs((int)(threadIdx.x / 32) - 2) < 1', 'warp-uniform', null],
        ['__ffs(threadIdx.x) > 3', 'divergent', 'thread-index'],
      ],
    );
    // Lanes 0, 8, 16 and 24 of each warp (the lowest set bit at 4 or above), but lane 0 of warp 0 (no bit set): 15 of 128.
    assert.equal(branches[3].laneActivity, 0.117);
  });

  it('hints, not warns, at arms that are the same code on different operands (the compiler makes one copy)', async () => {
    const branches = await analyzeSource(
      [
        '__global__ void k(float* out, const float* pos, const float* in, int n, int m, float s) {',
        '  const int t = threadIdx.x;',
        '  const int sector = t % 7;',
        '  float theta = 0.0f;',
        '  if (sector % 3 == 1 && sector < n) {',
        '    theta = pos[t + m * 1] * powf(s, t / 2.0f);',
        '  } else if (sector % 3 == 2 && sector < n + 1) {',
        '    theta = pos[t + m * 2] * powf(s, t / 2.0f);',
        '  } else {',
        '    theta = pos[t] * powf(s, t / 2.0f);',
        '  }',
        '  if (t % 2 == 0) {',
        '    out[t % n] = out[t % n] * in[(t + 5) % n] + theta;',
        '  } else {',
        '    out[t % m] = out[t % m] * in[(t + 3) % m] + theta;',
        '  }',
        '  if (t % 4 == 0) {',
        '    out[t] = expf(theta) * in[t] + expf(in[t + 1]) * in[t + 2];',
        '  } else {',
        '    out[t] = logf(theta) * in[t] + logf(in[t + 1]) * in[t + 2];',
        '  }',
        '  if ((t & 1) == 0) {',
        '    out[t + 1] = theta;',
        '  } else {',
        '    out[t + 1] = theta * in[t + 2] + in[t + 3] * in[t + 4] + in[t + 5] * in[t + 6] * in[t + 7];',
        '  }',
        '}',
        'void h(float* o, const float* p, const float* i, int n, int m, float s) { k<<<64, 256>>>(o, p, i, n, m, s); }',
      ].join('\n'),
    );
    // The rope-style chain and the parity arms differ only in operands; `expf` against `logf` is
    // other code, and so is a store of `theta` against a sum of products.
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind, !!b.mergedArms, divergenceFindings([b])[0]?.severity ?? null]),
      [
        ['sector % 3 == 1 && sector < n', 'divergent', true, 'hint'],
        ['sector % 3 == 2 && sector < n + 1', 'divergent', true, 'hint'],
        ['t % 2 == 0', 'divergent', true, 'hint'],
        ['t % 4 == 0', 'divergent', false, 'warning'],
        ['(t & 1) == 0', 'divergent', false, 'warning'],
      ],
    );
    assert.match(severityNote(branches[2])!, /the arms are the same code on different operands/);
    assert.match(branches[0].explanation, /the compiler makes one copy of it/);
  });

  it('hints, not warns, at a short split each thread passes once (in no loop of the kernel), and warns in a loop', async () => {
    const branches = await analyzeSource(
      [
        '__global__ void k(float* out, const float* in, int n) {',
        '  const int t = threadIdx.x;',
        '  float v = in[t];',
        '  if ((t & 1) == 0) {',
        '    out[t] = v * 2.0f + in[t + 1];',
        '    out[t + 1] = v;',
        '  }',
        '  for (int i = 0; i < n; ++i) {',
        '    if ((t & 1) == 0) {',
        '      out[t + i] = v * 2.0f + in[t + i];',
        '      out[t + i + 1] = v;',
        '    }',
        '  }',
        '  if ((t & 2) == 0) {',
        ...Array.from({ length: 8 }, (_, i) => `    out[t + ${i + 2}] = v * in[t + ${i + 3}] + in[t + ${i + 4}];`),
        '  }',
        '  if ((t & 4) == 0) {',
        '    for (int j = 0; j < n; ++j) out[t + j] = v * in[j];',
        '  }',
        '}',
        'void h(float* o, const float* i, int n) { k<<<64, 256>>>(o, i, n); }',
      ].join('\n'),
    );
    // The default cost threshold (4 slots), at any share of the kernel: the long branch below is most
    // of it. The last split holds a loop, counted one round (4 slots): not known short.
    const any = { minCostThreshold: 4, minSharePercent: 0 };
    assert.deepEqual(
      branches
        .filter((b) => b.kind === 'divergent')
        .map((b) => [
          b.span.start.line,
          !!b.oncePerThread,
          b.idleIssueSlots,
          divergenceFindings([b], any)[0]?.severity,
        ]),
      [
        [3, true, 4.5, 'hint'],
        [8, false, 5.5, 'warning'],
        [13, true, 36, 'warning'],
        [23, true, 4, 'warning'],
      ],
    );
    const once = branches.find((b) => b.span.start.line === 3)!;
    assert.match(
      severityNote(once, any)!,
      /each thread passes the branch once \(it is in no loop of the kernel, nor holds one\).* a warning from 12 slots/,
    );
  });

  it('judges a branch without its guards where no sample reaches it, but keeps a guard that picks one lane', async () => {
    const branches = await analyzeSource(
      [
        '__global__ void k(float* out, const float* in, unsigned n) {',
        '  unsigned votes = __popc(__ballot_sync(0xffffffffu, in[threadIdx.x] > 0.0f));',
        '  if (votes == 7u * n + 5u) {',
        '    if (threadIdx.x % 32 == 0) out[blockIdx.x] = 1.0f;',
        '  }',
        '  unsigned best = __shfl_sync(0xffffffffu, in[threadIdx.x] > 1.0f ? threadIdx.x : 0u, 0);',
        '  if (threadIdx.x == best) {',
        '    if (in[threadIdx.x] > 2.0f) out[threadIdx.x] = 0.0f;',
        '  }',
        '}',
        'void h(float* o, const float* i, unsigned n) { k<<<8, 128>>>(o, i, n); }',
      ].join('\n'),
    );
    // The vote's count is one value per warp the samples never make equal to `7n + 5`: the leader
    // test below it still splits each warp. Under `threadIdx.x == best` one lane at most is there,
    // so the test on its data is not a branch of the warp at all.
    assert.deepEqual(
      branches.map((b) => [b.condition, b.kind]),
      [
        ['votes == 7u * n + 5u', 'warp-uniform'],
        ['threadIdx.x % 32 == 0', 'divergent'],
        ['in[threadIdx.x] > 1.0f', 'divergent'],
        ['threadIdx.x == best', 'divergent'],
      ],
    );
  });

  it('gives the CLI contract fields, 1-based', async () => {
    const branches = await analyzeSource(
      '__global__ void k(float* b) {\n    if (threadIdx.x < 16) b[0] = 1;\n}\nvoid h(float* b) { k<<<1, 64>>>(b); }\n',
    );
    assert.deepEqual(branchesForCli(branches), [
      {
        line: 2,
        column: 5,
        kind: 'divergent',
        condition: 'threadIdx.x < 16',
        efficiency: 1,
        idleIssueSlots: 1,
        kernelIssueSlots: 5,
        costSource: 'syntax-estimate',
        splitBy: 'thread-index',
      },
    ]);
    // the contract's fields, and the ones added since (cost of the split, what it is weighed against)
    assert.deepEqual(Object.keys(branchesForCli(branches)[0]).sort(), [
      'column',
      'condition',
      'costSource',
      'efficiency',
      'idleIssueSlots',
      'kernelIssueSlots',
      'kind',
      'line',
      'splitBy',
    ]);
  });
});
