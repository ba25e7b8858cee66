/**
 * A kernel template defined in a header and launched by the `.cu` that includes it: the header,
 * read in that file's unit, takes its kernels' instances and block shapes from the includer's
 * launches (the template arguments and blocks read there, with the includer's own constants).
 */
import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
import { divergenceFindings, severityNote } from '../../server/src/core/report/divergence-findings';
import { loadFileAloneParser, semanticIndex } from '../support/file-alone';

const HEADER = [
  '#pragma once',
  'template <int SPLIT>',
  '__global__ void halves(float* p) {',
  '  if (threadIdx.x < SPLIT) p[threadIdx.x] = 0.0f;',
  '}',
  '',
].join('\n');

const MAIN = [
  '#include "halves.cuh"',
  'constexpr int kSplit = 16;',
  'void run(float* p) { halves<kSplit><<<1, 32>>>(p); }',
  '',
].join('\n');

describe('a header kernel read with its includer launches', () => {
  before(loadFileAloneParser);

  it('splits each warp where the instance the includer launches says', async () => {
    const index = semanticIndex();
    index.update('/ws/halves.cuh', HEADER);
    index.update('/ws/main.cu', MAIN);
    const facts = await analyzeSnippet(HEADER, { workspace: index, path: '/ws/halves.cuh' });
    assert.deepEqual(facts.launches, [], "the includer's launches are not the header's");
    assert.deepEqual(
      facts.branches.map((b) => [b.condition, b.kind, b.split?.groups ?? null, b.split?.warps ?? null]),
      [['threadIdx.x < SPLIT', 'divergent', [16, 16], 'the warp']],
    );
    assert.deepEqual(facts.branches[0].split?.onlyFor ?? [], [], 'proven for the instance, not left to SPLIT');
  });

  it('is read in the includer that launches its kernels, not in one that only calls a launcher defined elsewhere', async () => {
    const index = semanticIndex();
    index.update('/ws/halves.cuh', HEADER);
    // Nearer first in the index's order, and names no kernel of the header: its launcher is in main.cu.
    index.update(
      '/ws/dispatch.cu',
      ['#include "halves.cuh"', 'void run(float* p);', 'void go(float* p) { run(p); }', ''].join('\n'),
    );
    index.update('/ws/main.cu', MAIN);
    const facts = await analyzeSnippet(HEADER, { workspace: index, path: '/ws/halves.cuh' });
    assert.deepEqual(
      facts.branches.map((b) => [b.condition, b.kind, b.split?.groups ?? null, b.split?.onlyFor ?? []]),
      [['threadIdx.x < SPLIT', 'divergent', [16, 16], []]],
    );
  });

  it('leaves the split to the template parameter for the header alone, with no launch to take an instance from', async () => {
    const facts = await analyzeSnippet(HEADER, { path: '/ws/halves.cuh' });
    assert.deepEqual(
      facts.branches.map((b) => b.split?.onlyFor ?? []),
      [['SPLIT']],
    );
  });
});

/**
 * A header's `__device__` helpers that no kernel of the header calls: read where a kernel of the
 * includer calls them, their parameters hold what the call passes (a lane's own value is per-lane,
 * a size stays uniform); weighed against the helper alone, a split there is at most a hint.
 */
describe('a header helper read where the includer calls it', () => {
  before(loadFileAloneParser);

  const HELPERS = [
    '#pragma once',
    'template <typename T>',
    'struct Best {',
    '  T u = -1e30f;',
    '  int p = -1;',
    '  __device__ void insert(T elem, int id) {',
    '    if (elem > u) {',
    '      u = elem;',
    '      p = id;',
    '    }',
    '  }',
    '};',
    '__device__ inline float clampTo(float v, int n) {',
    '  if (n > 4) return v;',
    '  return v > 0.0f ? v : 0.0f;',
    '}',
    '',
  ].join('\n');
  const CALLER = [
    '#include "best.cuh"',
    '__global__ void pick(const float* in, int* out, int n) {',
    '  Best<float> best;',
    '  for (int i = threadIdx.x; i < n; i += blockDim.x) best.insert(clampTo(in[i], n), i);',
    '  out[blockIdx.x * blockDim.x + threadIdx.x] = best.p;',
    '}',
    'void run(const float* in, int* out, int n) { pick<<<8, 128>>>(in, out, n); }',
    '',
  ].join('\n');

  it("splits lanes on the values the includer's kernel passes, and not on a size it passes", async () => {
    const index = semanticIndex();
    index.update('/ws/best.cuh', HELPERS);
    index.update('/ws/main.cu', CALLER);
    const facts = await analyzeSnippet(HELPERS, { workspace: index, path: '/ws/best.cuh' });
    assert.deepEqual(
      facts.branches.map((b) => [b.span.start.line + 1, b.condition, b.kind, b.split?.dataDependent ?? null]),
      [
        [7, 'elem > u', 'divergent', true],
        [15, 'v > 0.0f', 'divergent', true],
      ],
    );
    assert.deepEqual(facts.branches[0].calledFrom, { kernel: 'pick', file: 'main.cu' });
    assert.match(
      facts.branches[0].assumptions[0],
      /read where `pick`, in main.cu, which includes this file, calls `insert`/,
    );
    // However low the thresholds: the select of two values costs nothing to split, the store a hint.
    assert.deepEqual(
      divergenceFindings(facts.branches, { minCostThreshold: 0, minSharePercent: 0 }).map((f) => [
        f.span.start.line + 1,
        f.severity,
      ]),
      [[7, 'hint']],
    );
    assert.match(severityNote(facts.branches[0])!, /read where `pick` in main.cu calls the function/);
  });

  it('takes the parameters as unknown with no includer to read them in', async () => {
    const facts = await analyzeSnippet(HELPERS, { path: '/ws/best.cuh' });
    assert.deepEqual(
      facts.branches.map((b) => b.condition),
      [],
    );
  });
});
