/**
 * Cutting a file into top-level chunks: where the chunks end, and that cutting
 * an edited text again from its previous version's chunks gives the chunks a
 * fresh cut gives.
 */
import * as assert from 'node:assert/strict';
import { makeSourceText } from '../../server/src/core/text/source-text';
import { layoutChunks, type Chunk } from '../../server/src/core/text/top-level-chunks';
import { anySource, applyEdit, checkProperty, editSequence, fuzzRuns } from '../support/fuzz-sources';

function cut(text: string): Chunk[] {
  return layoutChunks(makeSourceText(text)).chunks;
}

/** Each chunk as its text. */
function pieces(text: string, chunks: readonly Chunk[]): string[] {
  return chunks.map((c) => text.slice(c.start, c.end));
}

describe('top-level chunks', () => {
  it('covers the text without gaps, each chunk starting on a line', () => {
    const text = Array.from(
      { length: 60 },
      (_, k) => `__global__ void k${k}(float* x) {\n  x[threadIdx.x] = ${k};\n}\n`,
    ).join('\n');
    const chunks = cut(text);
    assert.ok(chunks.length > 1, 'a file of 60 kernels is cut somewhere');
    assert.equal(chunks[0].start, 0);
    assert.equal(chunks.at(-1)!.end, text.length);
    for (let k = 1; k < chunks.length; k++) {
      assert.equal(chunks[k].start, chunks[k - 1].end);
      assert.equal(text[chunks[k].start - 1], '\n');
      assert.equal(chunks[k].line, text.slice(0, chunks[k].start).split('\n').length - 1);
    }
  });

  it('never ends a chunk inside a definition, a namespace or after a comment', () => {
    const kernels = Array.from(
      { length: 40 },
      (_, k) => `__global__ void k${k}() {\n  int a = ${k};\n}  // done ${k}\n`,
    ).join('');
    const text = `namespace outer {\n${kernels}}\n`;
    assert.deepEqual(pieces(text, cut(text)), [text]);
  });

  it('cuts an edited text again from its previous chunks as a fresh cut does', async () => {
    await checkProperty(
      'chunks: incremental = fresh',
      [anySource, editSequence],
      (original, edits) => {
        let text = original;
        let previous = { source: makeSourceText(text), chunks: cut(text) };
        for (const e of edits) {
          text = applyEdit(text, e);
          const source = makeSourceText(text);
          const { chunks, previousIndex } = layoutChunks(source, previous);
          assert.deepEqual(chunks, cut(text));
          // A chunk said to be the previous version's has its text.
          chunks.forEach((c, k) => {
            const was = previous.chunks[previousIndex[k]];
            if (previousIndex[k] >= 0)
              assert.equal(text.slice(c.start, c.end), previous.source.text.slice(was.start, was.end));
          });
          previous = { source, chunks };
        }
      },
      fuzzRuns(300),
    );
  });
});
