/**
 * A launch on named GPUs, not only on one SM: waves and the tail of its grid, idle SMs, the cluster
 * limit, and the latency estimate as a range over the part's published latencies. Plain data for
 * the hover, the CLI and the findings; every figure comes from the part table (gpu-parts.ts) and
 * the launch's occupancy on the part's architecture.
 */
import type { Finding, Span } from '../types';
import type { GpuPart } from '../gpu/gpu-parts';
import { archName, parseArch } from '../gpu/arch-table';
import {
  clusterEstimate,
  elementsPerWave,
  wavesOf,
  wholeWavesGrid,
  type ClusterEstimate,
  type Waves,
} from '../gpu/waves';
import { partLatencyRange, type LatencyWork, type PartLatencyRange } from '../gpu/latency';
import { registerHeadroom } from '../gpu/next-step';
import { occupancyQuery, type LaunchAnalysis } from './launch-analysis';

export interface LaunchOnGpu {
  part: GpuPart;
  arch: string;
  blocksPerSm: number;
  /** The grid in blocks when the source fixes it. */
  gridBlocks: number | null;
  waves: Waves | null;
  /** A grid of ceil(n / perBlock) blocks: one wave per `elementsPerWave` of n. */
  perElement: { variable: string; perBlock: number; elementsPerWave: number } | null;
  /** The grid is sized from the device (SMs × blocks per SM): one full wave by design. */
  sizedFromDevice: boolean;
  cluster: ClusterEstimate | null;
  latency: PartLatencyRange | null;
  /** Registers per thread the kernel could use and still hold the warps the high latency needs. */
  registerHeadroom: number | null;
}

/** The launch on each part whose architecture it was analysed for (parts of other architectures are left out). */
export function launchOnGpus(
  analysis: LaunchAnalysis,
  parts: readonly GpuPart[],
  /** p, or null: nothing tells how many loads the kernel issues (no latency range then). */
  independentOpsPerWarp: number | null = 1,
  work: LatencyWork | null = null,
): LaunchOnGpu[] {
  const found: LaunchOnGpu[] = [];
  for (const part of parts) {
    const row = parseArch(part.arch);
    const onArch = row && analysis.perArch.find((p) => p.arch === archName(row));
    const result = onArch?.result;
    // An upper bound (unknown dynamic shared memory) or a launch that fails has no waves to claim.
    if (
      !row ||
      !onArch ||
      !result ||
      onArch.fails ||
      onArch.upperBound ||
      result.activeBlocksPerMultiprocessor < 1 ||
      analysis.threadsPerBlock === null
    )
      continue;
    const blocksPerSm = result.activeBlocksPerMultiprocessor;
    const grid = analysis.launch.grid.value;
    const gridBlocks = grid ? grid.x * grid.y * grid.z : null;
    const perElement = gridBlocks === null ? ceilDivision(analysis.launch.grid.text) : null;
    const clusterBlocks = clusterSizeOf(analysis);
    // p waits for the kernel body's analysis: no latency figures before it is in.
    const latency =
      analysis.latencyPending || independentOpsPerWarp === null
        ? null
        : partLatencyRange(part, result.activeWarps, independentOpsPerWarp, work);
    const query = occupancyQuery(
      row,
      onArch.figures,
      analysis.threadsPerBlock,
      analysis.dynamicSmemBytes ?? 0,
      analysis.kernel,
    );
    found.push({
      part,
      arch: archName(row),
      blocksPerSm,
      gridBlocks,
      waves: gridBlocks !== null ? wavesOf(gridBlocks, blocksPerSm, part.sms) : null,
      perElement: perElement
        ? { ...perElement, elementsPerWave: elementsPerWave(perElement.perBlock, blocksPerSm, part.sms) }
        : null,
      sizedFromDevice:
        gridBlocks === null &&
        /multiProcessorCount|MaxActiveBlocksPerMultiprocessor|\bnum_?sms?\b|\bsm_?count\b/i.test(
          analysis.launch.grid.text,
        ),
      cluster: clusterBlocks && part.gpcs ? clusterEstimate(clusterBlocks, blocksPerSm, part.sms, part.gpcs) : null,
      latency,
      registerHeadroom:
        latency && !latency.atLeast && latency.warpsNeeded.high <= result.activeWarps && onArch.figures.numRegs !== null
          ? registerHeadroom(query, latency.warpsNeeded.high)
          : null,
    });
  }
  return found;
}

