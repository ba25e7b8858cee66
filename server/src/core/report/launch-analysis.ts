/**
 * What the hardware does with one launch, per target architecture: the kernel
 * it starts, the figures behind it (registers and shared memory, with their
 * source), the theoretical occupancy with every ceiling, the latency-hiding
 * estimate and the next step. Plain data for the hover, the lens, the CLI.
 */
import type { Kernel, LaunchBounds, Launch } from '../types';
import { archName, parseArch, type ArchRow } from '../gpu/arch-table';
import { occupancy, type OccupancyQuery, type OccupancyResult } from '../gpu/occupancy';
import { nextStep, launchBoundsRegisterCap, type NextStep } from '../gpu/next-step';
import { latencyHiding, type LatencyEstimate } from '../gpu/latency';
import type { ResourceFigures, ResourceSource } from '../compiler/kernel-resources';
import { LIMIT_NAMES } from './format';

export type FigureSource = ResourceSource;
/** Registers and shared memory of one compiled kernel instance on one architecture. */
export type KernelFigures = ResourceFigures;

export interface ArchOccupancy {
  arch: string;
  figures: KernelFigures;
  /** Null when registers are unknown (no occupancy is claimed) or the block size is unknown. */
  result: OccupancyResult | null;
  /** Why `result` is null, or a header error. */
  reason: string | null;
  /**
   * The launch cannot run on this architecture: why, starting `the launch fails`. Set with a null
   * result (a block the hardware rejects, a launch above its `__launch_bounds__`) and with a result
   * that fits no block on an SM (too many resources requested): no occupancy figure is shown for it.
   */
  fails: string | null;
  /** The figure is only an upper bound: why (`dynamic shared memory not known`); null when it is exact. */
  upperBound: string | null;
  /** What it takes to fit one more block (null without a result). */
  nextStep: NextStep | null;
  /** At the next step's register cap (`nextStep.registers.maxRegsPerThread`): blocks per SM and occupancy there. */
  atRegisterCap: { numRegs: number; activeBlocks: number; occupancy: number } | null;
  /** Registers per thread that `__launch_bounds__(threads, atRegisterCap.activeBlocks)` asks ptxas for. */
  launchBoundsCapForNext: number | null;
  /** Little's-law estimate at the resident warps (null without a result). */
  latency: LatencyEstimate | null;
}

export interface LaunchAnalysis {
  launch: Launch;
  kernel: Kernel | null;
  /** The kernel's `__launch_bounds__` with template arguments of this launch applied. */
  launchBounds: LaunchBounds | null;
  /** The latency estimate waits for the kernel body's analysis (see LatencyOptions.pending). */
  latencyPending: boolean;
  threadsPerBlock: number | null;
  dynamicSmemBytes: number | null;
  perArch: ArchOccupancy[];
}

export interface LatencyOptions {
  /** 0 or absent: the family's default. */
  latencyCycles?: number;
  /** p, independent memory operations per warp in flight (from the source estimate). */
  independentOpsPerWarp?: number;
  /** The kernel's p is not estimated yet (its body waits for analysis): no latency figures until it is. */
  pending?: boolean;
}

/** Figures for a kernel instance on an arch; the caller decides where they come from. */
export type FiguresFor = (kernel: Kernel | null, launch: Launch | null, arch: string) => KernelFigures;

export const UNKNOWN_FIGURES: KernelFigures = {
  numRegs: null,
  sharedSizeBytes: null,
  spillStoreBytes: null,
  spillLoadBytes: null,
  stackFrameBytes: null,
  barriers: null,
  source: 'unknown',
};

export function threadsOf(launch: Launch): number | null {
  const b = launch.block.value;
  return b ? b.x * b.y * b.z : null;
}

export function analyzeLaunch(
  launch: Launch,
  kernel: Kernel | null,
  launchBounds: LaunchBounds | null,
  archs: readonly string[],
  figuresFor: FiguresFor,
  latency: LatencyOptions = {},
): LaunchAnalysis {
  const threads = threadsOf(launch);
  const dynamicSmemBytes = launch.dynamicSmem.value;
  const bound = launchBounds?.maxThreadsPerBlock ?? null;
  // A block the hardware rejects, or a launch above its kernel's __launch_bounds__, does not run:
  // no occupancy to claim.
  const rejected = launch.block.value ? rejectedBlock(launch.block.value) : null;
  const fails = rejected ?? (threads !== null && bound !== null && threads > bound ? `${threads} threads per block is above \`${launchBounds!.text}\`` : null);
  return {
    launch,
    kernel,
    launchBounds,
    latencyPending: latency.pending === true,
    threadsPerBlock: threads,
    dynamicSmemBytes,
    perArch: archs.map((arch) => {
      const figures = figuresFor(kernel, launch, arch);
      if (!fails) return occupancyFor(arch, figures, threads, dynamicSmemBytes, kernel, latency);
      const row = parseArch(arch);
      const reason = `the launch fails: ${fails}`;
      return { arch: row ? archName(row) : arch, figures, result: null, reason, fails: reason, upperBound: null, nextStep: null, atRegisterCap: null, launchBoundsCapForNext: null, latency: null };
    }),
  };
}

