/**
 * Which files `check DIR` reads: .cu and .cuh, and the C++ headers that hold CUDA code (a header-only
 * library's kernels and launchers), not every header of the tree.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectSourceFiles } from '../../server/src/cli/source-files';

describe('check: the files a directory gives', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occupancy-sources-'));
    const write = (name: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    };
    write('src/main.cu', '#include "../include/lib/encoding.h"\nint main() { return 0; }\n');
    write('include/lib/encoding.h', 'template <int N> __global__ void encode(float* p) { p[threadIdx.x] = N; }\n');
    write('include/lib/launch.hpp', 'template <class K> void go(K k, float* p) { k<<<1, 128>>>(p); }\n');
    write('include/lib/plain.h', '#pragma once\nint add(int a, int b);\n');
    write('include/lib/merge.h', '<<<<<<< HEAD\nint a;\n=======\nint b;\n>>>>>>> other\n');
    write('include/lib/util.cuh', '#pragma once\n');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads .cu and .cuh files, and headers with a kernel or a launch, in order', () => {
    assert.deepEqual(
      collectSourceFiles([dir], process.cwd()).map((f) => path.relative(dir, f).split(path.sep).join('/')),
      ['include/lib/encoding.h', 'include/lib/launch.hpp', 'include/lib/util.cuh', 'src/main.cu'],
    );
  });

  it('takes a header named on the command line as given', () => {
    const plain = path.join(dir, 'include/lib/plain.h');
    assert.deepEqual(collectSourceFiles([plain], process.cwd()), [plain]);
  });
});
