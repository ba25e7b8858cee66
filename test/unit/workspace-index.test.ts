import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WorkspaceIndex, normalizePath } from '../../server/src/core/facts/workspace-index';
import {
  includeDirsOfFlags,
  indexIncludedFiles,
  indexWorkspace,
  listSourceFiles,
  toIndexPath,
} from '../../server/src/files/workspace-files';
import { analyzeSnippet } from '../support/analyze-snippet';
import { loadFileAloneParser, readAlone, semanticIndex } from '../support/file-alone';

const CONFIG_H = '#pragma once\n#define BLOCK 256\nconstexpr int kSmallBlock = BLOCK / 2;\n';
const KERNELS_CUH =
  '#pragma once\n#include "../common/config.h"\n__global__ void __launch_bounds__(BLOCK) scale(float* p, int n);\ntemplate <int BS> __global__ void __launch_bounds__(BS) tiled(float* p);\n';
const KERNELS_CU =
  '#include "kernels.cuh"\n__global__ void scale(float* p, int n) { int i = threadIdx.x; if (i < n) p[i] *= 2; }\n';
const MAIN_CU =
  '#include "kernels/kernels.cuh"\nvoid run(float* p, int n) {\n  scale<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(p, n);\n  scale<<<1, 512>>>(p, n);\n  tiled<kSmallBlock><<<1, kSmallBlock>>>(p);\n  missing<<<1, 32>>>(p);\n}\n';

function workspace(): WorkspaceIndex {
  const index = semanticIndex();
  index.update('/ws/common/config.h', CONFIG_H);
  index.update('/ws/src/kernels/kernels.cuh', KERNELS_CUH);
  index.update('/ws/src/kernels/kernels.cu', KERNELS_CU);
  index.update('/ws/src/main.cu', MAIN_CU);
  return index;
}

/** The blocks of a document's launches as its unit reads them with the index's files. */
async function blocks(index: WorkspaceIndex, path: string, text = index.text(path)!) {
  const facts = await analyzeSnippet(text, { workspace: index, path });
  return facts.launches.map((l) => (l.block.value ? [l.block.value.x, l.block.value.y] : null));
}