/** CUDA's limits on a block, the same on every architecture since sm_20. */
const MAX_THREADS_PER_BLOCK = 1024;
const MAX_BLOCK_DIM = { x: 1024, y: 1024, z: 64 } as const;

/** Why the hardware rejects a block of this shape (cudaErrorInvalidConfiguration), or null. */
function rejectedBlock(block: { x: number; y: number; z: number }): string | null {
  const threads = block.x * block.y * block.z;
  if (threads > MAX_THREADS_PER_BLOCK) return `${threads} threads per block is above the limit of ${MAX_THREADS_PER_BLOCK}`;
  for (const axis of ['x', 'y', 'z'] as const) {
    if (block[axis] > MAX_BLOCK_DIM[axis]) return `block.${axis} = ${block[axis]} is above the limit of ${MAX_BLOCK_DIM[axis]}`;
    if (block[axis] < 1) return `block.${axis} = ${block[axis]}: every dimension must be at least 1`;
  }
  return null;
}

/** The calculator's query for a kernel with `figures` at `threads` per block. */
export function occupancyQuery(row: ArchRow, figures: KernelFigures, threads: number, dynamicSmemBytes: number, kernel: Kernel | null): OccupancyQuery {
  const staticSmem = figures.sharedSizeBytes ?? kernel?.staticSharedBytes ?? 0;
  return {
    device: row.device,
    blockSize: threads,
    numRegs: figures.numRegs ?? 0,
    sharedSizeBytes: staticSmem,
    dynamicSmemBytes,
    shmemLimitConfig: needsOptIn(row, staticSmem, dynamicSmemBytes) ? 'optin' : 'default',
    numBlockBarriers: figures.barriers === null ? 1 : Math.max(figures.barriers, 1),
  };
}

/** Why a figure computed with no dynamic shared memory is only an upper bound. */
export const UNKNOWN_DYNAMIC_SMEM = 'dynamic shared memory not known';

/**
 * Occupancy of a kernel with `figures` at `threads` per block on `arch`, with the next step and the
 * latency estimate. With `dynamicSmemBytes` null (not known statically) the occupancy is computed
 * without it and is an upper bound (`upperBound`); the next step and the latency estimate, which
 * would rest on it, are left out.
 */
export function occupancyFor(arch: string, figures: KernelFigures, threads: number | null, dynamicSmemBytes: number | null, kernel: Kernel | null, latency: LatencyOptions = {}): ArchOccupancy {
  const row = parseArch(arch);
  const name = row ? archName(row) : arch;
  const none = { fails: null, upperBound: null, nextStep: null, atRegisterCap: null, launchBoundsCapForNext: null, latency: null };
  if (!row) return { arch: name, figures, result: null, reason: `unknown architecture ${arch}`, ...none };
  if (threads === null) return { arch: name, figures, result: null, reason: 'block size not known statically', ...none };
  if (figures.numRegs === null) return { arch: name, figures, result: null, reason: 'registers per thread not known', ...none };
  const query = occupancyQuery(row, figures, threads, dynamicSmemBytes ?? 0, kernel);
  const outcome = occupancy(query);
  if (!outcome.ok) return { arch: name, figures, result: null, reason: outcome.error, ...none };
  const result = outcome.value;
  if (result.activeBlocksPerMultiprocessor === 0) {
    const limits = result.limitingFactors.map((f) => LIMIT_NAMES[f] ?? f).join(' and ');
    return { arch: name, figures, result, reason: null, ...none, fails: `the launch fails: not one block fits on an SM (${limits}; too many resources requested for launch)` };
  }
  if (dynamicSmemBytes === null) return { arch: name, figures, result, reason: null, ...none, upperBound: UNKNOWN_DYNAMIC_SMEM };
  const next = nextStep(query);
  const capRegs = next?.registers.maxRegsPerThread ?? null;
  const atCap = capRegs !== null ? occupancy({ ...query, numRegs: capRegs }) : null;
  const atRegisterCap = atCap?.ok ? { numRegs: capRegs!, activeBlocks: atCap.value.activeBlocksPerMultiprocessor, occupancy: atCap.value.occupancy } : null;
  return {
    arch: name,
    figures,
    result,
    reason: null,
    fails: null,
    upperBound: null,
    nextStep: next,
    atRegisterCap,
    launchBoundsCapForNext: atRegisterCap && threads <= row.device.maxThreadsPerBlock ? launchBoundsRegisterCap(row.device, threads, atRegisterCap.activeBlocks) : null,
    latency: result.activeWarps > 0 && !latency.pending
      ? latencyHiding({ arch: row, warpsResident: result.activeWarps, independentOpsPerWarp: latency.independentOpsPerWarp, latencyCycles: latency.latencyCycles || undefined })
      : null,
  };
}

/** A launch above the 48 KB default needs the opt-in (and fails without it; launch-checks reports that). */
export function needsOptIn(row: ArchRow, staticSmem: number, dynamicSmem: number): boolean {
  return staticSmem + dynamicSmem > row.device.sharedMemPerBlock;
}

export function resolveArchs(requested: readonly string[]): { archs: string[]; unknown: string[] } {
  const archs: string[] = [];
  const unknown: string[] = [];
  for (const text of requested) {
    const row = parseArch(text);
    if (!row) unknown.push(text);
    else if (!archs.includes(archName(row))) archs.push(archName(row));
  }
  return { archs, unknown };
}
