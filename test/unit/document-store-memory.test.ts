/**
 * Editing a document keeps its current text alive, not one earlier version per kernel edited:
 * the per-kernel results kept across versions must hold no slice of the text they were
 * computed from (a syntax node's text is one; memory parallelism's reasoning quotes it).
 */
import * as assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DocumentStore } from '../../server/src/lsp/document-store';
import type { CudaParser, Tree } from '../../server/src/core/syntax/cuda-parser';
import { getCudaParser } from '../support/grammar';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function liveHeapMb(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed / 1048576;
}

const KERNELS = 30;
/** Edits made before the heap is measured. */
const WARM_UP = 5;
/** Six lines: an edit goes into the third (the first load). */
const kernel = (i: number) =>
  `__global__ void __launch_bounds__(256) k${i}(const float* __restrict__ x, float* __restrict__ y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float a = x[i];\n  float b = x[i + n];\n  y[i] = a * b + 1.0f;\n}\n`;

describe('DocumentStore memory', function () {
  this.timeout(120000);

  it('keeps no earlier version of a 1 MB text alive after an edit in each of 30 kernels', async () => {
    const parser = await getCudaParser();
    const store = new DocumentStore({ parser });
    const uri = 'file:///edited.cu';
    // About 1 MB of text, so that each version kept alive by mistake weighs 1 MB; the comments
    // between the kernels put each in a chunk of its own, read again only when it changes.
    const paddingLines = 250;
    const padding = `// ${'padding '.repeat(16)}\n`.repeat(paddingLines);
    const analyse = () => {
      const facts = store.facts(uri);
      while (store.complete(uri, 1000));
      return facts;
    };
    store.open(uri, 'cuda-cpp', 1, Array.from({ length: KERNELS }, (_, i) => kernel(i) + padding).join(''));
    const first = analyse();
    assert.match(
      first?.memoryParallelism[0].reasoning.join(' ') ?? '',
      /First use of a loaded value at line 5 \(`y\[i\] = a \* b \+ 1\.0f`\)/,
    );
    let before = 0;
    for (let i = 0; i < KERNELS; i++) {
      // Measured after the first edits: what a version keeps of the one before it (its text, for
      // the next edit's masking) and the tables an edit first fills are there once, not per edit.
      if (i === WARM_UP) before = liveHeapMb();
      const at = { line: (6 + paddingLines) * i + 2, character: 2 };
      store.change(uri, i + 2, [{ range: { start: at, end: at }, text: ' ' }]);
      analyse();
    }
    const grownMb = liveHeapMb() - before;
    assert.ok(
      grownMb < 8,
      `the live heap grew by ${grownMb.toFixed(1)} MB over ${KERNELS - WARM_UP} edits (one 1 MB version kept per edit would be ~${KERNELS - WARM_UP} MB)`,
    );
    store.dispose();
  });

  it('keeps no earlier version alive through the launches kept per function, after an edit in each of 30 launchers', async () => {
    const parser = await getCudaParser();
    const store = new DocumentStore({ parser });
    const uri = 'file:///launching.cu';
    const paddingLines = 250;
    const padding = `// ${'padding '.repeat(16)}\n`.repeat(paddingLines);
    // Four lines each: the launch is on the third, and quotes names long enough to be slices of the text.
    const launcher = (i: number) =>
      `void run${i}(const float* x, float* y, int gridBlocksCount) {\n  const int threadsPerBlock = 256;\n  k${i}<<<gridBlocksCount, threadsPerBlock>>>(x, y, 0);\n}\n`;
    const text = Array.from({ length: KERNELS }, (_, i) => kernel(i) + launcher(i) + padding).join('');
    const analyse = () => {
      const facts = store.facts(uri);
      while (store.complete(uri, 1000));
      return facts;
    };
    store.open(uri, 'cuda-cpp', 1, text);
    assert.equal(analyse()?.launches[0].block.text, 'threadsPerBlock');
    let before = 0;
    for (let i = 0; i < KERNELS; i++) {
      if (i === WARM_UP) before = liveHeapMb();
      // A blank before the launch of run<i>: its launch is made again, from this version's text.
      const at = { line: (6 + 4 + paddingLines) * i + 8, character: 0 };
      store.change(uri, i + 2, [{ range: { start: at, end: at }, text: ' ' }]);
      assert.equal(analyse()?.launches[i].block.text, 'threadsPerBlock');
    }
    const grownMb = liveHeapMb() - before;
    assert.ok(
      grownMb < 8,
      `the live heap grew by ${grownMb.toFixed(1)} MB over ${KERNELS - WARM_UP} edits (one 1 MB version kept per edit would be ~${KERNELS - WARM_UP} MB)`,
    );
    store.dispose();
  });

  it('holds at most two syntax trees, even while it parses a newly opened document', async () => {
    // The parser's WebAssembly memory never shrinks: its peak is the most trees alive at once. (An
    // incremental parse shares what it did not change with the tree it starts from: not counted.)
    const parser = await getCudaParser();
    let alive = 0;
    let peak = 0;
    const counting: CudaParser = {
      parseApart: (text) => parser.parseApart(text),
      parse(text, old) {
        if (!old) peak = Math.max(peak, alive + 1);
        const tree = parser.parse(text, old);
        alive++;
        const remove = tree.delete.bind(tree);
        (tree as Tree & { delete(): void }).delete = () => {
          alive--;
          remove();
        };
        return tree;
      },
      dispose() {},
    };
    const store = new DocumentStore({ parser: counting });
    for (let k = 0; k < 5; k++) {
      const uri = `file:///open-${k}.cu`;
      store.open(uri, 'cuda-cpp', 1, kernel(k));
      store.facts(uri);
    }
    store.change('file:///open-4.cu', 2, [
      { range: { start: { line: 2, character: 2 }, end: { line: 2, character: 2 } }, text: ' ' },
    ]);
    store.facts('file:///open-4.cu');
    assert.equal(peak, 2, 'a third tree while the next document is parsed');
    store.dispose();
    assert.equal(alive, 0);
  });
});
