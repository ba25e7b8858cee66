/**
 * The text passes run chunk by chunk and kept between versions: after any
 * edits, what they give from the previous version's chunks (entries taken by
 * position, file-wide tables kept where the replaced chunks held the same)
 * equals what a fresh run over the final text gives.
 */
import * as assert from 'node:assert/strict';
import { makeSourceText } from '../../server/src/core/source-text';
import { runTextPasses, TextPassCache, type TextFacts } from '../../server/src/core/chunked-text-passes';
import { anySource, applyEdit, checkProperty, editSequence, fuzzRuns } from '../support/fuzz-sources';

/** Every field as plain data (sets sorted, maps as entries). */
function plain(facts: TextFacts): unknown {
  return JSON.parse(
    JSON.stringify(facts, (_key, value) => (value instanceof Set ? [...value].sort() : value instanceof Map ? [...value.entries()] : value)),
  );
}

function passes(text: string, cache = new TextPassCache(), previous?: ReturnType<typeof makeSourceText>): TextFacts {
  return runTextPasses({ source: makeSourceText(text, previous), outerKey: '-', cache });
}

describe('chunked text passes', () => {
  it('keeps the function names and device functions of the chunks an edit did not change', () => {
    const kernels = Array.from({ length: 40 }, (_, k) => `__device__ int f${k}(int x) { return x + ${k}; }\n__global__ void k${k}(int* p) {\n  p[threadIdx.x] = f${k}(${k});\n}\n`).join('\n');
    const cache = new TextPassCache();
    const before = passes(kernels, cache);
    const typed = kernels.replace('p[threadIdx.x] = f7(7);', 'p[threadIdx.x] = f7(7) ;');
    const after = passes(typed, cache, cache.layout!.source);
    assert.equal(after.functionNames, before.functionNames, 'a space typed in a body: the same set');
    assert.equal(after.deviceFunctions, before.deviceFunctions);
    assert.equal(after.contextKey, before.contextKey);
    const renamed = typed.replace('__device__ int f7(int x)', '__device__ int g7(int x)');
    const again = passes(renamed, cache, cache.layout!.source);
    assert.notEqual(again.functionNames, after.functionNames);
    assert.ok(again.functionNames.has('g7'));
    assert.deepEqual(plain(again), plain(passes(renamed)));
  });

  it('gives after any edits what a fresh run over the final text gives', async () => {
    await checkProperty(
      'text passes: incremental = fresh',
      [anySource, editSequence],
      (original, edits) => {
        const cache = new TextPassCache();
        let text = original;
        passes(text, cache);
        for (const e of edits) {
          text = applyEdit(text, e);
          const incremental = passes(text, cache, cache.layout!.source);
          assert.deepEqual(plain(incremental), plain(passes(text)));
        }
      },
      fuzzRuns(200),
    );
  });
});
