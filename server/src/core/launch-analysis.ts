/**
 * What the hardware does with one launch, per target architecture: the kernel
 * it starts, the figures behind it (registers and shared memory, with their
 * source), the theoretical occupancy with every ceiling, the latency-hiding
 * estimate and the next step. Plain data for the hover, the lens, the CLI.
 */
import type { Kernel, Launch } from './types';
import { archName, parseArch, type ArchRow } from './arch-table';
import { occupancy, type OccupancyResult } from './occupancy';

export type FigureSource = 'ptxas' | 'log' | 'annotation' | 'unknown';

/** Registers and shared memory of one compiled kernel instance on one architecture. */
export interface KernelFigures {
  numRegs: number | null;
  /** Static shared memory per block, bytes. */
  sharedSizeBytes: number | null;
  spillStoreBytes: number | null;
  spillLoadBytes: number | null;
  stackFrameBytes: number | null;
  barriers: number | null;
  source: FigureSource;
  /** When the figures were produced (ms since epoch), for ptxas and log figures. */
  producedAt?: number | null;
  /** The source changed since (or the last compile failed): the figures are the last known. */
  stale?: boolean;
  /** Why the figures are stale or unknown (the compiler's first error, nvcc missing, ...). */
  note?: string | null;
}

export interface ArchOccupancy {
  arch: string;
  figures: KernelFigures;
  /** Null when registers are unknown (no occupancy is claimed) or the block size is unknown. */
  result: OccupancyResult | null;
  /** Why `result` is null, or a header error. */
  reason: string | null;
}

export interface LaunchAnalysis {
  launch: Launch;
  kernel: Kernel | null;
  threadsPerBlock: number | null;
  dynamicSmemBytes: number | null;
  perArch: ArchOccupancy[];
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

export function analyzeLaunch(launch: Launch, kernel: Kernel | null, archs: readonly string[], figuresFor: FiguresFor): LaunchAnalysis {
  const threads = threadsOf(launch);
  const dynamicSmemBytes = launch.dynamicSmem.value;
  return {
    launch,
    kernel,
    threadsPerBlock: threads,
    dynamicSmemBytes,
    perArch: archs.map((arch) => occupancyFor(arch, figuresFor(kernel, launch, arch), threads, dynamicSmemBytes ?? 0, kernel)),
  };
}

/** Occupancy of a kernel with `figures` at `threads` per block on `arch`. */
export function occupancyFor(arch: string, figures: KernelFigures, threads: number | null, dynamicSmemBytes: number, kernel: Kernel | null): ArchOccupancy {
  const row = parseArch(arch);
  const name = row ? archName(row) : arch;
  if (!row) return { arch: name, figures, result: null, reason: `unknown architecture ${arch}` };
  if (threads === null) return { arch: name, figures, result: null, reason: 'block size not known statically' };
  if (figures.numRegs === null) return { arch: name, figures, result: null, reason: 'registers per thread not known' };
  const staticSmem = figures.sharedSizeBytes ?? kernel?.staticSharedBytes ?? 0;
  const outcome = occupancy({
    device: row.device,
    blockSize: threads,
    numRegs: figures.numRegs,
    sharedSizeBytes: staticSmem,
    dynamicSmemBytes,
    shmemLimitConfig: needsOptIn(row, staticSmem, dynamicSmemBytes) ? 'optin' : 'default',
    numBlockBarriers: figures.barriers === null ? 1 : Math.max(figures.barriers, 1),
  });
  if (!outcome.ok) return { arch: name, figures, result: null, reason: outcome.error };
  return { arch: name, figures, result: outcome.value, reason: null };
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
