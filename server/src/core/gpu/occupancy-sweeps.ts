/**
 * The data behind the occupancy chart, drawn the way NVIDIA's occupancy calculator draws
 * it: resident warps per SM against threads per block, registers per thread and shared
 * memory per block, each swept while the other two stay at the kernel's figures.
 *
 * Every point is the calculator's answer (occupancy.ts, with the query built by the
 * hover's rules: see chartQuery), never a closed formula, so the chart and the hover
 * cannot disagree. Pure: plain data in, plain data out.
 *
 * Sweep grids. Each resource is allocated in units (warps of 32 threads, 256 registers
 * per warp, the shared-memory granularity), so occupancy is a step function that is flat
 * on (previous grid point, grid point]; sampling every unit is exact, and a chart joins
 * the points with a "step before" line. The launch's own value is added when it falls
 * between grid points or outside the range, so the current point always lies on its curve.
 */

import type { WavesChart } from './waves';
import { ARCHS, archName, parseArch, type ArchRow } from './arch-table';
import { needsOptIn } from '../report/launch-analysis';
import { INT_MAX, headerArchConstants, occupancy, type LimitingFactor, type OccupancyQuery } from './occupancy';

export interface ChartQuery {
  /** Any spelling parseArch reads (`sm_90`, `90`, `9.0`). */
  arch: string;
  /** Threads per block of the launch. */
  blockSize: number;
  /** Registers per thread (ptxas). */
  numRegs: number;
  /** Static shared memory per block, bytes. */
  sharedSizeBytes: number;
  /** Dynamic shared memory per block (the launch's third parameter), bytes. */
  dynamicSmemBytes: number;
  /** Named barriers the kernel uses (ptxas); absent: 1, as the header assumes. */
  numBlockBarriers?: number;
  /** Where the figures come from, shown under the chart ("40 registers, 1 KB static smem (ptxas, sm_90, just now)"). */
  source?: string;
  /** The kernel's name, for the chart's title. */
  kernel?: string;
  /** The project's target architectures, listed first in the chart's architecture choices. */
  targets?: readonly string[];
  /** Caveats to show with the chart (an assumed block size, figures taken from another architecture). */
  notes?: readonly string[];
}

export interface ArchChoice {
  /** `sm_90` */
  arch: string;
  family: string;
  /** One of the project's target architectures (compiled for, so ptxas figures exist). */
  target: boolean;
}

/** How many blocks each resource allows (null: that resource sets no limit). */
export interface ChartCeilings {
  registers: number | null;
  sharedMemory: number | null;
  warps: number | null;
  blocks: number | null;
  barriers: number | null;
}

export interface ChartPoint {
  /** The swept value: threads per block, registers per thread, or shared memory bytes per block. */
  x: number;
  activeWarps: number;
  activeBlocks: number;
  /** activeWarps / maxWarps, 0..1. */
  occupancy: number;
  /** Every limit that binds at this point (ties give several; at 0 blocks, what allows none); empty on an error. */
  limitingFactors: LimitingFactor[];
  ceilings: ChartCeilings;
  /** Why the calculator gave no result (a header error), else null. */
  error: string | null;
}

export type SweepId = 'blockSize' | 'registers' | 'sharedMemory';

export interface ChartSweep {
  id: SweepId;
  /** "Threads per block" */
  title: string;
  /** "threads", "registers", "bytes" */
  unit: string;
  /** The launch's value on this axis. */
  current: number;
  /** Ascending x, one point per allocation unit (see the file comment). */
  points: ChartPoint[];
}

export interface ChartCurrent {
  blockSize: number;
  numRegs: number;
  sharedSizeBytes: number;
  dynamicSmemBytes: number;
  numBlockBarriers: number | null;
  point: ChartPoint;
}

export interface ChartData {
  /** `sm_90` */
  arch: string;
  /** `Hopper` */
  family: string;
  /** Warp slots per SM (the y axis maximum). */
  maxWarps: number;
  maxBlocksPerMultiprocessor: number;
  current: ChartCurrent;
  sweeps: ChartSweep[];
  /** The figures' origin, as given in the query ('' when not given). */
  source: string;
  kernel: string;
  notes: string[];
  /** The targets first, then every other architecture the table knows. */
  archChoices: ArchChoice[];
  /** The launch's grid is ceil(n / perBlock) blocks: its waves against n on the first named part of the architecture. */
  waves?: WavesChart | null;
}

const NO_LIMIT = (n: number): number | null => (n >= INT_MAX ? null : n);

/**
 * The calculator's query for one configuration, by the hover's rules (launch-analysis.ts
 * occupancyFor): the opt-in limit above the 48 KB default, absent barriers count as 1.
 */
export function chartQuery(
  row: ArchRow,
  at: { blockSize: number; numRegs: number; staticBytes: number; dynamicBytes: number; numBlockBarriers?: number },
): OccupancyQuery {
  return {
    device: row.device,
    blockSize: at.blockSize,
    numRegs: at.numRegs,
    sharedSizeBytes: at.staticBytes,
    dynamicSmemBytes: at.dynamicBytes,
    shmemLimitConfig: needsOptIn(row, at.staticBytes, at.dynamicBytes) ? 'optin' : 'default',
    numBlockBarriers: at.numBlockBarriers === undefined ? 1 : Math.max(at.numBlockBarriers, 1),
  };
}

