/**
 * Kernel figures read from device code without cuobjdump (core/compiler/cubin-resources.ts), checked
 * against `ptxas -v` of the very same compile: every kernel of each file, on two architectures, in
 * the object nvcc wrote (its `.nv_fatbin`) and in a cubin. Needs the real nvcc; skipped without it.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { readDeviceCode, type CubinFunctionFigures } from '../../server/src/core/compiler/cubin-resources';
import { parsePtxasOutput } from '../../server/src/core/compiler/ptxas-output';
import { realNvccOrSkip } from '../support/nvcc';
import { REPO_ROOT } from '../support/cli-run';

const run = promisify(execFile);
const FILES = [
  'test/fixtures/ptxas/plain.cu',
  'test/fixtures/ptxas/spills.cu',
  'test/fixtures/ptxas/templates.cu',
  'examples/gemm-tiled.cu',
  'examples/reduce.cu',
];
const ARCHS = ['-gencode', 'arch=compute_80,code=sm_80', '-gencode', 'arch=compute_90,code=sm_90'];

const ptxasView = (e: {
  mangledName: string;
  arch: string | null;
  numRegs: number | null;
  sharedSizeBytes: number;
  stackFrameBytes: number;
  barriers: number | null;
}) =>
  `${e.arch} ${e.mangledName}: ${e.numRegs} regs, ${e.sharedSizeBytes} smem, ${e.stackFrameBytes} stack, ${e.barriers} barriers`;
const elfView = (f: CubinFunctionFigures) =>
  `${f.arch} ${f.name}: ${f.registers} regs, ${f.sharedBytes} smem, ${f.stackFrameBytes} stack, ${f.barriers} barriers`;

describe('device code figures without cuobjdump, checked against ptxas -v of the same compile (real nvcc)', function () {
  this.timeout(240_000);
  const nvcc = realNvccOrSkip();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-cubin-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const file of FILES) {
    it(`${file}: each kernel's registers, static shared memory, stack frame and barriers on sm_80 and sm_90 as ptxas said, or none`, async () => {
      const object = path.join(dir, `${path.basename(file)}.o`);
      const compiled = await run(nvcc, ['-c', '-Xptxas', '-v', ...ARCHS, '-o', object, path.join(REPO_ROOT, file)], {
        maxBuffer: 64 * 1024 * 1024,
      });
      const expected = parsePtxasOutput(compiled.stderr + compiled.stdout)
        .entries.map(ptxasView)
        .sort();
      assert.ok(expected.length > 0);
      const read = readDeviceCode(fs.readFileSync(object));
      assert.equal(read.compressedEntries, 0, 'CUDA 13 leaves the SASS of a fatbin uncompressed by default');
      // Every figure read is ptxas's; a kernel is read, or passed over when its shared memory is mixed with reserved (sm_90).
      const got = read.figures.map(elfView);
      assert.deepEqual(
        got.filter((g) => !expected.includes(g)),
        [],
      );
      assert.equal(got.length + read.uncertainKernels, expected.length);
      // An archive member starts at any even offset: the same figures.
      const shifted = Buffer.concat([Buffer.from('!<arch>\n' + ' '.repeat(62)), fs.readFileSync(object)]);
      assert.deepEqual(readDeviceCode(shifted).figures.map(elfView), got);
      assert.deepEqual(
        got.filter((g) => g.startsWith('sm_80')).sort(),
        expected.filter((e) => e.startsWith('sm_80')),
        'on sm_80 every kernel is read',
      );
    });
  }

  it('a cubin (nvcc -cubin) reads the same; a compressed entry is counted and not read', async () => {
    const cubin = path.join(dir, 'spills.cubin');
    const compiled = await run(nvcc, [
      '-cubin',
      '-Xptxas',
      '-v',
      '-arch=sm_80',
      '-o',
      cubin,
      path.join(REPO_ROOT, FILES[1]),
    ]);
    const expected = parsePtxasOutput(compiled.stderr).entries.map(ptxasView).sort();
    assert.deepEqual(readDeviceCode(fs.readFileSync(cubin)).figures.map(elfView).sort(), expected);
    assert.ok(expected.length >= 3);
    // Mark the object's SASS entries compressed, as -compress-mode would: nothing is read from them.
    const objectFile = path.join(dir, 'spills-marked.o');
    await run(nvcc, ['-c', ...ARCHS, '-o', objectFile, path.join(REPO_ROOT, FILES[1])]);
    const object = fs.readFileSync(objectFile);
    const magic = Buffer.from([0x50, 0xed, 0x55, 0xba]);
    const at = object.indexOf(magic);
    const fatEnd = at + 16 + Number(object.readBigUInt64LE(at + 8));
    let marked = 0;
    for (let p = at + 16; p < fatEnd;) {
      const header = object.readUInt32LE(p + 4);
      const size = Number(object.readBigUInt64LE(p + 8));
      if (object.readUInt16LE(p) === 2) {
        object.writeBigUInt64LE(object.readBigUInt64LE(p + 0x28) | 0x2000n, p + 0x28);
        marked++;
      }
      p += header + size;
    }
    const read = readDeviceCode(object);
    assert.equal(read.figures.length, 0);
    assert.equal(read.compressedEntries, marked);
  });
});
