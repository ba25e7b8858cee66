import * as assert from 'node:assert/strict';
import { ARCHS, parseArch, type ArchRow } from '../../server/src/core/gpu/arch-table';
import { UNKNOWN_FIGURES, occupancyFor, type KernelFigures } from '../../server/src/core/report/launch-analysis';
import { maxPotentialBlockSize, occupancy, type OccupancyQuery } from '../../server/src/core/gpu/occupancy';
import {
  archChoices,
  occupancyChartData,
  type ChartData,
  type ChartPoint,
  type ChartQuery,
  type SweepId,
} from '../../server/src/core/gpu/occupancy-sweeps';
import { chartDataFor } from '../../server/src/core/report/chart-data';
import { chartCsp, chartHtml } from '../../client/src/chart/chart-html';
import { currentText, limiterRegions, pointLines, xText } from '../../client/src/chart/chart-model';

const KB = 1024;

/** The query the hover would make, written out here so the chart is checked against the calculator, not against itself. */
function hoverQuery(
  row: ArchRow,
  blockSize: number,
  numRegs: number,
  staticBytes: number,
  dynamicBytes: number,
): OccupancyQuery {
  return {
    device: row.device,
    blockSize,
    numRegs,
    sharedSizeBytes: staticBytes,
    dynamicSmemBytes: dynamicBytes,
    shmemLimitConfig: staticBytes + dynamicBytes > 48 * KB ? 'optin' : 'default',
  };
}

function assertPointIs(point: ChartPoint, q: OccupancyQuery, what: string): void {
  const r = occupancy(q);
  assert.ok(r.ok, what);
  assert.equal(point.activeWarps, r.value.activeWarps, `${what}: warps`);
  assert.equal(point.activeBlocks, r.value.activeBlocksPerMultiprocessor, `${what}: blocks`);
  assert.equal(point.occupancy, r.value.occupancy, `${what}: occupancy`);
  assert.deepEqual(point.limitingFactors, r.value.limitingFactors, `${what}: limiters`);
  assert.equal(
    point.ceilings.registers,
    r.value.blockLimitRegs >= 2147483647 ? null : r.value.blockLimitRegs,
    `${what}: register ceiling`,
  );
  assert.equal(
    point.ceilings.sharedMemory,
    r.value.blockLimitSharedMem >= 2147483647 ? null : r.value.blockLimitSharedMem,
    `${what}: smem ceiling`,
  );
}

const sweep = (d: ChartData, id: SweepId) => d.sweeps.find((s) => s.id === id)!;
const at = (d: ChartData, id: SweepId, x: number) => {
  const p = sweep(d, id).points.find((q) => q.x === x);
  assert.ok(p, `${id} has a point at ${x}`);
  return p;
};

const base: ChartQuery = { arch: 'sm_90', blockSize: 256, numRegs: 40, sharedSizeBytes: 1024, dynamicSmemBytes: 0 };