/** `(n + 255) / 256`, `(n + 256 - 1) / 256`, `div_up(n, 256)`: a grid of ceil(n / perBlock) blocks, with literal perBlock. */
export function ceilDivision(text: string): { variable: string; perBlock: number } | null {
  const t = text.replace(/\s+/g, '');
  const num = (s: string) => (/^\d+$/.test(s) ? Number(s) : null);
  let m = /^\(([A-Za-z_][\w.>-]*)\+(\d+)(?:-1)?\)\/(\d+)$/.exec(t);
  if (m) {
    const add = Number(m[2]) - (t.includes('-1)') ? 1 : 0);
    const by = num(m[3]);
    if (by !== null && by > 1 && add === by - 1) return { variable: m[1], perBlock: by };
  }
  m =
    /^(?:[\w:]*::)?(?:div_?up|ceil_?div|divup|cdiv|iDivUp|DivRoundUp|DIV_UP|CEIL_DIV|DIVUP)\(([A-Za-z_][\w.>-]*),(\d+)\)$/i.exec(
      t,
    );
  if (m && Number(m[2]) > 1) return { variable: m[1], perBlock: Number(m[2]) };
  return null;
}

/** Blocks per cluster: `__cluster_dims__(x, y, z)`, else the third `__launch_bounds__` argument. */
function clusterSizeOf(analysis: LaunchAnalysis): number | null {
  const dims = analysis.kernel?.clusterDims;
  if (dims) return dims.x * dims.y * dims.z;
  return analysis.launchBounds?.maxBlocksPerCluster ?? null;
}

export const GRID_FINDING_CODES = { smallGrid: 'small-grid', tailEffect: 'tail-effect' } as const;

/**
 * Hints for grids the source fixes: a grid that leaves SMs idle, and a tail that idles a material
 * share of the GPU (the last wave under half full, over at most a few waves, where it matters).
 * A grid sized from the device, or from a run-time size, gets none, and so does a launch of one
 * block: that is a design (a final reduction, a serial step), not an oversight.
 */
export function gridFindings(
  analysis: LaunchAnalysis,
  onGpus: readonly LaunchOnGpu[],
  /** Where the launch's configuration is written (launch-config-span.ts): the hints go there. */
  span: Span = analysis.launch.span,
): Finding[] {
  const findings: Finding[] = [];
  // The part that leaves SMs idle, else the first with waves: one finding per launch, not per part.
  const first = onGpus.find((g) => g.waves && g.waves.idleSms > 0) ?? onGpus.find((g) => g.waves);
  if (!first?.waves || first.gridBlocks === null || first.gridBlocks < 2) return findings;
  const w = first.waves;
  const name = analysis.launch.kernelName;
  if (w.idleSms > 0) {
    findings.push({
      code: GRID_FINDING_CODES.smallGrid,
      severity: 'hint',
      message: `${name}: a grid of ${first.gridBlocks} blocks leaves ${w.idleSms} of the ${first.part.name}'s ${first.part.sms} SMs idle (the grid, not occupancy, limits this launch).`,
      span,
      related: [],
    });
  } else if (w.wavesRun > 1 && w.wavesRun <= 4 && w.lastWaveFill < 0.5) {
    const whole = wholeWavesGrid(first.gridBlocks!, first.blocksPerSm, first.part.sms);
    findings.push({
      code: GRID_FINDING_CODES.tailEffect,
      severity: 'hint',
      message: `${name}: ${first.gridBlocks} blocks are ${w.waves.toFixed(2)} waves on the ${first.part.name} (${first.blocksPerSm} blocks per SM × ${first.part.sms} SMs); the last wave runs ${Math.round(w.lastWaveFill * 100)}% full, so about ${Math.round(w.idleFraction * 100)}% of the GPU's block slots idle. A grid of ${whole} blocks fills whole waves.`,
      span,
      related: [],
    });
  }
  return findings;
}
