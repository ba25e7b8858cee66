/**
 * `#if` branches that are off: a launch there is not reported, and of a name defined in
 * alternative branches, the definition read is the one a build compiles.
 */
import * as assert from 'node:assert/strict';
import { findLaunches } from '../../server/src/core/facts/launch-finder';
import { makeSourceText } from '../../server/src/core/text/source-text';
import { findInactiveRanges } from '../../server/src/core/text/preprocessor-branches';
import { analyzeSnippet } from '../support/analyze-snippet';

/** The first line of each off branch, certain and assumed. */
function offLines(text: string) {
  const source = makeSourceText(text);
  const { certain, assumed } = findInactiveRanges(source);
  const line = ([start]: [number, number]) => text.slice(0, start).split('\n').length;
  return { certain: certain.map(line), assumed: assumed.map(line) };
}

const launched = (text: string) =>
  findLaunches(makeSourceText(text)).map((l) => `${l.kernelName} ${l.block.value?.x ?? null}`);

describe('preprocessor branches', () => {
  it('knows `#if 0`, `#if 1 ... #else`, and the branches of a macro the file defines', () => {
    const text = [
      '#define FAST_PATH', //         1
      '#define VERSION 2', //         2
      '#if 0', //                     3
      'dead();', //                   4
      '#endif', //                    5
      '#ifdef FAST_PATH', //          6
      'fast();', //                   7
      '#else', //                     8
      'slow();', //                   9
      '#endif', //                    10
      '#if VERSION >= 3', //          11
      'v3();', //                     12
      '#elif VERSION == 2', //        13
      'v2();', //                     14
      '#else', //                     15
      'v1();', //                     16
      '#endif', //                    17
      '#ifdef FROM_THE_BUILD', //     18
      'maybe();', //                  19
      '#else', //                     20
      'otherwise();', //              21
      '#endif', //                    22
      '#if defined(__CUDACC__) && !defined(__HIPCC__)', // 23
      'cuda();', //                   24
      '#else', //                     25
      'hip();', //                    26
      '#endif', //                    27
    ].join('\n');
    // FROM_THE_BUILD may come from a -D flag: its branches are off only under the assumption.
    assert.deepEqual(offLines(text), { certain: [4, 9, 12, 16, 26], assumed: [4, 9, 12, 16, 19, 26] });
  });

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
      findLaunches(makeSourceText(text)).map((l) => l.block.value),
      [
        { x: 32, y: 1, z: 1 },
        { x: 8, y: 8, z: 1 },
      ],
    );
  });

  it('leaves a local declared in both branches of an `#ifdef` in one block unknown', () => {
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
