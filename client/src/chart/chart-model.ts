/**
 * What the chart view draws, worked out from the chart data without the DOM: the
 * limiter regions of a sweep, the tooltip lines of a point, axis labels. Shared by the
 * webview script and the tests.
 */
import type {
  ChartData,
  ChartPoint,
  ChartSweep,
  LimitingFactor,
  SweepId,
  WavesChart,
  WavesPoint,
} from '../../../server/src/protocol';
import { bytes, LIMIT_NAMES, percent } from '../../../server/src/protocol';

/** The theme colour (a VS Code CSS variable) of each limiter's region. */
export const LIMITER_COLOR_VARS: Record<LimitingFactor, string> = {
  warps: '--vscode-charts-blue',
  registers: '--vscode-charts-red',
  sharedMemory: '--vscode-charts-yellow',
  blocks: '--vscode-charts-green',
  barriers: '--vscode-charts-purple',
  virtualResources: '--vscode-charts-orange',
};

/** Legend order. */
export const LIMITER_ORDER: readonly LimitingFactor[] = [
  'registers',
  'sharedMemory',
  'warps',
  'blocks',
  'barriers',
  'virtualResources',
];

/** An x range over which the same limits bind. `factors` empty: the launch cannot run there. */
export interface LimiterRegion {
  from: number;
  to: number;
  factors: LimitingFactor[];
}

const sameFactors = (a: readonly LimitingFactor[], b: readonly LimitingFactor[]) =>
  a.length === b.length && a.every((f, i) => f === b[i]);

/**
 * Regions of constant limiters. Each point holds on (previous x, x] (resources are
 * allocated in whole units, so the value at a grid point is the value of the whole step
 * before it); the first point's region starts at `axisMin`.
 */
export function limiterRegions(points: readonly ChartPoint[], axisMin = 0): LimiterRegion[] {
  const regions: LimiterRegion[] = [];
  let from = axisMin;
  for (const p of points) {
    const factors = p.activeBlocks > 0 ? LIMITER_ORDER.filter((f) => p.limitingFactors.includes(f)) : [];
    const last = regions[regions.length - 1];
    if (last && sameFactors(last.factors, factors)) last.to = p.x;
    else regions.push({ from, to: p.x, factors });
    from = p.x;
  }
  return regions;
}

/** The limiters that bind somewhere in the data, in legend order. */
export function limitersPresent(data: ChartData): LimitingFactor[] {
  const seen = new Set<LimitingFactor>();
  for (const s of data.sweeps)
    for (const p of s.points) if (p.activeBlocks > 0) for (const f of p.limitingFactors) seen.add(f);
  return LIMITER_ORDER.filter((f) => seen.has(f));
}

/** "256 threads per block", "40 registers per thread", "12 KB (12288 B) shared memory per block" */
export function xText(id: SweepId, x: number): string {
  switch (id) {
    case 'blockSize':
      return `${x} threads per block`;
    case 'registers':
      return `${x} register${x === 1 ? '' : 's'} per thread`;
    case 'sharedMemory':
      return `${x >= 1024 ? `${bytes(x)} (${x} B)` : `${x} B`} shared memory per block`;
  }
}

/** Axis tick text. */
export function tickText(id: SweepId, x: number): string {
  return id === 'sharedMemory' ? (x === 0 ? '0' : `${Math.round(x / 1024)} KB`) : `${x}`;
}

export function limitersText(factors: readonly LimitingFactor[]): string {
  return factors.map((f) => LIMIT_NAMES[f] ?? f).join(' and ');
}

/** The tooltip of one point: the exact figures the calculator gave, each resource's ceiling, the binding ones marked. */
export function pointLines(point: ChartPoint, maxWarps: number): string[] {
  if (point.error) return [`The calculator refuses this configuration (${point.error}).`];
  const lines = [
    `Occupancy ${percent(point.occupancy)}: ${point.activeWarps} of ${maxWarps} warps per SM`,
    `${point.activeBlocks} block${point.activeBlocks === 1 ? '' : 's'} per SM, ${point.activeBlocks > 0 ? 'limited by' : 'none allowed by'} ${limitersText(point.limitingFactors)}`,
    'Blocks per SM each resource allows:',
  ];
  const c = point.ceilings;
  const rows: Array<[LimitingFactor, number | null]> = [
    ['registers', c.registers],
    ['sharedMemory', c.sharedMemory],
    ['warps', c.warps],
    ['blocks', c.blocks],
    ['barriers', c.barriers],
  ];
  for (const [factor, blocks] of rows) {
    if (blocks !== null)
      lines.push(`   ${LIMIT_NAMES[factor]} ${blocks}${point.limitingFactors.includes(factor) ? '  ◀' : ''}`);
  }
  return lines;
}

/** The one-line summary of the launch charted. */
export function currentText(data: ChartData): string {
  const c = data.current;
  const smem = c.sharedSizeBytes + c.dynamicSmemBytes;
  const p = c.point;
  const where = `${c.blockSize} threads, ${c.numRegs} registers per thread, ${bytes(smem)} shared memory per block`;
  if (p.error) return `${where}: the calculator refuses it (${p.error}).`;
  if (p.activeBlocks === 0)
    return `${where}: cannot launch on ${data.arch}; ${limitersText(p.limitingFactors)} allow no block.`;
  return `${where}: ${percent(p.occupancy)} occupancy (${p.activeWarps} of ${data.maxWarps} warps, ${p.activeBlocks} block${p.activeBlocks === 1 ? '' : 's'} per SM), limited by ${limitersText(p.limitingFactors)}.`;
}

/** The x axis maximum of a sweep: the grid's end, or the launch's value when it lies beyond. */
export function axisMax(sweep: ChartSweep): number {
  return sweep.points.length ? sweep.points[sweep.points.length - 1].x : sweep.current;
}

/** "Grid of ceil(n / 256) blocks on the A100 SXM4 40GB: one wave per 221,184 of n" */
export function wavesTitle(w: WavesChart): string {
  return `Grid of ⌈${w.variable} / ${w.perBlock}⌉ blocks on the ${w.part}: one wave per ${w.elementsPerWave.toLocaleString('en-US')} of ${w.variable}`;
}

/** The tooltip of a waves point. */
export function wavesPointLines(p: WavesPoint, w: WavesChart): string[] {
  // Three decimals: one block past a wave is 1.001 waves, and the GPU runs two.
  const waves = Number.isInteger(p.waves)
    ? `${p.waves} wave${p.waves === 1 ? '' : 's'}`
    : `${p.waves.toFixed(3)} waves, ${Math.ceil(p.waves)} run`;
  return [
    `${w.variable} = ${p.n.toLocaleString('en-US')}: ${p.gridBlocks.toLocaleString('en-US')} blocks, ${waves} (${w.blocksPerSm} blocks per SM × ${w.sms} SMs)`,
    `${percent(Math.round(p.used * 1000) / 1000)} of the block slots busy over the run`,
  ];
}

/** Messages between the extension and the chart webview. */
export type ToView = { type: 'data'; data: ChartData } | { type: 'message'; text: string; loading?: boolean };
export type FromView = { type: 'ready' } | { type: 'arch'; arch: string } | { type: 'refresh' };
