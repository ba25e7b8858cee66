/**
 * "What would it take to fit one more block?" For one launch configuration: the most
 * registers per thread, and the most shared memory per block, at which one more block
 * is resident per SM; the nearest block sizes that give more resident warps; and the
 * register cap a `__launch_bounds__(maxThreads, minBlocks)` implies.
 *
 * Every answer is found by recomputing the exact occupancy (occupancy.ts), never by a
 * closed formula, so each one can be proved the same way: at the answer one more block
 * fits, one register or one byte above it does not.
 */

import type { DeviceProps } from './arch-table';
import { occupancy, resolveAttributes, type OccupancyQuery, type OccupancyResult } from './occupancy';

/** ptxas never assigns more than this many registers per thread (Programming Guide). */
export const MAX_REGS_PER_THREAD = 255;

export interface RegisterStep {
  /** Blocks per SM now, and the target (one more). */
  activeBlocks: number;
  targetBlocks: number;
  /**
   * The most registers per thread at which `targetBlocks` blocks fit; null when no
   * register count below the current one gets there (something else binds, or the
   * configuration cannot run at all).
   */
  maxRegsPerThread: number | null;
}

export interface SharedMemoryStep {
  activeBlocks: number;
  targetBlocks: number;
  /** The most static + dynamic shared memory per block (bytes) at which `targetBlocks` fit; null if none below the current total. */
  maxSharedMemPerBlock: number | null;
  /** The same as dynamic shared memory with the kernel's static size unchanged; null when even 0 dynamic bytes is too much. */
  maxDynamicSmemBytes: number | null;
}

export interface BlockSizeOption {
  blockSize: number;
  activeBlocks: number;
  activeWarps: number;
  occupancy: number;
}

export interface BlockSizeStep {
  activeWarps: number;
  /** The largest warp-multiple block size below the current one with more resident warps. */
  smaller: BlockSizeOption | null;
  /** The smallest warp-multiple block size above the current one with more resident warps. */
  larger: BlockSizeOption | null;
  /** The warp-multiple block size with the most resident warps (the nearest one on ties), if it beats the current. */
  best: BlockSizeOption | null;
}

export interface NextStep {
  registers: RegisterStep;
  sharedMemory: SharedMemoryStep;
  blockSize: BlockSizeStep;
}

function activeBlocks(q: OccupancyQuery): number {
  const r = occupancy(q);
  return r.ok ? r.value.activeBlocksPerMultiprocessor : 0;
}

