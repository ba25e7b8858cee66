/**
 * `check --check-fixes` (cli/check-fixes.ts): each register cap the fixes propose is compiled, and
 * `launches[].nextSteps` and the text say what ptxas did. With test/fixtures/fake-nvcc/nvcc-capped
 * (fixed rules), and end to end with the real nvcc on a register-limited kernel (skipped without one).
 */
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { checkJsonOf, runCli, REPO_ROOT } from '../support/cli-run';
import { fakeNvcc, realNvccOrSkip } from '../support/nvcc';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'register-caps');

interface NextStep {
  kind: string;
  fix: string;
  arch: string;
  maxRegsPerThread: number;
  occupancy: number;
  checked: Record<
    string,
    {
      numRegs: number;
      spillStoreBytes: number;
      spillLoadBytes: number;
      stackFrameBytes: number;
      occupancy: number | null;
    }
  > | null;
}

describe('check --check-fixes', function () {
  this.timeout(60000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-check-fixes-'));
    cpSync(path.join(FIXTURES, 'capped.cu'), path.join(dir, 'capped.cu'));
    cpSync(path.join(FIXTURES, 'register-limited.cu'), path.join(dir, 'register-limited.cu'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("adds what ptxas did with each cap to the launches' next steps (fake nvcc)", async () => {
    const json = await checkJsonOf(
      ['capped.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped'), '--check-fixes'],
      dir,
    );
    const [roomy, heavy] = json.files[0].launches.map((l) => l.nextSteps as NextStep[]);
    assert.deepEqual(
      roomy.map((s) => [s.kind, s.fix, s.arch, s.maxRegsPerThread, s.occupancy]),
      [
        ['launch-bounds', '__launch_bounds__(256, 5)', 'sm_80', 48, 0.625],
        ['maxrregcount', '-maxrregcount=48', 'sm_80', 48, 0.625],
      ],
    );
    for (const step of roomy)
      assert.deepEqual(step.checked, {
        sm_80: { numRegs: 48, spillStoreBytes: 0, spillLoadBytes: 0, stackFrameBytes: 0, occupancy: 0.625 },
      });
    for (const step of heavy)
      assert.deepEqual(step.checked, {
        sm_80: { numRegs: 48, spillStoreBytes: 128, spillLoadBytes: 132, stackFrameBytes: 128, occupancy: 0.625 },
      });

    const text = await runCli(
      ['check', 'capped.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped'), '--check-fixes'],
      dir,
    );
    assert.ok(
      text.out.includes('    next step __launch_bounds__(256, 5) (sm_80): ptxas: 48 registers, no spills → 62.5%\n'),
      text.out,
    );
    assert.ok(
      text.out.includes(
        '    next step -maxrregcount=48 (sm_80): ptxas: 48 registers, 128 B spill stores / 132 B loads → 62.5%: the spills may cost more than the occupancy gains\n',
      ),
      text.out,
    );
  });

  it('leaves the next steps out without --check-fixes', async () => {
    const json = await checkJsonOf(['capped.cu', '--arch', 'sm_80', '--nvcc', fakeNvcc('nvcc-capped')], dir);
    assert.ok(json.files[0].launches.every((l) => !('nextSteps' in l)));
  });

  describe('with the real nvcc', () => {
    const nvcc = realNvccOrSkip();
    it('checks the 48-register next step of a register-limited kernel: ptxas meets the cap, and says what it spilled', async () => {
      const json = await checkJsonOf(['register-limited.cu', '--arch', 'sm_80', '--nvcc', nvcc, '--check-fixes'], dir);
      const launch = json.files[0].launches[0];
      const steps = launch.nextSteps as NextStep[];
      assert.deepEqual(
        steps.map((s) => [s.kind, s.fix, s.maxRegsPerThread]),
        [
          ['launch-bounds', '__launch_bounds__(256, 5)', 48],
          ['maxrregcount', '-maxrregcount=48', 48],
        ],
      );
      for (const step of steps) {
        const checked = step.checked?.sm_80;
        assert.ok(checked, JSON.stringify(step));
        assert.ok(checked.numRegs <= 48, JSON.stringify(checked));
        assert.equal(checked.occupancy, 0.625);
        assert.ok(
          [checked.spillStoreBytes, checked.spillLoadBytes, checked.stackFrameBytes].every(
            (n) => Number.isInteger(n) && n >= 0,
          ),
          JSON.stringify(checked),
        );
      }
      const text = await runCli(
        ['check', 'register-limited.cu', '--arch', 'sm_80', '--nvcc', nvcc, '--check-fixes'],
        dir,
      );
      assert.match(
        text.out,
        /\n {4}next step __launch_bounds__\(256, 5\) \(sm_80\): ptxas: \d+ registers, (no spills|\d+ B spill stores \/ \d+ B loads) → 62\.5%/,
      );
      // The kernel's own figures are untouched by the variants, and its pressure peaks in the loop (lines 7 to 11).
      const kernel = json.files[0].kernels[0];
      assert.equal((kernel.instances[0].resources.sm_80 as { numRegs: number }).numRegs > 48, true);
      const peakLine = (kernel.pressure as { peakLine: number }).peakLine;
      assert.ok(peakLine >= 7 && peakLine <= 11, String(peakLine));
    });
  });
});
