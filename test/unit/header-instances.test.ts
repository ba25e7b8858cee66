/**
 * A kernel template defined in a header and launched by the `.cu` that includes it: the header,
 * read in that file's unit, takes its kernels' instances and block shapes from the includer's
 * launches (the template arguments and blocks read there, with the includer's own constants).
 */
import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
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
