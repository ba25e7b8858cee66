import * as assert from 'node:assert/strict';
import { unitsForHeader } from '../../server/src/files/translation-units';
import { WorkspaceIndex } from '../../server/src/core/facts/workspace-index';

describe('the translation units compiled for a header', () => {
  const files: Record<string, string> = {
    '/w/kernels.cuh': 'template <typename T> __global__ void scale(T* x) {}\n',
    '/w/ops.cuh': '#include "kernels.cuh"\n',
    '/w/a.cu': '#include "ops.cuh"\nvoid f(float* x) { scale<<<1, 32>>>(x); }\n',
    '/w/b.cu': '#include "kernels.cuh"\nvoid g() {}\n',
    '/w/c.cu': '#include "kernels.cuh"\nvoid h(double* x) { scale<<<1, 32>>>(x); }\n',
    '/w/other.cu': 'void k() {}\n',
  };
  const index = new WorkspaceIndex();
  for (const [path, text] of Object.entries(files)) index.update(path, text);

  it('finds the files that include it, directly or through another header, nearest first', () => {
    assert.deepEqual(index.includersOf('/w/kernels.cuh'), ['/w/ops.cuh', '/w/b.cu', '/w/c.cu', '/w/a.cu']);
  });

  it('takes the .cu files compile_commands.json lists first, then those that name its kernels, a few at most', () => {
    const choose = (database: string[], limit?: number) =>
      unitsForHeader({
        includers: index.includersOf('/w/kernels.cuh'),
        databaseFiles: new Set(database),
        kernelNames: ['scale'],
        limit,
        readText: (f) => files[f] ?? null,
      });
    assert.deepEqual(choose([]), ['/w/c.cu', '/w/a.cu', '/w/b.cu']);
    assert.deepEqual(choose(['/w/b.cu'], 2), ['/w/b.cu', '/w/c.cu']);
    assert.deepEqual(unitsForHeader({ includers: [], databaseFiles: new Set(), kernelNames: ['scale'] }), []);
  });
});
