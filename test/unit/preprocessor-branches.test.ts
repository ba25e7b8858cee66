/**
 * `#if` branches that are off: a launch there is not reported, and of a name defined in
 * alternative branches, the definition read is the one a build compiles.
 */
import * as assert from 'node:assert/strict';
import { loadFileAloneParser, readAlone } from '../support/file-alone';
import { analyzeSnippet } from '../support/analyze-snippet';

const launched = (text: string) => readAlone(text).launches.map((l) => `${l.kernelName} ${l.block.value?.x ?? null}`);

describe('preprocessor branches', () => {
  before(loadFileAloneParser);

  it('does not report launches in branches that are certainly off', () => {
    const text = [
      '#define SPLIT_PASSES',
      'void host(float* p) {',
      '#ifdef SPLIT_PASSES',
      '  first_pass<<<1, 128>>>(p);',
      '#else',
      '  fused_pass<<<1, 128>>>(p);',
      '#endif',
      '#if 0',
      '  // kept for reference',
      '  old_pass<<<1, 64>>>(p);',
      '#endif',
      '#ifdef WITH_EXTRA',
      '  extra_pass<<<1, 32>>>(p);',
      '#endif',
      '}',
    ].join('\n');
    assert.deepEqual(launched(text), ['first_pass 128', 'extra_pass 32']);
  });

  it('reads the definition of the branch a build without -D flags compiles, when the other branch defines the name too', () => {
    const text = [
      '#if PORTABLE_BUILD',
      'static int lane_count() { int n = 0; query(&n); return n; }',
      '#else',
      'static constexpr int lane_count() { return 32; }',
      '#endif',
      '#if 0',
      '#define TILE 16',
      '#else',
      '#define TILE 8',
      '#endif',
      'void host(float* p) {',
      '  const int lanes = lane_count();',
      '  lane_kernel<<<1, lanes>>>(p);',
      '  tile_kernel<<<1, dim3(TILE, TILE)>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(
      readAlone(text).launches.map((l) => l.block.value),
      [
        { x: 32, y: 1, z: 1 },
        { x: 8, y: 8, z: 1 },
      ],
    );
  });

  // Known gap of the semantic core: a function body is read in the view's arm only (64 here), not both.
  it.skip('leaves a local declared in both branches of an `#ifdef` in one block unknown', () => {
    const text = [
      'void host(float* p) {',
      '#ifdef WIDE',
      '  const int t = 128;',
      '#else',
      '  const int t = 64;',
      '#endif',
      '  k<<<1, t>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(launched(text), ['k null']);
  });

  it('decides branches that run over several chunks of an analysed document', async () => {
    const filler = Array.from({ length: 40 }, (_, k) => `const int filler${k} = ${k};`);
    const text = [
      '#define USE_TILES',
      ...filler,
      '#ifndef USE_TILES',
      ...filler.map((l) => l.replace('filler', 'other')),
      'void host(float* p) { untiled<<<1, 64>>>(p); }',
      '#endif',
      'void run(float* p) { tiled<<<1, 32>>>(p); }',
      '',
    ].join('\n');
    const facts = await analyzeSnippet(text);
    assert.deepEqual(
      facts.launches.map((l) => l.kernelName),
      ['tiled'],
    );
  });
});
