/**
 * What the hardware does with one launch, per target architecture: the kernel
 * it starts, the figures behind it (registers and shared memory, with their
 * source), the theoretical occupancy with every ceiling, the latency-hiding
 * estimate and the next step. Plain data for the hover, the lens, the CLI.
 */
import type { Dim3, Kernel, LaunchBounds, Launch } from '../types';
import { archName, parseArch, type ArchRow } from '../gpu/arch-table';
import { occupancy, type OccupancyQuery, type OccupancyResult } from '../gpu/occupancy';
import { nextStep, launchBoundsRegisterCap, type NextStep } from '../gpu/next-step';
import { latencyHiding, type LatencyEstimate, type LatencyWork } from '../gpu/latency';
import { registerBudget, type BudgetLevel } from '../gpu/register-budget';
import { memoByText } from '../incremental/kept-tables';
import type { ResourceFigures, ResourceSource } from '../compiler/kernel-resources';
import type { TypeAliases } from '../compiler/launch-instances';
import { LIMIT_NAMES, percent } from './format';

export type FigureSource = ResourceSource;

/**
 * What nvcc is doing about a kernel's figures: asked for (`queued`) or ptxas running (since when, ms
 * since epoch), or the compile failed; or nothing compiled the kernel, with whether nvcc could.
 */
export type CompileNote =
  | { state: 'running'; unit: string; archs: string[]; since: number; queued?: boolean }
  | { state: 'not-compiled'; compiler: 'available' | 'missing' | 'off' | 'starting' }
  | { state: 'failed'; unit: string; message: string; hint: string | null }
  /** ptxas compiled the units that cover the kernel, but none has an instance of it that fits the launch. */
  | { state: 'no-instance'; unit: string };

/** Registers and shared memory of one compiled kernel instance on one architecture. */
export interface KernelFigures extends ResourceFigures {
  /**
   * The launch can run any of several compiled instances (its template arguments depend on the
   * enclosing template, or are deduced from the call): the figures of each. The figures above
   * are then those of the one with the most registers.
   */
  instances?: ReadonlyArray<{ signature: string | null; figures: ResourceFigures }>;
  /** nvcc is compiling the figures (they are missing or stale meanwhile), or it failed. */
  compile?: CompileNote | null;
  /** The compiled instance the launch runs (its mangled name), when it is one: its PTX entry. */
  entry?: string | null;
}

/** Where a launch's kernel is written and where the launch is compiled, for the figures (see FiguresRegistry). */
export interface FigureSite {
  /** The index path of the file the kernel is written in (its definition when one is known). */
  kernelPath: string;
  /** The translation unit the launch is compiled in: the launching file. */
  unit?: string | null;
  /** The launching file's type aliases (`using scalar_t = float;`), read when a launch's arguments name types. */
  aliases?: () => TypeAliases;
}

/** Several compiled instances could run: how far their figures and occupancy spread. */
export interface InstanceSpread {
  instances: number;
  minRegs: number;
  maxRegs: number;
  minOccupancy: number;
  maxOccupancy: number;
  minActiveBlocks: number;
  maxActiveBlocks: number;
}

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
  /**
   * The launch can run any of several compiled instances: their spread. `result` is then set only
   * when they all reach the same occupancy (the figures of the one with the most registers).
   */
  spread: InstanceSpread | null;
  /** Registers unknown, block size known: for each occupancy level, the most registers per thread that reach it. */
  budget: readonly BudgetLevel[] | null;
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
  /** Where the kernel is written and the launch compiled: whose figures these are (null without a kernel). */
  site: FigureSite | null;
  /** When the block is one of a few the source fixes (Launch.candidates): each with its occupancy per architecture. */
  candidates: CandidateOccupancy[] | null;
}

export interface CandidateOccupancy {
  block: Dim3;
  threadsPerBlock: number;
  perArch: ArchOccupancy[];
}

export interface LatencyOptions {
  /** 0 or absent: the family's default. */
  latencyCycles?: number;
  /**
   * p, the 128-byte lines a warp has in flight per wait (from the PTX, or the source estimate).
   * Absent: nothing tells how many loads the kernel issues, and no latency estimate is made.
   */
  independentOpsPerWarp?: number;
  /** The work between loads, when the PTX or the source tells it. */
  work?: LatencyWork | null;
  /** The kernel's p is not estimated yet (its body waits for analysis): no latency figures until it is. */
  pending?: boolean;
}