describe('workspace-index', () => {
  before(loadFileAloneParser);

  it('normalizes paths', () => {
    assert.equal(normalizePath('/a/./b/../c.h'), '/a/c.h');
    assert.equal(normalizePath('C:\\src\\x\\..\\y.cuh'), 'C:/src/y.cuh');
    assert.equal(normalizePath('../inc/a.h'), '../inc/a.h');
  });

  it('resolves includes relative to the including file, transitively', () => {
    const index = workspace();
    assert.deepEqual(index.includeClosure('/ws/src/main.cu'), ['/ws/src/kernels/kernels.cuh', '/ws/common/config.h']);
    assert.deepEqual(
      index.get('/ws/src/main.cu')?.includes.map((i) => [i.target, i.system, i.span.start.line]),
      [['kernels/kernels.cuh', false, 0]],
    );
  });

  it('finds the kernel of a launch in an included header, merged with its definition', () => {
    const match = workspace().findKernel('/ws/src/main.cu', 'scale');
    assert.equal(match.path, '/ws/src/kernels/kernels.cu');
    assert.equal(match.kernel?.isDefinition, true);
    assert.equal(match.kernel?.launchBounds?.text, '__launch_bounds__(BLOCK)');
    assert.equal(match.boundsPath, '/ws/src/kernels/kernels.cuh');
    assert.equal(match.note, 'kernels.cuh (included), defined in kernels.cu');
  });

  it('analyses a launch against a kernel in a header: bounds, template arguments and findings', async () => {
    const index = workspace();
    const facts = await analyzeSnippet(MAIN_CU, { workspace: index, path: '/ws/src/main.cu' });
    assert.deepEqual(
      facts.launches.map((l) => l.block.value?.x ?? null),
      [256, 512, 128, 32],
    );
    assert.deepEqual(
      facts.launchTargets.map((t) => t.launchBounds?.maxThreadsPerBlock ?? null),
      [256, 256, 128, null],
    );
    assert.deepEqual(
      facts.findings.map((f) => [f.code, f.span.start.line]),
      [
        ['launch-exceeds-bounds', 3],
        ['launch-unresolved-kernel', 5],
      ],
    );
    assert.equal(facts.findings[0].related[0].uri, '/ws/src/kernels/kernels.cuh');
    assert.equal(facts.launches[0].block.note, 'BLOCK = 256 (#define, config.h:2)');
  });

  it('updates one file without touching the others', async () => {
    const index = workspace();
    const before = index.paths().map((p) => index.get(p)!.generation);
    index.update('/ws/common/config.h', '#define BLOCK 128\nconstexpr int kSmallBlock = 32;\n');
    const after = index.paths().map((p) => index.get(p)!.generation);
    assert.deepEqual(after.filter((g, k) => g !== before[k]).length, 1);
    assert.deepEqual((await blocks(index, '/ws/src/main.cu'))[0], [128, 1]);
    index.remove('/ws/common/config.h');
    assert.equal((await blocks(index, '/ws/src/main.cu'))[0], null);
  });

  it('reads a constant only through the includes: one defined elsewhere in the workspace is unknown', async () => {
    const index = semanticIndex();
    index.update('/ws/a.h', '#define ONLY_HERE 64\n');
    index.update('/ws/main.cu', 'void f() { k<<<1, ONLY_HERE>>>(); }\n');
    assert.deepEqual(await blocks(index, '/ws/main.cu'), [null]);
  });

  it('reads a .cu another .cu includes as a piece of the outermost one, with what that one defined before it', async () => {
    // A program split into pieces: main.cu includes the settings, then work.cu, which includes the
    // kernel and the host code that launches it. Each piece compiles only as part of main.cu.
    const index = semanticIndex();
    index.update('/ws/define.c', '#define NUMBER_THREADS 32\n');
    index.update('/ws/kernel.cu', '__global__ void step(float* p) { p[threadIdx.x] = 0; }\n');
    index.update(
      '/ws/master.cu',
      'void master(float* p) { dim3 threads; threads.x = NUMBER_THREADS; step<<<2, threads>>>(p); }\n',
    );
    index.update('/ws/work.cu', '#include "kernel.cu"\n#include "master.cu"\n');
    index.update('/ws/main.cu', '#include "define.c"\n#include "work.cu"\nint main() { return 0; }\n');
    index.update('/ws/alone.cu', '#include "define.c"\nvoid f(float* p) { step<<<1, NUMBER_THREADS>>>(p); }\n');
    assert.deepEqual(index.unitsFor('/ws/master.cu'), ['/ws/main.cu']);
    assert.deepEqual(index.unitsFor('/ws/kernel.cu'), ['/ws/main.cu']);
    assert.deepEqual(index.unitsFor('/ws/main.cu'), []);
    const facts = await analyzeSnippet(index.text('/ws/master.cu')!, { workspace: index, path: '/ws/master.cu' });
    assert.deepEqual(
      facts.launches.map((l) => [l.kernelName, l.block.value?.x ?? null]),
      [['step', 32]],
    );
    // A .cu nothing includes stays its own unit.
    const alone = await analyzeSnippet(index.text('/ws/alone.cu')!, { workspace: index, path: '/ws/alone.cu' });
    assert.deepEqual(
      alone.launches.map((l) => [l.kernelName, l.block.value?.x ?? null]),
      [['step', 32]],
    );
  });

  it('reads a file when first asked about it, and not one whose text cannot name what is asked', () => {
    const read: string[] = [];
    const index = new WorkspaceIndex({
      read: (path, text) => {
        read.push(path);
        return readAlone(text, path);
      },
    });
    index.update('/ws/a.cu', '__global__ void alpha(float* p) {}\n');
    index.update('/ws/b.cu', '__global__ void beta(float* p) {}\n');
    index.update(
      '/ws/c.cuh',
      '__global__ void gamma(float* p);\nvoid opt() { cudaFuncSetAttribute(gamma, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536); }\n',
    );
    index.update('/ws/main.cu', '#include "c.cuh"\nvoid f() {}\n');
    assert.deepEqual(read, []);
    assert.equal(index.findKernel('/ws/main.cu', 'beta').path, '/ws/b.cu');
    assert.deepEqual(read, ['/ws/b.cu']);
    assert.deepEqual(
      index.smemOptInsInView('/ws/main.cu').map((o) => [o.kernelName, o.bytes.value]),
      [['gamma', 65536]],
    );
    assert.deepEqual(read, ['/ws/b.cu', '/ws/c.cuh']);
    // Loaded elsewhere unread, read here when asked.
    const other = new WorkspaceIndex({ read: (path, text) => readAlone(text, path) });
    other.load([index.entry('/ws/a.cu')!]);
    assert.equal(other.get('/ws/a.cu')?.kernels[0].name, 'alpha');
  });

  it('does not pick one of two kernels with the same name in different namespaces', () => {
    const index = semanticIndex();
    index.update('/ws/a.cuh', 'namespace a { __global__ void k(float*); }\n');
    index.update('/ws/b.cuh', 'namespace b { __global__ void k(float*); }\n');
    index.update('/ws/main.cu', 'void f() {}\n');
    assert.equal(index.findKernel('/ws/main.cu', 'k').kernel, null);
    assert.equal(index.findKernel('/ws/main.cu', 'b::k').kernel?.qualifiedName, 'b::k');
  });

  it('uses include directories for system-style includes', () => {
    const index = semanticIndex({ includeDirs: ['/ws/include'] });
    index.update('/ws/include/lib/cfg.h', '#define LIB_BS 64\n');
    index.update('/ws/src/x.cu', '#include <lib/cfg.h>\n');
    assert.deepEqual(index.includeClosure('/ws/src/x.cu'), ['/ws/include/lib/cfg.h']);
  });

  it('reads a workspace from disk, skipping build directories and huge files', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'occ-ws-'));
    try {
      fs.mkdirSync(path.join(root, 'src'));
      fs.mkdirSync(path.join(root, 'build'));
      fs.mkdirSync(path.join(root, 'node_modules'));
      fs.writeFileSync(path.join(root, 'src', 'config.h'), CONFIG_H);
      fs.writeFileSync(path.join(root, 'src', 'main.cu'), '#include "config.h"\n');
      fs.writeFileSync(path.join(root, 'src', 'notes.txt'), 'x');
      fs.writeFileSync(path.join(root, 'build', 'gen.cu'), '');
      fs.writeFileSync(path.join(root, 'node_modules', 'x.h'), '');
      fs.writeFileSync(path.join(root, 'src', 'huge.cuh'), 'x'.repeat(2000));
      const scan = listSourceFiles([root], { maxFileBytes: 1000 });
      assert.deepEqual(
        scan.files.map((f) => path.relative(root, f)),
        [path.join('src', 'config.h'), path.join('src', 'main.cu')],
      );
      assert.deepEqual(
        scan.skipped.map((s) => path.relative(root, s.path)),
        [path.join('src', 'huge.cuh')],
      );
      const { index } = indexWorkspace([root], { maxFileBytes: 1000, index: semanticIndex() });
      const main = toIndexPath(path.join(root, 'src', 'main.cu'));
      assert.deepEqual(index.includeClosure(main), [toIndexPath(path.join(root, 'src', 'config.h'))]);
      assert.deepEqual(await blocks(index, main, '#include "config.h"\nvoid f() { k<<<1, BLOCK>>>(); }\n'), [[256, 1]]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('follows includes out of the indexed folders: beside the file, then in its -I folders, transitively', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'occ-inc-'));
    try {
      for (const dir of ['kernels', 'common', 'include/tiles']) fs.mkdirSync(path.join(root, dir), { recursive: true });
      fs.writeFileSync(path.join(root, 'common', 'sizes.h'), '#pragma once\n#define TILE 32\n');
      fs.writeFileSync(
        path.join(root, 'include', 'layers.h'),
        '#pragma once\n#include <tiles/shape.h>\nconstexpr int kRows = TILE / 4;\n',
      );
      fs.writeFileSync(path.join(root, 'include', 'tiles', 'shape.h'), '#pragma once\nconstexpr int kCols = 64;\n');
      const main = path.join(root, 'kernels', 'norm.cu');
      fs.writeFileSync(
        main,
        '#include "../common/sizes.h"\n#include "layers.h"\n#include <vector>\nvoid host() { k<<<1, dim3(TILE, kRows)>>>(); }\n',
      );
      const { index } = indexWorkspace([path.join(root, 'kernels')], { index: semanticIndex() });
      index.setIncludeDirs((file) => (file === toIndexPath(main) ? [toIndexPath(path.join(root, 'include'))] : []));
      assert.deepEqual(index.includeClosure(toIndexPath(main)), []);
      const added = indexIncludedFiles(index).map((f) => path.relative(toIndexPath(root), f));
      assert.deepEqual(added, ['common/sizes.h', 'include/layers.h']);
      // `layers.h` has no -I folder of its own: `<tiles/shape.h>` stays unread by the index.
      assert.deepEqual(
        index.includeClosure(toIndexPath(main)).map((f) => path.relative(toIndexPath(root), f)),
        ['common/sizes.h', 'include/layers.h'],
      );
      assert.deepEqual(await blocks(index, toIndexPath(main)), [[32, 8]]);
      assert.deepEqual(
        includeDirsOfFlags(
          ['-I', 'include', '-Ithird/x', '-isystem', '/opt/sys', '--include-path=gen', '-DX=1'],
          '/ws',
        ),
        ['/ws/include', '/ws/third/x', '/opt/sys', '/ws/gen'],
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
