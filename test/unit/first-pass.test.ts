/**
 * What a version's first analysis does with kernel bodies, as the server runs it (no budget for
 * them): a newly opened document leaves them all to the background, so that a first hover waits
 * only for the parse and the text passes; a keystroke's kernel is analysed at once.
 */
import * as assert from 'node:assert/strict';
import { DocumentStore, FIRST_PASS_BUDGET_MS } from '../../server/src/lsp/document-store';
import { getCudaParser } from '../support/grammar';

const URI = 'file:///first-pass.cu';
const kernel = (i: number) =>
  `__global__ void k${i}(const float* x, float* y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (threadIdx.x % 2) y[i] = x[i];\n}\n`;
const TEXT = [0, 1, 2].map(kernel).join('');

async function openStore(): Promise<DocumentStore> {
  const store = new DocumentStore({ parser: await getCudaParser(), treePassBudgetMs: FIRST_PASS_BUDGET_MS });
  store.open(URI, 'cuda-cpp', 1, TEXT);
  return store;
}

describe('first pass', () => {
  it('of a newly opened document reads no kernel body; the background reads them all', async () => {
    const store = await openStore();
    const first = store.facts(URI)!;
    assert.deepEqual(
      [first.kernels.length, first.pendingKernels, first.memoryParallelism.length, first.branches.length],
      [3, 3, 0, 0],
    );
    let slices = 0;
    while (store.complete(URI, 0)) slices++; // without a budget, one kernel per slice: it still ends
    const complete = store.facts(URI)!;
    assert.deepEqual(
      [complete.pendingKernels, complete.memoryParallelism.length, complete.branches.map((b) => b.kernel)],
      [0, 3, ['k0', 'k1', 'k2']],
    );
    assert.ok(slices >= 3 && slices <= 4, `${slices} slices`);
    store.dispose();
  });

  it('reads first the kernel a request waits in, and keeps the kernels in file order', async () => {
    const store = await openStore();
    store.facts(URI);
    assert.equal(store.complete(URI, 0, { line: 6, character: 4 }), true); // in k1's body
    const after = store.facts(URI)!;
    assert.deepEqual(
      [after.pendingKernels, after.memoryParallelism.map((m) => m.kernel), after.branches.map((b) => b.kernel)],
      [2, ['k1'], ['k1']],
    );
    while (store.complete(URI, 0));
    assert.deepEqual(
      store.facts(URI)!.memoryParallelism.map((m) => m.kernel),
      ['k0', 'k1', 'k2'],
    );
    store.dispose();
  });

  it('after a keystroke reads the kernel it changed at once, the others from the cache', async () => {
    const store = await openStore();
    store.facts(URI);
    while (store.complete(URI, 1000));
    const at = { line: 5, character: 2 }; // in k1's body
    store.change(URI, 2, [{ range: { start: at, end: at }, text: ' ' }]);
    const next = store.facts(URI)!;
    assert.deepEqual([next.pendingKernels, next.memoryParallelism.length, next.branches.length], [0, 3, 3]);
    store.dispose();
  });
});
