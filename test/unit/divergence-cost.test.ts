/**
 * The cost model: path lengths from the syntax tree, the diverged cost as the
 * sum, the ideal as the max, efficiency max/sum, and the PTX refinement on a
 * file compiled with `nvcc -ptx -lineinfo` (test/fixtures/divergence).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCuda } from '../support/grammar';
import { DIVERGENCE_FIXTURES, analyzeSource } from '../support/divergence-fixtures';
import { constantTripCount, estimateCost } from '../../server/src/core/body/path-costs';
import { collectFunctions } from '../../server/src/core/body/syntax-functions';
import type { SyntaxNode } from '../../server/src/core/syntax/cuda-parser';
import {
  countInstructionsInSpans,
  fileIdsFor,
  parsePtx,
  ptxEntriesFor,
} from '../../server/src/core/compiler/ptx-line-costs';
import { refineBranchesWithPtx } from '../../server/src/core/compiler/ptx-branch-costs';

async function bodyStatements(text: string): Promise<{ statements: SyntaxNode[]; functions: Map<string, SyntaxNode> }> {
  const tree = await parseCuda(text);
  const functions = collectFunctions(tree.rootNode);
  const k = functions.get('k')!;
  const body = k.childForFieldName('body')!;
  return { statements: body.namedChildren.filter((c): c is SyntaxNode => !!c), functions };
}

describe('divergence cost: syntax estimate', () => {
  it('counts about one per operator, load and store', async () => {
    const { statements, functions } = await bodyStatements(
      '__global__ void k(float* b, int t) {\n  b[t] += b[t + 1] * 0.5f;\n  int x = t * 3;\n}\n',
    );
    const e = estimateCost(statements, { functions });
    // statement 1: += (1) + store b[t] (1) + * (1) + load b[t+1] (1) + t+1 (1) = 5; statement 2: * (1)
    assert.equal(e.cost, 6);
    assert.equal(e.statements, 2);
    assert.equal(e.complex, false);
  });

  it('multiplies a loop with a constant trip count and counts others once, saying so', async () => {
    const { statements, functions } = await bodyStatements(
      '__global__ void k(float* b, int n) {\n  for (int j = 0; j < 4; ++j) b[j] = 0;\n  for (int j = 0; j < n; ++j) b[j] = 0;\n}\n',
    );
    assert.equal(constantTripCount(statements[0], {}), 4);
    assert.equal(constantTripCount(statements[1], {}), null);
    const fixed = estimateCost([statements[0]], { functions });
    const open = estimateCost([statements[1]], { functions });
    assert.equal(fixed.cost, 4 * open.cost);
    assert.deepEqual(fixed.notes, []);
    assert.deepEqual(open.notes, [
      'the loop `for (int j = 0; j < n; ++j)` is counted once (its trip count is not a constant)',
    ]);
    assert.equal(open.complex, true);
  });

  it('counts a __device__ callee at its call and math library calls as several instructions', async () => {
    const { statements, functions } = await bodyStatements(
      '__device__ float sq(float v) { return v * v; }\n__global__ void k(float* b) {\n  b[0] = sq(b[1]);\n  b[2] = expf(b[3]);\n}\n',
    );
    // = (1) + store (1) + load (1) + sq's body: return (1) + * (1)
    assert.equal(estimateCost([statements[0]], { functions }).cost, 5);
    // = (1) + store (1) + load (1) + expf (4)
    assert.equal(estimateCost([statements[1]], { functions }).cost, 7);
  });
});

describe('divergence cost: sum, max and efficiency', () => {
  it('an if/else that splits warps costs the sum of its paths against the longest', async () => {
    const [b] = await analyzeSource(
      '__global__ void k(float* b) {\n  int t = threadIdx.x;\n  if (t & 1) {\n    b[t] = b[t] * 2.0f + 1.0f;\n    b[t + 1] = b[t] * b[t];\n  } else {\n    b[t] = 0;\n  }\n}\nvoid h(float* p) { k<<<1, 64>>>(p); }\n',
    );
    assert.equal(b.kind, 'divergent');
    const [a, c] = b.paths.map((p) => p.cost);
    assert.ok(a > c && c > 0);
    assert.equal(b.divergedCost, a + c);
    assert.equal(b.idealCost, a);
    assert.equal(b.efficiency, Math.round((a / (a + c)) * 1000) / 1000);
    assert.match(
      b.explanation,
      new RegExp(`the warp runs both paths one after the other: ${a + c} issue slots against ${a} if the lanes agreed`),
    );
    assert.equal(b.likelyPredicated, true);
  });

  it('a k-way switch pays every case its lanes reach', async () => {
    const [b] = await analyzeSource(
      '__global__ void k(float* b) {\n  switch (threadIdx.x % 3) {\n    case 0: b[0] += 1; break;\n    case 1: b[1] += 2; b[2] += 3; break;\n    default: b[3] = b[4] * b[5] + b[6]; break;\n  }\n}\nvoid h(float* p) { k<<<1, 96>>>(p); }\n',
    );
    assert.equal(b.construct, 'switch');
    assert.equal(b.kind, 'divergent');
    const costs = b.paths.map((p) => p.cost);
    assert.equal(
      b.divergedCost,
      costs.reduce((s, x) => s + x, 0),
    );
    assert.equal(b.idealCost, Math.max(...costs));
    assert.deepEqual(b.split?.groups, [11, 11, 10]);
  });

  it('a switch on the warp id is uniform and costs only its longest case', async () => {
    const [b] = await analyzeSource(
      '__global__ void k(float* b) {\n  switch (threadIdx.x / 32) {\n    case 0: b[0] += 1; break;\n    default: b[3] = b[4] * b[5] + b[6]; break;\n  }\n}\nvoid h(float* p) { k<<<1, 96>>>(p); }\n',
    );
    assert.equal(b.kind, 'warp-uniform');
    assert.equal(b.divergedCost, b.idealCost);
    assert.equal(b.efficiency, 1);
  });

  it('a nested divergent branch adds its paths inside the outer path', async () => {
    const text = (inner: string) =>
      `__global__ void k(float* b, int n) {\n  int t = threadIdx.x;\n  if (t < 16) {\n    if (${inner}) b[t] = 1; else b[t] = 2;\n  }\n}\nvoid h(float* p, int n) { k<<<1, 64>>>(p, n); }\n`;
    const divergentInner = (await analyzeSource(text('t & 1')))[0];
    const uniformInner = (await analyzeSource(text('n > 3')))[0];
    assert.equal(divergentInner.paths[0].cost, uniformInner.paths[0].cost + 2);
  });

  it('does not predicate a long path or a loop', async () => {
    const [b] = await analyzeSource(
      '__global__ void k(float* b, int n) {\n  if (threadIdx.x % 2) {\n    for (int j = 0; j < n; ++j) b[j] += 1;\n  }\n}\nvoid h(float* p, int n) { k<<<1, 64>>>(p, n); }\n',
    );
    assert.equal(b.likelyPredicated, false);
    assert.ok(
      b.assumptions.includes(
        'the loop `for (int j = 0; j < n; ++j)` is counted once (its trip count is not a constant)',
      ),
    );
  });
});

describe('divergence cost: PTX refinement', () => {
  const cu = fs.readFileSync(path.join(DIVERGENCE_FIXTURES, 'ptx-branches.cu'), 'utf8');
  const ptxText = fs.readFileSync(path.join(DIVERGENCE_FIXTURES, 'ptx-branches.ptx'), 'utf8');

  it('parses functions, files and .loc lines, attributing inlined code to its call site', () => {
    const ptx = parsePtx(ptxText);
    assert.deepEqual([...ptx.files], [[1, 'ptx-branches.cu']]);
    assert.deepEqual(
      ptx.functions.map((f) => [f.name, f.kind]),
      [['_Z11split_pathsPKfPfi', 'entry']],
    );
    assert.equal(ptxEntriesFor(ptx, 'split_paths').length, 1);
    assert.equal(ptxEntriesFor(ptx, 'paths').length, 0);
    const sin = ptx.functions[0].instructions.filter((i) => i.text.startsWith('sin.approx'));
    assert.equal(sin.length, 8);
    assert.ok(sin.every((i) => i.location?.line === 16 && i.location.column === 5));
    assert.deepEqual(fileIdsFor(ptx, '/some/checkout/test/fixtures/divergence/ptx-branches.cu'), new Set([1]));
    // line 19, column 5 (1-based) holds the else path's single add
    assert.equal(
      countInstructionsInSpans(ptx.functions, new Set([1]), [
        { start: { line: 18, character: 0 }, end: { line: 19, character: 0 } },
      ]),
      1,
    );
  });

  it('replaces the syntax estimate with PTX instruction counts per path', async () => {
    const branches = await analyzeSource(cu);
    const before = branches.find((b) => b.condition === 't % 2 == 0')!;
    assert.equal(before.costSource, 'syntax-estimate');
    const refined = refineBranchesWithPtx(branches, ptxText, 'test/fixtures/divergence/ptx-branches.cu');
    const after = refined.find((b) => b.condition === 't % 2 == 0')!;
    assert.equal(after.costSource, 'ptx');
    // then: 16 instructions of the inlined heavy() at 16:5, then fma + bra.uni at 17:5; else: add.f32 at 19:5
    assert.deepEqual(
      after.paths.map((p) => p.cost),
      [18, 1],
    );
    assert.equal(after.divergedCost, 19);
    assert.equal(after.idealCost, 18);
    assert.equal(after.efficiency, 0.947);
    assert.match(
      after.explanation,
      /19 issue slots against 18 if the lanes agreed \(issue efficiency 95%; PTX instructions\)/,
    );
    assert.ok(after.assumptions.some((a) => a.includes('PTX instructions')));
    assert.ok(!after.assumptions.some((a) => a.startsWith('path costs are estimates')));
    // the tail guard is not a divergent branch: left as it was
    const tail = refined.find((b) => b.kind === 'tail')!;
    assert.equal(tail.costSource, 'syntax-estimate');
  });

  it('keeps the estimate when the PTX is for another file or kernel', async () => {
    const branches = await analyzeSource(cu);
    assert.deepEqual(refineBranchesWithPtx(branches, ptxText, 'other.cu'), branches);
    const renamed = ptxText.replace(/_Z11split_pathsPKfPfi/g, '_Z5otherPKfPfi');
    assert.deepEqual(refineBranchesWithPtx(branches, renamed, 'ptx-branches.cu'), branches);
  });
});