describe('occupancy chart data', () => {
  it('charts the launch: 256 threads, 40 registers, 1 KB on sm_90 is 75% limited by registers, as the hover says', () => {
    const d = occupancyChartData({ ...base, source: 'from ptxas', kernel: 'k' })!;
    assert.equal(d.arch, 'sm_90');
    assert.equal(d.family, 'Hopper');
    assert.equal(d.maxWarps, 64);
    assert.equal(d.source, 'from ptxas');
    const p = d.current.point;
    assert.deepEqual([p.activeWarps, p.activeBlocks, p.occupancy, p.limitingFactors], [48, 6, 0.75, ['registers']]);
    const hover = occupancyFor(
      'sm_90',
      { ...UNKNOWN_FIGURES, numRegs: 40, sharedSizeBytes: 1024, source: 'ptxas' },
      256,
      0,
      null,
    ).result!;
    assert.equal(p.activeWarps, hover.activeWarps);
    assert.deepEqual(p.limitingFactors, hover.limitingFactors);
    // The current point lies on each curve.
    assert.deepEqual(at(d, 'blockSize', 256), p);
    assert.deepEqual(at(d, 'registers', 40), { ...p, x: 40 });
    assert.deepEqual(at(d, 'sharedMemory', 1024), { ...p, x: 1024 });
    assert.deepEqual(
      d.sweeps.map((s) => s.current),
      [256, 40, 1024],
    );
  });

  it('each point of each sweep is the calculator at that x (every architecture)', () => {
    for (const row of ARCHS) {
      const q: ChartQuery = {
        arch: row.name,
        blockSize: 192,
        numRegs: 37,
        sharedSizeBytes: 3000,
        dynamicSmemBytes: 5000,
      };
      const d = occupancyChartData(q)!;
      for (const p of sweep(d, 'blockSize').points)
        assertPointIs(p, hoverQuery(row, p.x, 37, 3000, 5000), `${row.name} block ${p.x}`);
      for (const p of sweep(d, 'registers').points)
        assertPointIs(p, hoverQuery(row, 192, p.x, 3000, 5000), `${row.name} regs ${p.x}`);
      for (const p of sweep(d, 'sharedMemory').points) {
        const staticBytes = Math.min(3000, p.x);
        assertPointIs(p, hoverQuery(row, 192, 37, staticBytes, p.x - staticBytes), `${row.name} smem ${p.x}`);
      }
    }
  });

  it('sweeps 32..1024 threads in warps, 0..255 registers, 0..the opt-in maximum in allocation units', () => {
    const d = occupancyChartData(base)!;
    const xs = (id: SweepId) => sweep(d, id).points.map((p) => p.x);
    assert.deepEqual(
      xs('blockSize'),
      Array.from({ length: 32 }, (_, i) => 32 * (i + 1)),
    );
    assert.deepEqual(
      xs('registers'),
      Array.from({ length: 256 }, (_, i) => i),
    );
    const smem = xs('sharedMemory');
    assert.equal(smem[0], 0);
    assert.equal(smem[smem.length - 1], 227 * KB);
    assert.ok(
      smem.every((x, i) => i === 0 || x - smem[i - 1] === 128),
      'sm_90 allocates shared memory in 128-byte units',
    );
    const volta = occupancyChartData({ ...base, arch: 'sm_70' })!;
    const vsmem = sweep(volta, 'sharedMemory').points.map((p) => p.x);
    assert.equal(vsmem[vsmem.length - 1], 96 * KB);
    assert.equal(vsmem[1], 256, 'sm_70 allocates in 256-byte units');
  });

  it("adds the launch's own value when it is off the grid, so odd block sizes and oversized launches are on the chart", () => {
    const d = occupancyChartData({ ...base, blockSize: 100, dynamicSmemBytes: 300 * KB })!;
    const blocks = sweep(d, 'blockSize').points.map((p) => p.x);
    assert.ok(blocks.includes(100) && blocks.indexOf(100) === 3, 'between 96 and 128');
    // 100 threads are 4 warps: the same occupancy as 128.
    assert.equal(at(d, 'blockSize', 100).activeWarps, at(d, 'blockSize', 128).activeWarps);
    const smem = sweep(d, 'sharedMemory');
    const total = 1024 + 300 * KB;
    assert.equal(smem.current, total);
    assert.equal(smem.points[smem.points.length - 1].x, total);
    assert.equal(at(d, 'sharedMemory', total).activeBlocks, 0, 'over the opt-in maximum: cannot launch');
    assert.deepEqual(at(d, 'sharedMemory', total).limitingFactors, ['sharedMemory']);
    assert.equal(d.current.point.activeBlocks, 0);
  });

  it("the register sweep steps only where a warp's registers cross a 256-register unit, at the known block counts", () => {
    const d = occupancyChartData(base)!;
    const pts = sweep(d, 'registers').points;
    for (let x = 1; x < pts.length; x++) {
      if (pts[x].activeBlocks !== pts[x - 1].activeBlocks)
        assert.equal((x - 1) % 8, 0, `a step between ${x - 1} and ${x} registers`);
    }
    const blocksAt = (r: number) => pts[r].activeBlocks;
    // 256 threads on sm_90 (64 K registers in 4 sub-partitions, 64 warps, 32 blocks).
    assert.deepEqual(
      [0, 32, 33, 40, 41, 48, 49, 64, 65, 80, 81, 128, 129, 255].map(blocksAt),
      [8, 8, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1],
    );
    assert.deepEqual(pts[32].limitingFactors, ['warps', 'registers']);
    assert.deepEqual(pts[24].limitingFactors, ['warps']);
  });

  it('the shared-memory sweep keeps the static size and switches to the opt-in above 48 KB', () => {
    const d = occupancyChartData({ ...base, numRegs: 16, blockSize: 128 })!;
    // 228 KB per SM, 1 KB reserved per block.
    assert.equal(at(d, 'sharedMemory', 48 * KB).activeBlocks, Math.floor(228 / 49));
    assert.equal(at(d, 'sharedMemory', 48 * KB + 128).activeBlocks, 4, 'above 48 KB needs and gets the opt-in');
    assert.equal(at(d, 'sharedMemory', 227 * KB).activeBlocks, 1);
    assert.equal(at(d, 'sharedMemory', 0).activeBlocks, 16, 'no shared memory: 16 warps... 4 warps x 16 = 64 warps');
    assert.deepEqual(at(d, 'sharedMemory', 0).limitingFactors, ['warps']);
  });

  it("counts the kernel's barriers from 9.0 on, as the hover does", () => {
    const two = occupancyChartData({ ...base, numRegs: 16, blockSize: 32, numBlockBarriers: 2 })!;
    // 32 block slots x 2 barriers per slot / 2 barriers per block.
    assert.equal(two.current.point.activeBlocks, 32);
    const four = occupancyChartData({ ...base, numRegs: 16, blockSize: 32, numBlockBarriers: 4 })!;
    assert.equal(four.current.point.activeBlocks, 16);
    // The header sets the barrier bit after the others without clearing them: block slots (32) bound before barriers came in.
    assert.deepEqual(four.current.point.limitingFactors, ['blocks', 'barriers']);
    assert.equal(four.current.numBlockBarriers, 4);
  });

  it('is null for an architecture it does not know', () => {
    assert.equal(occupancyChartData({ ...base, arch: 'sm_42' }), null);
  });

  it('offers the targets first, then every other architecture once', () => {
    const choices = archChoices(['sm_90', '9.0', 'sm_80', 'bogus']);
    assert.deepEqual(
      choices.slice(0, 2).map((c) => [c.arch, c.target]),
      [
        ['sm_90', true],
        ['sm_80', true],
      ],
    );
    assert.equal(choices.length, ARCHS.length);
    assert.ok(choices.slice(2).every((c) => !c.target));
    assert.deepEqual(new Set(choices.map((c) => c.arch)).size, ARCHS.length);
  });
});

