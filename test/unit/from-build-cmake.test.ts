/**
 * `check --from-build` on a real CMake build (test/fixtures/cmake-build): two libraries compile the
 * same kernels with other flags (one with -maxrregcount=24), a program has a kernel of its own, and
 * the build's output is saved to build.log as CI jobs do. Needs nvcc and cmake; skipped, saying
 * so, without them. Where the toolkit has cuobjdump its objects are read too and must agree.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findNvcc } from '../support/nvcc';
import { checkJsonOf, runCli, REPO_ROOT } from '../support/cli-run';
import { findOnPath } from '../../server/src/nvcc/locate-nvcc';
import { locateCuobjdump } from '../../server/src/nvcc/cuobjdump';
import type { CheckJson } from '../../server/src/cli/check-json-types';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'cmake-build');

describe('--from-build on a CMake build with two targets (real nvcc and cmake)', function () {
  this.timeout(180_000);
  const nvcc = findNvcc();
  const cmake = findOnPath('cmake');
  let build = '';

  before(function () {
    if (!nvcc || !cmake) {
      console.log(`    (skipped: ${!nvcc ? 'no nvcc found' : 'no cmake on PATH'}; npm run test:setup installs cmake)`);
      this.skip();
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-cmake-'));
    build = path.join(dir, 'build');
    const generator = findOnPath('ninja') ? ['-G', 'Ninja'] : [];
    execFileSync(
      cmake!,
      ['-S', FIXTURE, '-B', build, ...generator, '-DCMAKE_CUDA_ARCHITECTURES=80', `-DCMAKE_CUDA_COMPILER=${nvcc}`],
      { stdio: 'pipe' },
    );
    // ptxas prints to the build's output; a CI job keeps it in a file.
    const output = execFileSync(cmake!, ['--build', build, '-j', '2'], { stdio: 'pipe' }).toString();
    fs.writeFileSync(path.join(build, 'build.log'), output);
  });

  after(() => {
    if (build) fs.rmSync(path.dirname(build), { recursive: true, force: true });
  });

  const check = (args: string[]): Promise<CheckJson> =>
    checkJsonOf([path.join(FIXTURE, 'src'), '--from-build', build, '--arch', 'sm_80', '--no-nvcc', ...args]);

  it("each kernel gets the build's figures; the kernel the targets built differently gets none, and says why", async () => {
    const json = await check([]);
    const figures = Object.fromEntries(
      json.files.flatMap((f) => f.kernels.map((k) => [k.name, k.instances[0].resources.sm_80] as const)),
    );
    assert.equal(figures.fill.numRegs, 8);
    assert.equal(figures.saxpy.numRegs, 10);
    assert.equal(figures.fill.source, 'log');
    const origin = figures.fill.origin as { path: string; files: number };
    assert.ok(origin.path.startsWith(build), origin.path);
    // stencil: 32 registers in kernels_default, 24 in kernels_capped.
    assert.equal(figures.stencil.numRegs, null);
    assert.match(String(figures.stencil.conflict), /24 registers.*32 registers|32 registers.*24 registers/);
    const main = json.files.find((f) => f.path.endsWith('main.cu'))!;
    const occupancy = Object.fromEntries(main.launches.map((l) => [l.kernel, l.occupancy.sm_80]));
    assert.ok(occupancy.fill && occupancy.saxpy, JSON.stringify(main.launches));
    assert.equal(occupancy.stencil, null);
  });

  it('reads the objects too (through cuobjdump, or their device code without it, said once), agreeing with the log', async () => {
    const run = await runCli([
      'check',
      path.join(FIXTURE, 'src'),
      '--from-build',
      build,
      '--arch',
      'sm_80',
      '--no-nvcc',
    ]);
    assert.equal(run.code, 0, run.err);
    const summary = /(\d+) object\(s\) and (\d+) log\(s\)/.exec(run.err);
    assert.ok(summary, run.err);
    assert.equal(summary[2], '1');
    // With cuobjdump or without (the device code read directly), the objects give figures that agree with the log.
    assert.ok(Number(summary[1]) > 0, run.err);
    if (!locateCuobjdump(null)) assert.equal(run.err.match(/cuobjdump not found/g)?.length, 1, run.err);
  });
});