/** Figures for a kernel instance on an arch; the caller decides where they come from. */
export type FiguresFor = (
  kernel: Kernel | null,
  launch: Launch | null,
  arch: string,
  site?: FigureSite | null,
) => KernelFigures;

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
  site: FigureSite | null = null,
): LaunchAnalysis {
  const threads = threadsOf(launch);
  const dynamicSmemBytes = launch.dynamicSmem.value;
  const bound = launchBounds?.maxThreadsPerBlock ?? null;
  const figures = archs.map((arch) => figuresFor(kernel, launch, arch, site));
  // A block the hardware rejects, or a launch above its kernel's __launch_bounds__, does not run:
  // no occupancy to claim.
  const failsAt = (block: Dim3 | null, count: number | null) =>
    (block ? rejectedBlock(block) : null) ??
    (count !== null && bound !== null && count > bound
      ? `${count} threads per block is above \`${launchBounds!.text}\``
      : null);
  const perBlock = (block: Dim3 | null, count: number | null): ArchOccupancy[] => {
    const fails = failsAt(block, count);
    return archs.map((arch, k) => {
      if (!fails) return occupancyFor(arch, figures[k], count, dynamicSmemBytes, kernel, latency);
      const row = parseArch(arch);
      const reason = `the launch fails: ${fails}`;
      return {
        arch: row ? archName(row) : arch,
        figures: figures[k],
        result: null,
        reason,
        fails: reason,
        upperBound: null,
        nextStep: null,
        atRegisterCap: null,
        launchBoundsCapForNext: null,
        latency: null,
        spread: null,
        budget: null,
      };
    });
  };
  const candidates =
    threads === null && launch.candidates?.length
      ? launch.candidates.map((block) => ({
          block,
          threadsPerBlock: block.x * block.y * block.z,
          perArch: perBlock(block, block.x * block.y * block.z),
        }))
      : null;
  return {
    launch,
    kernel,
    launchBounds,
    latencyPending: latency.pending === true,
    threadsPerBlock: threads,
    dynamicSmemBytes,
    // Without the aliases reader: it holds the whole analysis of the version the launch was analysed in,
    // and a kept analysis (incremental/kept-reports.ts) would keep every such version alive.
    site: site && { kernelPath: site.kernelPath, unit: site.unit },
    perArch: perBlock(launch.block.value, threads),
    candidates,
  };
}

/** CUDA's limits on a block, the same on every architecture since sm_20. */
const MAX_THREADS_PER_BLOCK = 1024;
const MAX_BLOCK_DIM = { x: 1024, y: 1024, z: 64 } as const;

/** Why the hardware rejects a block of this shape (cudaErrorInvalidConfiguration), or null. */
function rejectedBlock(block: { x: number; y: number; z: number }): string | null {
  const threads = block.x * block.y * block.z;
  if (threads > MAX_THREADS_PER_BLOCK)
    return `${threads} threads per block is above the limit of ${MAX_THREADS_PER_BLOCK}`;
  for (const axis of ['x', 'y', 'z'] as const) {
    if (block[axis] > MAX_BLOCK_DIM[axis])
      return `block.${axis} = ${block[axis]} is above the limit of ${MAX_BLOCK_DIM[axis]}`;
    if (block[axis] < 1) return `block.${axis} = ${block[axis]}: every dimension must be at least 1`;
  }
  return null;
}