/** The calculator at one configuration. */
function pointAt(
  row: ArchRow,
  q: ChartQuery,
  x: number,
  at: { blockSize: number; numRegs: number; staticBytes: number; dynamicBytes: number },
): ChartPoint {
  const r = occupancy(chartQuery(row, { ...at, numBlockBarriers: q.numBlockBarriers }));
  const v = r.ok ? r.value : null;
  if (!v) {
    return {
      x,
      activeWarps: 0,
      activeBlocks: 0,
      occupancy: 0,
      limitingFactors: [],
      ceilings: { registers: null, sharedMemory: null, warps: null, blocks: null, barriers: null },
      error: r.ok ? null : r.error,
    };
  }
  return {
    x,
    activeWarps: v.activeWarps,
    activeBlocks: v.activeBlocksPerMultiprocessor,
    occupancy: v.occupancy,
    limitingFactors: v.limitingFactors,
    ceilings: {
      registers: NO_LIMIT(v.blockLimitRegs),
      sharedMemory: NO_LIMIT(v.blockLimitSharedMem),
      warps: NO_LIMIT(v.blockLimitWarps),
      blocks: NO_LIMIT(v.blockLimitBlocks),
      barriers: NO_LIMIT(v.blockLimitBarriers),
    },
    error: null,
  };
}

/** `0, step, 2*step, ..., max` plus `extra` (each once, ascending), from `from`. */
function grid(from: number, max: number, step: number, extra: number): number[] {
  const xs: number[] = [];
  for (let x = from; x <= max; x += step) xs.push(x);
  if (!xs.includes(extra)) xs.push(extra);
  return xs.sort((a, b) => a - b);
}

/**
 * The three sweeps for one kernel on one architecture; null for an architecture
 * parseArch does not know.
 */
export function occupancyChartData(q: ChartQuery): ChartData | null {
  const row = parseArch(q.arch);
  if (!row) return null;
  const d = row.device;
  const total = q.sharedSizeBytes + q.dynamicSmemBytes;
  const now = {
    blockSize: q.blockSize,
    numRegs: q.numRegs,
    staticBytes: q.sharedSizeBytes,
    dynamicBytes: q.dynamicSmemBytes,
  };
  const smemStep = headerArchConstants(d).smemAllocationGranularity || row.smemAllocationGranularity;

  const blockSize: ChartSweep = {
    id: 'blockSize',
    title: 'Threads per block',
    unit: 'threads',
    current: q.blockSize,
    points: grid(d.warpSize, d.maxThreadsPerBlock, d.warpSize, q.blockSize).map((x) =>
      pointAt(row, q, x, { ...now, blockSize: x }),
    ),
  };
  const registers: ChartSweep = {
    id: 'registers',
    title: 'Registers per thread',
    unit: 'registers',
    current: q.numRegs,
    points: grid(0, row.maxRegsPerThread, 1, q.numRegs).map((x) => pointAt(row, q, x, { ...now, numRegs: x })),
  };
  // Shared memory per block: the kernel's static size is kept and the rest is dynamic; below the static size, static shrinks.
  const sharedMemory: ChartSweep = {
    id: 'sharedMemory',
    title: 'Shared memory per block',
    unit: 'bytes',
    current: total,
    points: grid(0, d.sharedMemPerBlockOptin, smemStep, total).map((x) => {
      const staticBytes = Math.min(q.sharedSizeBytes, x);
      return pointAt(row, q, x, { ...now, staticBytes, dynamicBytes: x - staticBytes });
    }),
  };

  return {
    arch: archName(row),
    family: row.family,
    maxWarps: Math.trunc(d.maxThreadsPerMultiprocessor / d.warpSize),
    maxBlocksPerMultiprocessor: row.maxBlocksPerMultiprocessor,
    current: {
      blockSize: q.blockSize,
      numRegs: q.numRegs,
      sharedSizeBytes: q.sharedSizeBytes,
      dynamicSmemBytes: q.dynamicSmemBytes,
      numBlockBarriers: q.numBlockBarriers ?? null,
      point: pointAt(row, q, q.blockSize, now),
    },
    sweeps: [blockSize, registers, sharedMemory],
    source: q.source ?? '',
    kernel: q.kernel ?? '',
    notes: [...(q.notes ?? [])],
    archChoices: archChoices(q.targets ?? []),
  };
}

/** The target architectures (each once, unknown spellings dropped), then every other architecture of the table. */
export function archChoices(targets: readonly string[]): ArchChoice[] {
  const targetRows = targets.map((t) => parseArch(t)).filter((r): r is ArchRow => r !== undefined);
  const targetNames = new Set(targetRows.map(archName));
  const rows = [...new Set(targetRows), ...ARCHS.filter((r) => !targetNames.has(archName(r)))];
  return rows.map((r) => ({ arch: archName(r), family: r.family, target: targetNames.has(archName(r)) }));
}