/** The largest x in [lo, hi] with pred(x), for pred true up to some point and false after; undefined if pred(lo) is false. */
function lastTrue(lo: number, hi: number, pred: (x: number) => boolean): number | undefined {
  if (hi < lo || !pred(lo)) return undefined;
  while (lo < hi) {
    const mid = lo + Math.ceil((hi - lo) / 2);
    if (pred(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The most registers per thread at which one more block is resident. */
export function registerStep(q: OccupancyQuery): RegisterStep {
  const now = activeBlocks(q);
  const target = now + 1;
  const current = q.numRegs ?? 0;
  // Fewer registers never means fewer blocks, so the blocks-at-least-target set is a prefix of 0..current-1.
  const found = lastTrue(
    0,
    Math.min(current, MAX_REGS_PER_THREAD + 1) - 1,
    (regs) => activeBlocks({ ...q, numRegs: regs }) >= target,
  );
  return { activeBlocks: now, targetBlocks: target, maxRegsPerThread: found ?? null };
}

/**
 * The launch with `total` bytes of shared memory per block: the kernel's static size is
 * kept and the rest is dynamic; below the static size, static shrinks and dynamic is 0.
 * The kernel's other attributes (the opt-in and its dynamic maximum) stay as they were.
 */
export function withSharedMemTotal(q: OccupancyQuery, total: number): OccupancyQuery {
  const attrs = resolveAttributes(q);
  const staticBytes = Math.min(attrs.sharedSizeBytes, total);
  return {
    ...q,
    sharedSizeBytes: staticBytes,
    dynamicSmemBytes: total - staticBytes,
    maxDynamicSharedSizeBytes: attrs.maxDynamicSharedSizeBytes,
  };
}

/** The most static + dynamic shared memory per block at which one more block is resident. */
export function sharedMemoryStep(q: OccupancyQuery): SharedMemoryStep {
  const now = activeBlocks(q);
  const target = now + 1;
  const staticBytes = q.sharedSizeBytes ?? 0;
  const current = staticBytes + (q.dynamicSmemBytes ?? 0);
  const found = lastTrue(0, current - 1, (total) => activeBlocks(withSharedMemTotal(q, total)) >= target);
  return {
    activeBlocks: now,
    targetBlocks: target,
    maxSharedMemPerBlock: found ?? null,
    maxDynamicSmemBytes: found !== undefined && found >= staticBytes ? found - staticBytes : null,
  };
}

function option(q: OccupancyQuery, blockSize: number): BlockSizeOption {
  const r = occupancy({ ...q, blockSize });
  const v: OccupancyResult | undefined = r.ok ? r.value : undefined;
  return {
    blockSize,
    activeBlocks: v?.activeBlocksPerMultiprocessor ?? 0,
    activeWarps: v?.activeWarps ?? 0,
    occupancy: v?.occupancy ?? 0,
  };
}

/** Warp-multiple block sizes near the current one that give more resident warps (dynamic shared memory per block unchanged). */
export function blockSizeStep(q: OccupancyQuery): BlockSizeStep {
  const ws = q.device.warpSize;
  const nowWarps = option(q, q.blockSize).activeWarps;
  const limit = q.device.maxThreadsPerBlock;
  const sizes: number[] = [];
  for (let b = ws; b <= limit; b += ws) sizes.push(b);
  const options = sizes.map((b) => option(q, b)).filter((o) => o.activeWarps > nowWarps);
  const below = options.filter((o) => o.blockSize < q.blockSize);
  const above = options.filter((o) => o.blockSize > q.blockSize);
  let best: BlockSizeOption | null = null;
  for (const o of options) {
    const closer = best !== null && Math.abs(o.blockSize - q.blockSize) < Math.abs(best.blockSize - q.blockSize);
    if (best === null || o.activeWarps > best.activeWarps || (o.activeWarps === best.activeWarps && closer)) best = o;
  }
  return {
    activeWarps: nowWarps,
    smaller: below.length > 0 ? below[below.length - 1] : null,
    larger: above.length > 0 ? above[0] : null,
    best,
  };
}

/** All three next steps for one configuration. */
export function nextStep(q: OccupancyQuery): NextStep {
  return { registers: registerStep(q), sharedMemory: sharedMemoryStep(q), blockSize: blockSizeStep(q) };
}

/**
 * The register cap `__launch_bounds__(maxThreads, minBlocks)` implies on a device: the
 * most registers per thread (at most 255) at which `minBlocks` blocks of `maxThreads`
 * threads fit the register file, by the header's register model (per-warp allocation in
 * 256-register units, per-sub-partition warp rounding). This is the budget ptxas works
 * to; null when the bound cannot be met at any register count (too many threads or
 * blocks for the SM's warp slots, block slots or register file).
 */
export function launchBoundsRegisterCap(device: DeviceProps, maxThreads: number, minBlocks = 1): number | null {
  if (maxThreads <= 0 || maxThreads > device.maxThreadsPerBlock) return null;
  const blocks = Math.max(1, minBlocks);
  const base: OccupancyQuery = { device, blockSize: maxThreads };
  const fits = (regs: number): boolean => {
    const r = occupancy({ ...base, numRegs: regs });
    return r.ok && r.value.blockLimitRegs >= blocks;
  };
  const slots = occupancy(base);
  if (!slots.ok || slots.value.blockLimitWarps < blocks || slots.value.blockLimitBlocks < blocks) return null;
  return lastTrue(1, MAX_REGS_PER_THREAD, fits) ?? null;
}

/**
 * The most registers per thread at which the SM still holds at least `warpsNeeded` warps (at the
 * query's block size and shared memory): what a kernel could spend on unrolling or ILP before it
 * loses latency hiding ("aim for a full gap, not a full stadium"). Null when even the query's own
 * registers hold fewer warps.
 */
export function registerHeadroom(query: OccupancyQuery, warpsNeeded: number): number | null {
  const warpsAt = (numRegs: number) => {
    const r = occupancy({ ...query, numRegs });
    return r.ok ? r.value.activeWarps : 0;
  };
  const own = query.numRegs ?? 0;
  if (warpsAt(own) < warpsNeeded) return null;
  // Resident warps only fall as registers grow: the first count that holds too few ends the search.
  let best = own;
  for (let regs = own + 1; regs <= 255 && warpsAt(regs) >= warpsNeeded; regs++) best = regs;
  return best;
}
