/**
 * `check` over very many files (issue 34, case 5): 5,000 small files took 4.7 s, but 100,000 gave no output within
 * 10 minutes, since each file's view of the workspace index read every other file's entry (the launch wrappers
 * the workspace defines once). The views now read what is worked out once per version of the index.
 */
import * as assert from 'node:assert/strict';
import { WorkspaceIndex } from '../../server/src/core/facts/workspace-index';

/** A Map that counts the entries its iterations step through. */
class CountingMap<K, V> extends Map<K, V> {
  steps = 0;
  override *[Symbol.iterator](): MapIterator<[K, V]> {
    for (const entry of super[Symbol.iterator]()) {
      this.steps++;
      yield entry;
    }
  }
  override entries(): MapIterator<[K, V]> {
    return this[Symbol.iterator]();
  }
}

/** A kernel and its launch; every hundredth file also a launch wrapper. */
const file = (k: number) =>
  `__global__ void k${k}(float* p) { p[threadIdx.x] = ${k}; }\n` +
  (k % 100 === 0
    ? `void launch${k}(float* p, int threads) { k${k}<<<1, threads>>>(p); }\n`
    : `void run${k}(float* p) { k${k}<<<1, 128>>>(p); }\n`);

describe('the workspace index over many files', () => {
  it("builds every file's view reading the others' entries a number of times linear in the files, not quadratic", () => {
    const count = 2000;
    const index = new WorkspaceIndex();
    for (let k = 0; k < count; k++) index.update(`/ws/f${k}.cu`, file(k));
    const files = new CountingMap<string, unknown>((index as unknown as { files: Map<string, unknown> }).files);
    (index as unknown as { files: Map<string, unknown> }).files = files;
    for (let k = 0; k < count; k++) {
      const view = index.constantView(`/ws/f${k}.cu`);
      // A wrapper the workspace defines once is in view of every other file.
      assert.equal(view.wrappers.has(k === 0 ? 'launch100' : 'launch0'), true);
    }
    assert.ok(files.steps < 10 * count, `${files.steps} steps through the index's files for ${count} views`);
  });
});
