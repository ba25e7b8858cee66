/**
 * The workspace index outlives the analyses it is given: an open document's analysis is dropped
 * when the document is no longer in use, its entry in the index stays. The index must keep copies,
 * not the analysis's objects: other caches key entries by them (WeakMaps of per-kernel keys and
 * launch targets), which it would keep alive, with the chunk texts their strings were cut from.
 */
import * as assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DocumentStore } from '../../server/src/lsp/document-store';
import { WorkspaceIndex } from '../../server/src/core/facts/workspace-index';
import { getCudaParser } from '../support/grammar';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const KERNELS = 40;
/** A constant, a kernel bounded by it and its launch, then a long comment (208 lines in all). */
const unit = (i: number) =>
  `constexpr int kBlock${i} = 128;\n__global__ void __launch_bounds__(kBlock${i}) scale_kernel_${i}(float* __restrict__ data, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) data[i] *= 2.0f;\n}\n` +
  `void run_${i}(float* data, int n) {\n  scale_kernel_${i}<<<(n + kBlock${i} - 1) / kBlock${i}, kBlock${i}>>>(data, n);\n}\n` +
  `// ${'padding '.repeat(16)}\n`.repeat(200);

describe('WorkspaceIndex memory', function () {
  this.timeout(60000);

  it('keeps copies, not the objects of the analysis it indexed, once that analysis is dropped', async () => {
    const parser = await getCudaParser();
    // As the server does: the document's facts (kernel bodies included) go into the index; then its
    // analysis is dropped (forgotten out of use), and the index told so.
    const index = new WorkspaceIndex();
    const analyse = () => {
      const text = Array.from({ length: KERNELS }, (_, i) => unit(i)).join('');
      const uri = 'file:///ws/big.cu';
      const store = new DocumentStore({ parser, analyzeOptions: () => ({ workspace: index, path: '/ws/big.cu' }) });
      store.open(uri, 'cuda-cpp', 1, text);
      const facts = store.facts(uri)!;
      while (store.complete(uri, 1000));
      index.updateFromAnalysis('/ws/big.cu', store.facts(uri)!);
      assert.equal(
        index.get('/ws/big.cu')!.kernels[0],
        facts.kernels[0],
        'while the analysis is in use, its own objects (nothing copied per keystroke)',
      );
      store.close(uri);
      index.keepCopies('/ws/big.cu');
      return { kernel: new WeakRef(facts.kernels[0]), firstKernel: JSON.stringify(facts.kernels[0]) };
    };
    const { kernel, firstKernel } = analyse();
    // A WeakRef holds its target until the end of the job that made it (or last dereferenced it), and
    // on a loaded machine the engine's background compiler can hold an object a little longer: a few
    // rounds of a new job and a full collection, as long as it is still there.
    let alive = true;
    for (let round = 0; round < 8 && alive; round++) {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      alive = kernel.deref() !== undefined;
    }

    assert.equal(alive, false, "the analysis's kernel died with it");
    const indexed = index.get('/ws/big.cu')!;
    assert.equal(indexed.kernels.length, KERNELS);
    assert.equal(JSON.stringify(indexed.kernels[0]), firstKernel, 'the index has an equal copy');
    assert.equal(index.findKernel('/ws/other.cu', 'scale_kernel_7').kernel?.launchBounds?.maxThreadsPerBlock, 128);
  });
});
