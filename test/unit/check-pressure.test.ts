/**
 * `check`'s register pressure per kernel (cli/check-pressure.ts): `kernels[].pressure` in the JSON,
 * with per-line figures under `--lines`, and the peak line in the text. nvcc is
 * test/fixtures/fake-nvcc/nvcc-capped replaying the real nvcc 13.0's ptxas report and PTX of
 * test/fixtures/ptx-pressure/pressure.cu (sm_80).
 */
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { checkJsonOf, runCli, REPO_ROOT } from '../support/cli-run';
import { fakeNvcc } from '../support/nvcc';
import type { CheckJson } from '../../server/src/cli/check-json-types';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'ptx-pressure');

describe('check: register pressure per kernel', function () {
  this.timeout(60000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-check-pressure-'));
    for (const name of ['pressure.cu', 'pressure.sm_80.txt', 'pressure.sm_80.ptx'])
      cpSync(path.join(FIXTURES, name), path.join(dir, name));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives each kernel its peak and peak line in the JSON, and the lines with --lines', async () => {
    const plain = await checkJsonOf(['pressure.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped')], dir);
    const kernels = new Map(plain.files[0].kernels.map((k) => [k.name, k]));
    assert.deepEqual(kernels.get('dot_rows')!.pressure, {
      peak: 17,
      peakLine: 10,
      estimate: 'ptx',
      arch: 'sm_80',
      allocated: 12,
    });
    assert.equal((kernels.get('tile16')!.pressure as { peakLine: number }).peakLine, 19);

    const withLines = await checkJsonOf(
      ['pressure.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped'), '--lines'],
      dir,
    );
    const dot = withLines.files[0].kernels.find((k) => k.name === 'dot_rows')!.pressure as {
      peak: number;
      lines: Array<{ line: number; live: number }>;
    };
    assert.ok(dot.lines.length >= 4, JSON.stringify(dot.lines));
    assert.deepEqual(
      dot.lines.find((l) => l.line === 10),
      { line: 10, live: 17 },
    );
    assert.ok(dot.lines.every((l) => l.line >= 7 && l.line <= 13 && l.live <= dot.peak));
    assert.deepEqual(
      dot.lines.map((l) => l.line),
      [...dot.lines.map((l) => l.line)].sort((a, b) => a - b),
    );
  });

  it('is null without PTX (no nvcc)', async () => {
    const json = await checkJsonOf(['pressure.cu', '--arch', 'sm_80', '--no-nvcc'], dir);
    assert.ok(json.files[0].kernels.every((k) => k.pressure === null));
  });

  it("shows the peak line under the kernel's figures in the text", async () => {
    const run = await runCli(['check', 'pressure.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped')], dir);
    const lines = run.out.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  kernel dot_rows (line 7)'));
    assert.ok(at >= 0, run.out);
    assert.deepEqual(lines.slice(at + 1, at + 3), [
      '    sm_80   12 registers, 0 B static smem, 0 B stack, no spills [ptxas]',
      '    pressure peaks at line 10: about 17 values live (PTX estimate for sm_80, before register allocation; ptxas allocated 12)',
    ]);
  });

  describe("with nvdisasm (a fake one, NVIDIA's documented format)", () => {
    const SASS_FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sass-pressure');
    const FAKE_NVDISASM_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-nvdisasm');
    const nodeOnly = path.dirname(process.execPath);
    let sassDir: string;
    let savedPath: string | undefined;
    before(() => {
      sassDir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-check-sass-'));
      for (const name of ['spills.cu', 'spills.sm_80.ptx', 'spills.sm_80.sass.txt'])
        cpSync(path.join(SASS_FIXTURES, name), path.join(sassDir, name));
      savedPath = process.env.PATH;
    });
    afterEach(() => {
      process.env.PATH = savedPath;
    });
    after(() => rmSync(sassDir, { recursive: true, force: true }));

    it('reads the pressure from SASS and puts the spills at their lines (documented format)', async () => {
      process.env.PATH = `${FAKE_NVDISASM_DIR}${path.delimiter}${nodeOnly}`;
      const run = await runCli(
        ['check', 'spills.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped'), '--format', 'json'],
        sassDir,
      );
      const json = JSON.parse(run.out) as CheckJson;
      assert.deepEqual(json.files[0].kernels[0].pressure, {
        peak: 48,
        peakLine: 6,
        estimate: 'sass',
        arch: 'sm_80',
        allocated: 48,
      });
      assert.deepEqual(
        json.files[0].diagnostics.filter((f) => f.code === 'register-spill-here').map((f) => [f.line, f.severity]),
        [
          [6, 'info'],
          [8, 'info'],
        ],
      );
      assert.doesNotMatch(run.err, /nvdisasm not found/);
    });

    it('says once on stderr, with --verbose, that the pressure is the PTX estimate when there is no nvdisasm', async () => {
      process.env.PATH = nodeOnly;
      const args = ['check', 'spills.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped'), '--format', 'json'];
      // A missing optional tool changes no figure: without --verbose, not a word.
      assert.doesNotMatch((await runCli(args, sassDir)).err, /nvdisasm/);
      const run = await runCli([...args, '--verbose'], sassDir);
      const json = JSON.parse(run.out) as CheckJson;
      assert.equal((json.files[0].kernels[0].pressure as { estimate: string }).estimate, 'ptx');
      assert.equal(run.err.match(/nvdisasm not found/g)?.length, 1, run.err);
      assert.ok(json.files[0].diagnostics.every((f) => f.code !== 'register-spill-here'));
    });
  });
});
