/**
 * Register pressure per line through the bundled server: after a saved `.cu` file compiles, the
 * server compiles its PTX too (no divergent branch needed), and the hover inside a kernel body, the
 * peak line's lens and the `cudaOccupancy/pressure` request show the estimate. nvcc is
 * test/fixtures/fake-nvcc/nvcc-capped replaying what the real nvcc 13.0 printed and wrote for
 * test/fixtures/ptx-pressure/pressure.cu on sm_80.
 */
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LspSession, REPO_ROOT, fileUri } from '../support/lsp-session';
import { fakeNvcc, loggedRuns } from '../support/nvcc';
import { PRESSURE_REQUEST, TOGGLE_PRESSURE_HEATMAP_COMMAND, type PressureResult } from '../../server/src/protocol';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'ptx-pressure');

describe('register pressure per line (bundled server, fake nvcc)', function () {
  this.timeout(60000);
  let dir: string;
  let session: LspSession | null = null;
  let argsLog: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-pressure-'));
    argsLog = path.join(dir, 'args.log');
    for (const name of ['pressure.cu', 'pressure.sm_80.txt', 'pressure.sm_80.ptx'])
      cpSync(path.join(FIXTURES, name), path.join(dir, name));
  });
  afterEach(async () => {
    await session?.stop();
    session = null;
    rmSync(dir, { recursive: true, force: true });
  });

  const hoverUntil = async (uri: string, position: { line: number; character: number }, accept: RegExp) => {
    const deadline = Date.now() + 20000;
    let markdown = '';
    while (Date.now() < deadline) {
      const hover = await session!.hover(uri, position);
      markdown = (hover?.contents as { value: string } | undefined)?.value ?? '';
      if (accept.test(markdown)) return markdown;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no matching hover: ${JSON.stringify(markdown)}\n${session!.logs.join('\n')}`);
  };

  it('shows the values live at a kernel line, the peak lens and the per-line figures once the PTX is in', async () => {
    session = await LspSession.start({
      rootDir: dir,
      settings: { architectures: ['sm_80'], nvcc: { path: fakeNvcc('nvcc-capped') } },
      initializationOptions: { cacheDir: null },
      env: { FAKE_NVCC_ARGS_LOG: argsLog },
    });
    const file = path.join(dir, 'pressure.cu');
    const uri = fileUri(file);
    session.open(uri, readFileSync(file, 'utf8'));

    const peak = await hoverUntil(uri, { line: 9, character: 60 }, /Register pressure/);
    assert.equal(
      peak,
      "**Register pressure (estimate):** about 17 values live at this line (PTX, before register allocation; ptxas allocated 12 on sm_80). The kernel's pressure peaks here.",
    );
    const inlined = await session.hover(uri, { line: 10, character: 4 });
    assert.match(
      (inlined?.contents as { value: string }).value,
      /^\*\*Register pressure \(estimate\):\*\* about \d+ values live at this line \(PTX, before register allocation; ptxas allocated 12 on sm_80\)\. Counts code inlined from `warp_sum` at line 3\. The kernel peaks at about 17 on line 10\.$/,
    );

    const result = await session.request<PressureResult>(PRESSURE_REQUEST, { uri });
    assert.ok(result);
    assert.equal(result.arch, 'sm_80');
    const dot = result.kernels.find((k) => k.kernel === 'dot_rows')!;
    assert.deepEqual(
      { peak: dot.peak, peakLine: dot.peakLine, allocated: dot.allocated, line: dot.line },
      { peak: 17, peakLine: 9, allocated: 12, line: 6 },
    );
    assert.ok(dot.lines.some((l) => l.line === 9 && l.live === 17));
    assert.deepEqual(
      result.kernels.map((k) => k.kernel),
      ['dot_rows', 'tile16', 'branchy'],
    );

    const lenses = (await session.codeLenses(uri)) ?? [];
    const peakLens = lenses.find((l) => l.range.start.line === 9);
    assert.deepEqual(peakLens?.command, {
      title: 'pressure peaks here (about 17 values live)',
      command: TOGGLE_PRESSURE_HEATMAP_COMMAND,
      arguments: [{ uri }],
    });
    // The PTX comes from the figures compile (-lineinfo -keep), not from a second nvcc run.
    assert.ok(
      session.logs.some((l) => /PTX kept from the figures compile ok for .*pressure\.cu \(sm_80\)/.test(l)),
      session.logs.join('\n'),
    );
    const runs = loggedRuns(argsLog);
    assert.ok(
      runs.every((args) => !args.includes('-ptx')),
      JSON.stringify(runs),
    );
    assert.ok(runs[0].includes('-lineinfo') && runs[0].includes('-keep'), JSON.stringify(runs[0]));
  });

  it('compiles no PTX for pressure when cudaOccupancy.pressure.enabled is off, and answers the request with null', async () => {
    // Divergence off too: branchy's divergent branch would ask for the PTX for its costs.
    session = await LspSession.start({
      rootDir: dir,
      settings: {
        architectures: ['sm_80'],
        nvcc: { path: fakeNvcc('nvcc-capped') },
        pressure: { enabled: false },
        divergence: { enabled: false },
      },
      initializationOptions: { cacheDir: null },
    });
    const file = path.join(dir, 'pressure.cu');
    const uri = fileUri(file);
    session.open(uri, readFileSync(file, 'utf8'));
    // The figures arrive (the kernel's hover names ptxas's count), and no PTX compile follows.
    await hoverUntil(uri, { line: 6, character: 17 }, /12 registers|12\/thread|12 regs/);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await session.request<PressureResult>(PRESSURE_REQUEST, { uri }), null);
    assert.ok(!session.logs.some((l) => /nvcc -ptx|PTX kept/.test(l)), session.logs.join('\n'));
    const hover = await session.hover(uri, { line: 9, character: 60 });
    assert.doesNotMatch((hover?.contents as { value: string } | undefined)?.value ?? '', /Register pressure/);
  });
});