/** The calculator's query for a kernel with `figures` at `threads` per block. */
export function occupancyQuery(
  row: ArchRow,
  figures: KernelFigures,
  threads: number,
  dynamicSmemBytes: number,
  kernel: Kernel | null,
): OccupancyQuery {
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
export function occupancyFor(
  arch: string,
  figures: KernelFigures,
  threads: number | null,
  dynamicSmemBytes: number | null,
  kernel: Kernel | null,
  latency: LatencyOptions = {},
): ArchOccupancy {
  const row = parseArch(arch);
  const name = row ? archName(row) : arch;
  const none = {
    fails: null,
    upperBound: null,
    nextStep: null,
    atRegisterCap: null,
    launchBoundsCapForNext: null,
    latency: null,
    spread: null,
    budget: null,
  };
  if (!row) return { arch: name, figures, result: null, reason: `unknown architecture ${arch}`, ...none };
  if (threads === null)
    return { arch: name, figures, result: null, reason: 'block size not known statically', ...none };
  if (figures.numRegs === null) {
    // The budget rests on the dynamic shared memory: none when it is not known.
    const budget =
      dynamicSmemBytes === null ? [] : keptBudget(row, occupancyQuery(row, figures, threads, dynamicSmemBytes, kernel));
    return {
      arch: name,
      figures,
      result: null,
      reason: 'registers per thread not known',
      ...none,
      budget: budget.length ? budget : null,
    };
  }
  const query = occupancyQuery(row, figures, threads, dynamicSmemBytes ?? 0, kernel);
  const outcome = occupancy(query);
  if (!outcome.ok) return { arch: name, figures, result: null, reason: outcome.error, ...none };
  const result = outcome.value;
  if (result.activeBlocksPerMultiprocessor === 0) {
    const limits = result.limitingFactors.map((f) => LIMIT_NAMES[f] ?? f).join(' and ');
    return {
      arch: name,
      figures,
      result,
      reason: null,
      ...none,
      fails: `the launch fails: not one block fits on an SM (${limits}; too many resources requested for launch)`,
    };
  }
  const upperBound = dynamicSmemBytes === null ? UNKNOWN_DYNAMIC_SMEM : null;
  const spread =
    figures.instances && figures.instances.length > 1
      ? spreadOf(row, figures, threads, dynamicSmemBytes ?? 0, kernel)
      : null;
  if (spread && (spread.minActiveBlocks !== spread.maxActiveBlocks || spread.minOccupancy !== spread.maxOccupancy)) {
    const reason = `${spread.instances} compiled instantiations could run here (${spread.minRegs}–${spread.maxRegs} registers): ${upperBound ? '≤ ' : ''}${percent(spread.minOccupancy)}–${percent(spread.maxOccupancy)}`;
    return { arch: name, figures, result: null, reason, ...none, upperBound, spread };
  }
  if (upperBound) return { arch: name, figures, result, reason: null, ...none, upperBound, spread };
  const next = nextStep(query);
  const capRegs = next?.registers.maxRegsPerThread ?? null;
  const atCap = capRegs !== null ? occupancy({ ...query, numRegs: capRegs }) : null;
  const atRegisterCap = atCap?.ok
    ? { numRegs: capRegs!, activeBlocks: atCap.value.activeBlocksPerMultiprocessor, occupancy: atCap.value.occupancy }
    : null;
  return {
    arch: name,
    figures,
    result,
    reason: null,
    fails: null,
    upperBound: null,
    nextStep: next,
    atRegisterCap,
    launchBoundsCapForNext:
      atRegisterCap && threads <= row.device.maxThreadsPerBlock
        ? launchBoundsRegisterCap(row.device, threads, atRegisterCap.activeBlocks)
        : null,
    latency:
      result.activeWarps > 0 && !latency.pending && latency.independentOpsPerWarp !== undefined
        ? latencyHiding({
            arch: row,
            warpsResident: result.activeWarps,
            independentOpsPerWarp: latency.independentOpsPerWarp,
            latencyCycles: latency.latencyCycles || undefined,
            work: latency.work ?? null,
          })
        : null,
    spread,
    budget: null,
  };
}

/** A launch's register budget, kept by what it depends on: many launches share a block size and shared memory. */
const keptBudget = memoByText(
  'register budgets',
  (row: ArchRow, q: OccupancyQuery) =>
    `${archName(row)}|${q.blockSize}|${q.sharedSizeBytes}|${q.dynamicSmemBytes}|${q.shmemLimitConfig}|${q.numBlockBarriers}`,
  (row: ArchRow, q: OccupancyQuery): readonly BudgetLevel[] => {
    const { numRegs: _unknown, ...rest } = q;
    return registerBudget(rest, row.maxRegsPerThread);
  },
);

/** The occupancy of each instance that could run, and how far they spread (null when one does not compute). */
function spreadOf(
  row: ArchRow,
  figures: KernelFigures,
  threads: number,
  dynamicSmemBytes: number,
  kernel: Kernel | null,
): InstanceSpread | null {
  const results: OccupancyResult[] = [];
  const regs: number[] = [];
  for (const { figures: f } of figures.instances ?? []) {
    if (f.numRegs === null) return null;
    const outcome = occupancy(occupancyQuery(row, f, threads, dynamicSmemBytes, kernel));
    if (!outcome.ok) return null;
    results.push(outcome.value);
    regs.push(f.numRegs);
  }
  const occ = results.map((r) => r.occupancy);
  const blocks = results.map((r) => r.activeBlocksPerMultiprocessor);
  return {
    instances: results.length,
    minRegs: Math.min(...regs),
    maxRegs: Math.max(...regs),
    minOccupancy: Math.min(...occ),
    maxOccupancy: Math.max(...occ),
    minActiveBlocks: Math.min(...blocks),
    maxActiveBlocks: Math.max(...blocks),
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