describe('chart data request', () => {
  const ptxas = (numRegs: number, sharedSizeBytes: number | null = 1024): KernelFigures => ({
    ...UNKNOWN_FIGURES,
    numRegs,
    sharedSizeBytes,
    source: 'ptxas',
    producedAt: 1_000_000,
  });
  const input = {
    kernel: 'ns::reduce',
    archs: ['sm_80', 'sm_90'],
    figuresFor: (arch: string) => (arch === 'sm_80' ? ptxas(32) : arch === 'sm_90' ? ptxas(40) : UNKNOWN_FIGURES),
    threadsPerBlock: 256,
    dynamicSmemBytes: 0,
    now: 1_000_000 + 5_000,
  };

  it('charts the first target architecture, with the figures line the hover shows', () => {
    const d = chartDataFor(input)!;
    assert.equal(d.arch, 'sm_80');
    assert.equal(d.kernel, 'ns::reduce');
    assert.equal(d.current.numRegs, 32);
    assert.equal(d.source, '32 registers, 1 KB static smem (ptxas, sm_80, just now)');
    assert.deepEqual(d.notes, []);
    assert.deepEqual(
      d.archChoices.slice(0, 2).map((c) => c.arch),
      ['sm_80', 'sm_90'],
    );
  });

  it('charts the architecture asked for with its own figures', () => {
    const d = chartDataFor({ ...input, arch: '9.0' })!;
    assert.equal(d.arch, 'sm_90');
    assert.equal(d.current.numRegs, 40);
    assert.equal(d.current.point.activeWarps, 48);
  });

  it("borrows a target's figures for an architecture not compiled for, and says so", () => {
    const d = chartDataFor({ ...input, arch: 'sm_120' })!;
    assert.equal(d.arch, 'sm_120');
    assert.equal(d.current.numRegs, 32);
    assert.match(d.source, /ptxas, sm_80/);
    assert.deepEqual(d.notes, [
      'No register figures for sm_120 (not a target architecture, so not compiled for it): charted with the sm_80 figures.',
    ]);
  });

  it('is null when no architecture has register figures', () => {
    assert.equal(chartDataFor({ ...input, figuresFor: () => UNKNOWN_FIGURES }), null);
    assert.equal(chartDataFor({ ...input, archs: [] }), null);
  });

  it("without a static block size, charts the occupancy API's suggestion (bounded by __launch_bounds__)", () => {
    const d = chartDataFor({ ...input, threadsPerBlock: null, launchBoundsMaxThreads: 128 })!;
    const expected = maxPotentialBlockSize({
      device: parseArch('sm_80')!.device,
      numRegs: 32,
      sharedSizeBytes: 1024,
      maxThreadsPerBlock: 128,
    });
    assert.ok(expected.ok);
    assert.equal(d.current.blockSize, expected.value.blockSize);
    assert.ok(d.current.blockSize <= 128);
    assert.match(
      d.notes[0],
      new RegExp(`^No launch with a static block size: charted at ${expected.value.blockSize} threads`),
    );
  });

  it("charts unknown dynamic shared memory as 0 and says so; uses the source's static size when ptxas gave none", () => {
    const d = chartDataFor({
      ...input,
      dynamicSmemBytes: null,
      staticSharedBytes: 4096,
      figuresFor: () => ptxas(32, null),
    })!;
    assert.equal(d.current.dynamicSmemBytes, 0);
    assert.equal(d.current.sharedSizeBytes, 4096);
    assert.deepEqual(d.notes, ["The launch's dynamic shared memory is not known statically: charted with 0 bytes."]);
  });

  it('notes an architecture it cannot read and charts the default', () => {
    const d = chartDataFor({ ...input, arch: 'sm_42' })!;
    assert.equal(d.arch, 'sm_80');
    assert.deepEqual(d.notes, ['Unknown architecture `sm_42`.']);
  });
});

describe('chart view model', () => {
  it('limiter regions tile the axis from 0, each point holding the step before it', () => {
    const d = occupancyChartData(base)!;
    const regs = sweep(d, 'registers');
    const regions = limiterRegions(regs.points);
    assert.equal(regions[0].from, 0);
    assert.equal(regions[regions.length - 1].to, 255);
    for (let i = 1; i < regions.length; i++) {
      assert.equal(regions[i].from, regions[i - 1].to);
      assert.notDeepEqual(regions[i].factors, regions[i - 1].factors);
    }
    // Up to 24 registers the warp slots bind (8 blocks of 8 warps); at 25..32 (1024 registers a warp) the register file
    // holds exactly those 8 blocks too; above that registers bind alone.
    assert.deepEqual(
      regions.map((r) => [r.from, r.to, r.factors.join('+')]),
      [
        [0, 24, 'warps'],
        [24, 32, 'registers+warps'],
        [32, 255, 'registers'],
      ],
    );
  });

  it("a point's tooltip gives the calculator's exact figures", () => {
    const d = occupancyChartData(base)!;
    assert.deepEqual(pointLines(d.current.point, d.maxWarps), [
      'Occupancy 75%: 48 of 64 warps per SM',
      '6 blocks per SM, limited by registers',
      'Blocks per SM each resource allows:',
      '   registers 6  ◀',
      // 228 KB per SM / (1 KB static + 1 KB reserved) = 114.
      '   shared memory 114',
      '   warp slots 8',
      '   block slots 32',
      '   barriers 64',
    ]);
    const cannot = occupancyChartData({ ...base, numRegs: 255, blockSize: 1024 })!.current.point;
    assert.equal(pointLines(cannot, 64)[1], '0 blocks per SM, none allowed by registers');
    assert.equal(xText('sharedMemory', 12 * KB), '12 KB (12288 B) shared memory per block');
    assert.equal(
      currentText(d),
      '256 threads, 40 registers per thread, 1 KB shared memory per block: 75% occupancy (48 of 64 warps, 6 blocks per SM), limited by registers.',
    );
  });

  it('the page allows only its own nonce-tagged script and style', () => {
    const html = chartHtml({
      cspSource: 'vscode-webview://abc',
      scriptUri: 'vscode-webview://abc/dist/client/chart-view.js',
      nonce: 'N0nce',
    });
    const csp = chartCsp({ cspSource: 'vscode-webview://abc', nonce: 'N0nce' });
    assert.equal(
      csp,
      "default-src 'none'; script-src 'nonce-N0nce' vscode-webview://abc; style-src vscode-webview://abc 'nonce-N0nce'; img-src vscode-webview://abc data:; font-src vscode-webview://abc",
    );
    assert.ok(html.includes(`content="${csp.replace(/'/g, "'")}"`));
    assert.doesNotMatch(html, /unsafe-inline|unsafe-eval|https?:/);
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    assert.deepEqual(scripts, ['<script nonce="N0nce" src="vscode-webview://abc/dist/client/chart-view.js">']);
    assert.match(html, /<style nonce="N0nce">/);
    assert.doesNotMatch(html, / style="/, 'no inline style attributes');
  });
});
