/**
 * Theoretical occupancy exactly as NVIDIA's `cuda_occupancy.h` (CUDA 13.0, compute
 * capabilities up to 12.1) computes it: `cudaOccMaxActiveBlocksPerMultiprocessor`,
 * `cudaOccMaxPotentialOccupancyBlockSize` (fixed and per-thread dynamic shared memory)
 * and `cudaOccAvailableDynamicSMemPerBlock`.
 *
 * Each private function below mirrors the header function of the same name, branch for
 * branch, including the per-arch constants the header hard-codes by compute capability
 * (so a caller-supplied device, not only a row of arch-table.ts, gets the header's
 * answer, errors included). The differential test compares this file with the header
 * itself (test/oracle/occupancy-reference.cpp, compiled against the toolkit's header) on
 * tens of thousands of queries.
 *
 * Steps (docs/occupancy-model.md explains each figure):
 *  1. input checks (CUDA_OCC_ERROR_INVALID_INPUT / CUDA_OCC_ERROR_UNKNOWN_DEVICE);
 *  2. registers: per-warp rounding to 256, the hardware check over all sub-partitions,
 *     warps per sub-partition, partitioned global caching (5.2/5.3/6.x), and on 6.0 the
 *     GP10x forward-compatibility check;
 *  3. warps; 4. block slots; 5. shared memory: granularity, the reserved 1 KB per block
 *     (8.0+), per-block default/opt-in limit, carveout / cacheConfig preference rounded
 *     to a supported size; 6. virtual resources (10.x-12.x);
 *  7. the minimum, with every tied limit's bit; 8. barriers (9.0+), taken after.
 *
 * Sizes are bytes. The header's size_t arithmetic never exceeds 2^53 here except in one
 * Kepler (3.x) path that can wrap around; that path uses BigInt to wrap like C does.
 */

import type { DeviceProps } from './arch-table';

export type OccupancyErrorCode = 'CUDA_OCC_ERROR_INVALID_INPUT' | 'CUDA_OCC_ERROR_UNKNOWN_DEVICE';
export type PartitionedGCConfig = 'off' | 'on' | 'on_strict';
export type ShmemLimitConfig = 'default' | 'optin';
export type CacheConfig = 'none' | 'shared' | 'l1' | 'equal';
export type LimitingFactor = 'warps' | 'registers' | 'sharedMemory' | 'blocks' | 'barriers' | 'virtualResources';

export const INT_MAX = 2147483647;

/** Bit values of `cudaOccLimitingFactor`, in bit order. */
export const LIMITING_FACTOR_BITS: ReadonlyArray<readonly [LimitingFactor, number]> = [
  ['warps', 0x01],
  ['registers', 0x02],
  ['sharedMemory', 0x04],
  ['blocks', 0x08],
  ['barriers', 0x10],
  ['virtualResources', 0x20],
];

/**
 * One kernel launch on one device. Everything but `device` and `blockSize` is optional;
 * the defaults are the oracle's (see resolveAttributes).
 */
export interface OccupancyQuery {
  device: DeviceProps;
  blockSize: number;
  /** Registers per thread as ptxas reports them. */
  numRegs?: number;
  /** Static shared memory per block. */
  sharedSizeBytes?: number;
  /** Dynamic shared memory per block (the third launch parameter). */
  dynamicSmemBytes?: number;
  /** The kernel's launch bound; 0 or absent: the device's. Only maxPotentialBlockSize uses it. */
  maxThreadsPerBlock?: number;
  shmemLimitConfig?: ShmemLimitConfig;
  /** cudaFuncAttributeMaxDynamicSharedMemorySize; default: opt-in - static with 'optin', else sharedMemPerBlock - static. */
  maxDynamicSharedSizeBytes?: number;
  partitionedGCConfig?: PartitionedGCConfig;
  /** Default 1, as the header's cudaFuncAttributes conversion sets it; 0 switches the barrier limit off. */
  numBlockBarriers?: number;
  virtualResourceCount?: number;
  cacheConfig?: CacheConfig;
  /** Preferred shared memory carveout in percent, -1 = default. */
  carveout?: number;
}

/** `cudaOccFuncAttributes` with every field given. */
export interface KernelAttributes {
  maxThreadsPerBlock: number;
  numRegs: number;
  sharedSizeBytes: number;
  partitionedGCConfig: PartitionedGCConfig;
  shmemLimitConfig: ShmemLimitConfig;
  maxDynamicSharedSizeBytes: number;
  numBlockBarriers: number;
  virtualResourceCount: number;
}

/** `cudaOccDeviceState`. */
export interface DeviceState {
  cacheConfig: CacheConfig;
  carveout: number;
}

export interface OccupancyResult {
  activeBlocksPerMultiprocessor: number;
  warpsPerBlock: number;
  activeWarps: number;
  activeThreads: number;
  maxWarpsPerMultiprocessor: number;
  /** activeWarps / maxWarpsPerMultiprocessor */
  occupancy: number;
  limitingFactors: LimitingFactor[];
  limitingFactorsMask: number;
  blockLimitRegs: number;
  blockLimitSharedMem: number;
  blockLimitWarps: number;
  blockLimitBlocks: number;
  blockLimitBarriers: number;
  blockLimitVirtual: number;
  allocatedRegistersPerBlock: number;
  allocatedSharedMemPerBlock: number;
  /** Partitioned global caching as the header resolved it. */
  partitionedGCConfig: PartitionedGCConfig;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: OccupancyErrorCode };

export interface MaxPotentialBlockSizeQuery extends Omit<OccupancyQuery, 'blockSize'> {
  /** Dynamic shared memory = dynamicSmemBytes + this x blockSize (the header's VariableSMem variant). */
  dynamicSmemPerThreadBytes?: number;
}

export interface MaxPotentialBlockSize {
  /** Suggested block size; 0 = no block size can run. */
  blockSize: number;
  /** Blocks per SM at that size x numSms. */
  minGridSize: number;
}

export interface AvailableDynamicSmemQuery extends Omit<OccupancyQuery, 'dynamicSmemBytes'> {
  numBlocks: number;
}

/** The header's constants for one compute capability, as its helper functions return them. */
export interface HeaderArchConstants {
  /** The first helper that failed, as `name: CODE`, or null. */
  error: string | null;
  smemAllocationGranularity: number;
  regAllocationGranularity: number;
  maxRegsPerThread: number;
  subPartitionsPerMultiprocessor: number;
  maxBlocksPerMultiprocessor: number;
  maxVirtualResourcesPerMultiprocessor: number;
  partitionedGlobalCachingSupported: boolean;
  barriersPerBlockSlot: number;
  barrierLimitApplied: boolean;
  carveoutConfigurable: boolean;
  sharedMemCarveoutKB: number[];
  /** cudaOccSMemPerMultiprocessor with the default state; -1 when it fails. */
  defaultSharedMemPerMultiprocessor: number;
}

// ---------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------

/** Fills in the kernel attributes the query leaves out, as the oracle does. */
export function resolveAttributes(q: Omit<OccupancyQuery, 'blockSize'>): KernelAttributes {
  const sharedSizeBytes = q.sharedSizeBytes ?? 0;
  const shmemLimitConfig = q.shmemLimitConfig ?? 'default';
  const perBlock = shmemLimitConfig === 'optin' ? q.device.sharedMemPerBlockOptin : q.device.sharedMemPerBlock;
  return {
    maxThreadsPerBlock: q.maxThreadsPerBlock || q.device.maxThreadsPerBlock,
    numRegs: q.numRegs ?? 0,
    sharedSizeBytes,
    partitionedGCConfig: q.partitionedGCConfig ?? 'off',
    shmemLimitConfig,
    maxDynamicSharedSizeBytes: q.maxDynamicSharedSizeBytes ?? Math.max(0, perBlock - sharedSizeBytes),
    numBlockBarriers: q.numBlockBarriers ?? 1,
    virtualResourceCount: q.virtualResourceCount ?? 0,
  };
}

export function resolveState(q: Pick<OccupancyQuery, 'cacheConfig' | 'carveout'>): DeviceState {
  return { cacheConfig: q.cacheConfig ?? 'none', carveout: q.carveout ?? -1 };
}

// ---------------------------------------------------------------------------
// The header's helpers
// ---------------------------------------------------------------------------

class HeaderError extends Error {
  constructor(readonly code: OccupancyErrorCode) {
    super(code);
  }
}
const unknownDevice = (): never => {
  throw new HeaderError('CUDA_OCC_ERROR_UNKNOWN_DEVICE');
};
const invalidInput = (): never => {
  throw new HeaderError('CUDA_OCC_ERROR_INVALID_INPUT');
};

/** C integer division (truncates toward zero). */
const idiv = (a: number, b: number): number => Math.trunc(a / b);
const divideRoundUp = (x: number, y: number): number => idiv(x + (y - 1), y);
const roundUp = (x: number, y: number): number => y * divideRoundUp(x, y);

const KB = 1024;
const SIZE_T = 1n << 64n;

function cudaOccSMemAllocationGranularity(p: DeviceProps): number {
  switch (p.computeMajor) {
    case 3:
    case 5:
    case 6:
    case 7:
      return 256;
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
      return 128;
    default:
      return unknownDevice();
  }
}

function cudaOccRegAllocationMaxPerThread(p: DeviceProps): number {
  switch (p.computeMajor) {
    case 3:
    case 5:
    case 6:
      return 255;
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
      return 256;
    default:
      return unknownDevice();
  }
}

function cudaOccRegAllocationGranularity(p: DeviceProps): number {
  switch (p.computeMajor) {
    case 3:
    case 5:
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
      return 256;
    default:
      return unknownDevice();
  }
}

function cudaOccSubPartitionsPerMultiprocessor(p: DeviceProps): number {
  switch (p.computeMajor) {
    case 3:
    case 5:
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
      return 4;
    case 6:
      return p.computeMinor ? 4 : 2;
    default:
      return unknownDevice();
  }
}

function cudaOccMaxBlocksPerMultiprocessor(p: DeviceProps): number {
  switch (p.computeMajor) {
    case 3:
      return 16;
    case 5:
    case 6:
      return 32;
    case 7:
      return p.computeMinor === 5 ? 16 : 32;
    case 8:
      return p.computeMinor === 0 ? 32 : p.computeMinor === 9 ? 24 : 16;
    case 9:
      return 32;
    case 10:
      return p.computeMinor === 1 ? 24 : 32;
    case 11:
      return p.computeMinor === 0 ? 24 : 32;
    case 12:
      return 24;
    default:
      return unknownDevice();
  }
}

/** Carveout sizes (KB) the header rounds up to, per compute capability; undefined: unknown device. */
function carveoutStepsKB(p: DeviceProps): readonly number[] | undefined {
  switch (p.computeMajor) {
    case 7:
      return p.computeMinor === 5 ? [32, 64] : [0, 8, 16, 32, 64, 96];
    case 8:
      return p.computeMinor === 0 || p.computeMinor === 7 ? [0, 8, 16, 32, 64, 100, 132, 164] : [0, 8, 16, 32, 64, 100];
    case 9:
      return [0, 8, 16, 32, 64, 100, 132, 164, 196, 228];
    case 10:
    case 11:
      return [0, 1, 3].includes(p.computeMinor) ? [0, 8, 16, 32, 64, 100, 132, 164, 196, 228] : undefined;
    case 12:
      return [0, 1].includes(p.computeMinor) ? [0, 8, 16, 32, 64, 100] : undefined;
    default:
      return undefined;
  }
}

function cudaOccAlignUpShmemSizeVoltaPlus(size: number, p: DeviceProps): number {
  const steps = carveoutStepsKB(p) ?? unknownDevice();
  // Every list but Turing's starts at 0, which maps only 0 to itself; Turing maps 0 to 32 KB.
  for (const kb of steps) if (size <= kb * KB) return kb * KB;
  return invalidInput();
}

function cudaOccSMemPreferenceVoltaPlus(p: DeviceProps, s: DeviceState): number {
  let pref = s.carveout;
  if (pref < -1 || pref > 100) invalidInput();
  if (pref === -1) {
    pref = s.cacheConfig === 'l1' ? 0 : s.cacheConfig === 'shared' ? 100 : s.cacheConfig === 'equal' ? 50 : -1;
  }
  const size = pref === -1 ? p.sharedMemPerMultiprocessor : Math.floor((pref * p.sharedMemPerMultiprocessor) / 100);
  return cudaOccAlignUpShmemSizeVoltaPlus(size, p);
}

/** Kepler's L1/shared split can wrap around in size_t for tiny devices; BigInt keeps C's result. */
function cudaOccSMemPreference(p: DeviceProps, s: DeviceState): bigint {
  const high = BigInt(p.sharedMemPerMultiprocessor);
  const low = (((high + 16384n - 49152n) % SIZE_T) + SIZE_T) % SIZE_T;
  switch (p.computeMajor) {
    case 3:
      if (s.cacheConfig === 'l1') return low;
      if (s.cacheConfig === 'equal') return ((high + low) % SIZE_T) / 2n;
      return high;
    case 5:
    case 6:
      return high;
    default:
      return unknownDevice();
  }
}

function cudaOccSMemPerMultiprocessor(p: DeviceProps, s: DeviceState): bigint {
  if (p.computeMajor >= 7) return BigInt(cudaOccSMemPreferenceVoltaPlus(p, s));
  return cudaOccSMemPreference(p, s);
}

function cudaOccSMemPerBlock(p: DeviceProps, config: ShmemLimitConfig, smemPerCta: number): number {
  let limit: number;
  switch (p.computeMajor) {
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
      limit = p.sharedMemPerBlock;
      break;
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
      limit = config === 'optin' && smemPerCta > p.sharedMemPerBlock ? p.sharedMemPerBlockOptin : p.sharedMemPerBlock;
      break;
    default:
      return unknownDevice();
  }
  if (p.computeMajor >= 8) limit += p.reservedSharedMemPerBlock;
  return limit;
}

function cudaOccPartitionedGlobalCachingModeSupport(p: DeviceProps): boolean {
  return (
    (p.computeMajor === 5 && (p.computeMinor === 2 || p.computeMinor === 3)) ||
    (p.computeMajor === 6 && p.computeMinor !== 0)
  );
}

function cudaOccMaxVirtualResourceCountPerSM(p: DeviceProps): number {
  return p.computeMajor >= 10 && p.computeMajor <= 12 ? 128 : 0;
}

function cudaOccInputCheck(p: DeviceProps, a: KernelAttributes): void {
  if (
    p.maxThreadsPerBlock <= 0 ||
    p.maxThreadsPerMultiprocessor <= 0 ||
    p.regsPerBlock <= 0 ||
    p.regsPerMultiprocessor <= 0 ||
    p.warpSize <= 0 ||
    p.sharedMemPerBlock <= 0 ||
    p.sharedMemPerMultiprocessor <= 0 ||
    p.numSms <= 0
  )
    invalidInput();
  if (a.maxThreadsPerBlock <= 0 || a.numRegs < 0) invalidInput();
}

function cudaOccPartitionedGCExpected(p: DeviceProps, a: KernelAttributes): PartitionedGCConfig {
  return cudaOccPartitionedGlobalCachingModeSupport(p) ? a.partitionedGCConfig : 'off';
}

function cudaOccMaxBlocksPerSMWarpsLimit(gc: PartitionedGCConfig, p: DeviceProps, blockSize: number): number {
  if (blockSize > p.maxThreadsPerBlock) return 0;
  const maxWarpsPerSm = idiv(p.maxThreadsPerMultiprocessor, p.warpSize);
  const warpsPerCta = divideRoundUp(blockSize, p.warpSize);
  if (gc !== 'off') {
    // A block may only use half the SM (one partition) with partitioned caching on.
    return idiv(idiv(maxWarpsPerSm, 2), warpsPerCta) * 2;
  }
  return idiv(maxWarpsPerSm, warpsPerCta);
}

interface SmemLimit {
  limit: number;
  allocatedSharedMemPerBlock: number;
}

function cudaOccMaxBlocksPerSMSmemLimit(
  p: DeviceProps,
  a: KernelAttributes,
  s: DeviceState,
  dynamicSmemSize: number,
): SmemLimit {
  const granularity = cudaOccSMemAllocationGranularity(p);
  const userSmemPreference = cudaOccSMemPerMultiprocessor(p, s);
  const staticSmemSize = a.sharedSizeBytes + p.reservedSharedMemPerBlock;
  const allocated = roundUp(staticSmemSize + dynamicSmemSize, granularity);
  const maxSmemUsagePerCta = staticSmemSize + a.maxDynamicSharedSizeBytes;
  const dynamicExceeded = a.shmemLimitConfig !== 'default' && dynamicSmemSize > a.maxDynamicSharedSizeBytes;
  const limitPerCta = cudaOccSMemPerBlock(p, a.shmemLimitConfig, maxSmemUsagePerCta);
  const totalExceeded = allocated > limitPerCta;
  let limit: number;
  if (dynamicExceeded || totalExceeded) {
    limit = 0;
  } else {
    let perSm: bigint;
    if (userSmemPreference >= BigInt(allocated)) {
      perSm = userSmemPreference;
    } else if (p.computeMajor >= 7) {
      // A preference below one block's need is raised to the next carveout that holds it.
      perSm = BigInt(cudaOccAlignUpShmemSizeVoltaPlus(allocated, p));
    } else {
      perSm = BigInt(p.sharedMemPerMultiprocessor);
    }
    limit = allocated > 0 ? Number(BigInt.asIntN(32, perSm / BigInt(allocated))) : INT_MAX;
  }
  return { limit, allocatedSharedMemPerBlock: allocated };
}

interface RegsLimit {
  limit: number;
  gc: PartitionedGCConfig;
  allocatedRegistersPerBlock: number;
}

function cudaOccMaxBlocksPerSMRegsLimit(
  gcIn: PartitionedGCConfig,
  p: DeviceProps,
  a: KernelAttributes,
  blockSize: number,
): RegsLimit {
  let gc = gcIn;
  const granularity = cudaOccRegAllocationGranularity(p);
  const maxRegsPerThread = cudaOccRegAllocationMaxPerThread(p);
  const subPartitions = cudaOccSubPartitionsPerMultiprocessor(p);
  const warpsPerCta = divideRoundUp(blockSize, p.warpSize);
  const regsPerWarp = roundUp(a.numRegs * p.warpSize, granularity);
  const regsPerCta = regsPerWarp * warpsPerCta;
  // The hardware check assumes a block's warps are spread over every sub-partition.
  const regsAssumedPerCta = regsPerWarp * roundUp(warpsPerCta, subPartitions);
  let limit: number;
  if (p.regsPerBlock < regsAssumedPerCta || p.regsPerBlock < regsPerCta || a.numRegs > maxRegsPerThread) {
    limit = 0;
  } else if (regsPerWarp > 0) {
    const warpsPerSubPartition = idiv(idiv(p.regsPerMultiprocessor, subPartitions), regsPerWarp);
    limit = 0;
    if (gc !== 'off') {
      const warpsPerSmPartition = warpsPerSubPartition * idiv(subPartitions, 2);
      limit = idiv(warpsPerSmPartition, warpsPerCta) * 2;
    }
    // Without caching, or when the block does not fit half an SM (the device then turns caching off unless strict).
    if (limit === 0 && gc !== 'on_strict') {
      gc = 'off';
      limit = idiv(warpsPerSubPartition * subPartitions, warpsPerCta);
    }
  } else {
    limit = INT_MAX;
  }
  return { limit, gc, allocatedRegistersPerBlock: regsPerCta };
}

function barriersAvailablePerBlockSlot(p: DeviceProps): number {
  switch (p.computeMajor) {
    case 5:
    case 6:
    case 7:
    case 9:
      return 2;
    case 8:
      return p.computeMinor === 0 ? 2 : 1;
    case 10:
      return p.computeMinor === 1 ? 1 : 2;
    case 11:
      return p.computeMinor === 0 ? 1 : 2;
    case 12:
      return 1;
    default:
      return unknownDevice();
  }
}

function cudaOccMaxBlocksPerSMBlockBarrierLimit(ctaLimitBlocks: number, p: DeviceProps, a: KernelAttributes): number {
  const available = ctaLimitBlocks * barriersAvailablePerBlockSlot(p);
  return a.numBlockBarriers ? idiv(available, a.numBlockBarriers) : INT_MAX;
}

function cudaOccMaxBlocksPerSMVirtualResource(p: DeviceProps, a: KernelAttributes): number {
  const perSm = cudaOccMaxVirtualResourceCountPerSM(p);
  if (perSm <= 0 || a.virtualResourceCount <= 0) return INT_MAX;
  return idiv(perSm, a.virtualResourceCount);
}

// ---------------------------------------------------------------------------
// The header's API functions
// ---------------------------------------------------------------------------

function maxActiveBlocks(
  p: DeviceProps,
  a: KernelAttributes,
  s: DeviceState,
  blockSize: number,
  dynamicSmem: number,
): OccupancyResult {
  if (blockSize <= 0) invalidInput();
  cudaOccInputCheck(p, a);
  const gcExpected = cudaOccPartitionedGCExpected(p, a);
  const regs = cudaOccMaxBlocksPerSMRegsLimit(gcExpected, p, a, blockSize);
  let ctaLimitRegs = regs.limit;
  // GP100 (6.0) has 2 sub-partitions; a kernel that could not run on GP10x is refused on GP100 too.
  if (p.computeMajor === 6 && p.computeMinor === 0 && ctaLimitRegs) {
    const gp10x = cudaOccMaxBlocksPerSMRegsLimit(regs.gc, { ...p, computeMinor: 1 }, a, blockSize);
    if (gp10x.limit === 0) ctaLimitRegs = 0;
  }
  const gc = regs.gc;
  const ctaLimitWarps = cudaOccMaxBlocksPerSMWarpsLimit(gc, p, blockSize);
  const ctaLimitBlocks = cudaOccMaxBlocksPerMultiprocessor(p);
  const smem = cudaOccMaxBlocksPerSMSmemLimit(p, a, s, dynamicSmem);
  const ctaLimitVirtual = cudaOccMaxBlocksPerSMVirtualResource(p, a);

  let ctaLimit = Math.min(ctaLimitRegs, smem.limit, ctaLimitWarps, ctaLimitBlocks, ctaLimitVirtual);
  let mask = 0;
  if (ctaLimit === ctaLimitWarps) mask |= 0x01;
  if (ctaLimit === ctaLimitRegs) mask |= 0x02;
  if (ctaLimit === smem.limit) mask |= 0x04;
  if (ctaLimit === ctaLimitBlocks) mask |= 0x08;
  if (ctaLimit === ctaLimitVirtual) mask |= 0x20;

  let ctaLimitBars = INT_MAX;
  if (p.computeMajor >= 9 && a.numBlockBarriers > 0) {
    ctaLimitBars = cudaOccMaxBlocksPerSMBlockBarrierLimit(ctaLimitBlocks, p, a);
    ctaLimit = Math.min(ctaLimitBars, ctaLimit);
    if (ctaLimit === ctaLimitBars) mask |= 0x10;
  }

  const warpsPerBlock = divideRoundUp(blockSize, p.warpSize);
  const maxWarps = idiv(p.maxThreadsPerMultiprocessor, p.warpSize);
  const activeWarps = ctaLimit * warpsPerBlock;
  return {
    activeBlocksPerMultiprocessor: ctaLimit,
    warpsPerBlock,
    activeWarps,
    activeThreads: ctaLimit * blockSize,
    maxWarpsPerMultiprocessor: maxWarps,
    occupancy: maxWarps > 0 ? activeWarps / maxWarps : 0,
    limitingFactors: LIMITING_FACTOR_BITS.filter(([, bit]) => mask & bit).map(([name]) => name),
    limitingFactorsMask: mask,
    blockLimitRegs: ctaLimitRegs,
    blockLimitSharedMem: smem.limit,
    blockLimitWarps: ctaLimitWarps,
    blockLimitBlocks: ctaLimitBlocks,
    blockLimitBarriers: ctaLimitBars,
    blockLimitVirtual: ctaLimitVirtual,
    allocatedRegistersPerBlock: regs.allocatedRegistersPerBlock,
    allocatedSharedMemPerBlock: smem.allocatedSharedMemPerBlock,
    partitionedGCConfig: gc,
  };
}

function attempt<T>(compute: () => T): Outcome<T> {
  try {
    return { ok: true, value: compute() };
  } catch (e) {
    if (e instanceof HeaderError) return { ok: false, error: e.code };
    throw e;
  }
}

/** `cudaOccMaxActiveBlocksPerMultiprocessor`: blocks per SM, every limit, and what binds. */
export function occupancy(q: OccupancyQuery): Outcome<OccupancyResult> {
  return attempt(() =>
    maxActiveBlocks(q.device, resolveAttributes(q), resolveState(q), q.blockSize, q.dynamicSmemBytes ?? 0),
  );
}

/**
 * `cudaOccMaxPotentialOccupancyBlockSize` (or its `VariableSMem` variant when
 * `dynamicSmemPerThreadBytes` is given): tries block sizes from the launch bound down in
 * warp steps and keeps the first with the most resident threads.
 */
export function maxPotentialBlockSize(q: MaxPotentialBlockSizeQuery): Outcome<MaxPotentialBlockSize> {
  const p = q.device;
  const a = resolveAttributes(q);
  const s = resolveState(q);
  const base = q.dynamicSmemBytes ?? 0;
  const perThread = q.dynamicSmemPerThreadBytes ?? 0;
  return attempt(() => {
    cudaOccInputCheck(p, a);
    const occupancyLimit = p.maxThreadsPerMultiprocessor;
    const granularity = p.warpSize;
    const blockSizeLimit = Math.min(p.maxThreadsPerBlock, a.maxThreadsPerBlock);
    let best = 0;
    let bestBlocks = 0;
    let bestThreads = 0;
    for (let aligned = roundUp(blockSizeLimit, granularity); aligned > 0; aligned -= granularity) {
      const blockSize = Math.min(blockSizeLimit, aligned);
      const r = maxActiveBlocks(p, a, s, blockSize, base + perThread * blockSize);
      const threads = blockSize * r.activeBlocksPerMultiprocessor;
      if (threads > bestThreads) {
        best = blockSize;
        bestBlocks = r.activeBlocksPerMultiprocessor;
        bestThreads = threads;
      }
      if (occupancyLimit === bestThreads) break;
    }
    return { blockSize: best, minGridSize: bestBlocks * p.numSms };
  });
}

/**
 * `cudaOccAvailableDynamicSMemPerBlock`: dynamic shared memory per block that still lets
 * `numBlocks` blocks fit. Header quirk kept: from 8.0 the answer does not subtract the
 * reserved 1 KB per block, so that many blocks of that size may not actually fit.
 */
export function availableDynamicSmem(q: AvailableDynamicSmemQuery): Outcome<number> {
  const p = q.device;
  const a = resolveAttributes(q);
  const s = resolveState(q);
  return attempt(() => {
    if (q.numBlocks <= 0) invalidInput();
    const r = maxActiveBlocks(p, a, s, q.blockSize, 0);
    if (r.activeBlocksPerMultiprocessor < q.numBlocks) invalidInput();
    const granularity = cudaOccSMemAllocationGranularity(p);
    const limitPerBlock = cudaOccSMemPerBlock(p, a.shmemLimitConfig, p.sharedMemPerMultiprocessor);
    let pref = cudaOccSMemPerMultiprocessor(p, s);
    let perSm: bigint;
    if (q.numBlocks === 1) {
      perSm = BigInt(limitPerBlock);
    } else {
      if (pref === 0n) pref = BigInt(cudaOccAlignUpShmemSizeVoltaPlus(1, p));
      perSm = pref;
    }
    let available = Number((perSm / BigInt(q.numBlocks) / BigInt(granularity)) * BigInt(granularity));
    if (available > limitPerBlock) available = limitPerBlock;
    // size_t subtraction: a negative difference wraps to a huge value, which the cap below then clips.
    const dynamic = available >= a.sharedSizeBytes ? available - a.sharedSizeBytes : Infinity;
    return Math.min(dynamic, a.maxDynamicSharedSizeBytes);
  });
}

/** The header's hard-coded constants for a device's compute capability (what the oracle's archInfo mode prints). */
export function headerArchConstants(p: DeviceProps): HeaderArchConstants {
  let error: string | null = null;
  const get = (name: string, f: () => number): number => {
    try {
      return f();
    } catch (e) {
      if (!(e instanceof HeaderError)) throw e;
      error ??= `${name}: ${e.code}`;
      return 0;
    }
  };
  const smemAllocationGranularity = get('cudaOccSMemAllocationGranularity', () => cudaOccSMemAllocationGranularity(p));
  const regAllocationGranularity = get('cudaOccRegAllocationGranularity', () => cudaOccRegAllocationGranularity(p));
  const maxRegsPerThread = get('cudaOccRegAllocationMaxPerThread', () => cudaOccRegAllocationMaxPerThread(p));
  const subPartitionsPerMultiprocessor = get('cudaOccSubPartitionsPerMultiprocessor', () =>
    cudaOccSubPartitionsPerMultiprocessor(p),
  );
  const maxBlocksPerMultiprocessor = get('cudaOccMaxBlocksPerMultiprocessor', () =>
    cudaOccMaxBlocksPerMultiprocessor(p),
  );
  let barriersPerBlockSlot = 0;
  if (error === null && maxBlocksPerMultiprocessor > 0) {
    try {
      barriersPerBlockSlot = idiv(
        maxBlocksPerMultiprocessor * barriersAvailablePerBlockSlot(p),
        maxBlocksPerMultiprocessor,
      );
    } catch (e) {
      if (!(e instanceof HeaderError)) throw e;
    }
  }
  let defaultSharedMemPerMultiprocessor = -1;
  try {
    defaultSharedMemPerMultiprocessor = Number(cudaOccSMemPerMultiprocessor(p, resolveState({})));
  } catch (e) {
    if (!(e instanceof HeaderError)) throw e;
    error ??= 'cudaOccSMemPerMultiprocessor: CUDA_OCC_ERROR_UNKNOWN_DEVICE';
  }
  let sharedMemCarveoutKB: number[] = [];
  if (p.computeMajor >= 7) {
    const sizes = new Set<number>();
    for (let kb = 0; kb <= 1024; kb++) {
      try {
        sizes.add(cudaOccAlignUpShmemSizeVoltaPlus(kb * KB, p) / KB);
      } catch (e) {
        if (!(e instanceof HeaderError)) throw e;
        break;
      }
    }
    sharedMemCarveoutKB = [...sizes].sort((x, y) => x - y);
  } else if (defaultSharedMemPerMultiprocessor >= 0) {
    sharedMemCarveoutKB = [Math.trunc(defaultSharedMemPerMultiprocessor / KB)];
  }
  return {
    error,
    smemAllocationGranularity,
    regAllocationGranularity,
    maxRegsPerThread,
    subPartitionsPerMultiprocessor,
    maxBlocksPerMultiprocessor,
    maxVirtualResourcesPerMultiprocessor: cudaOccMaxVirtualResourceCountPerSM(p),
    partitionedGlobalCachingSupported: cudaOccPartitionedGlobalCachingModeSupport(p),
    barriersPerBlockSlot,
    barrierLimitApplied: p.computeMajor >= 9,
    carveoutConfigurable: p.computeMajor >= 7,
    sharedMemCarveoutKB,
    defaultSharedMemPerMultiprocessor,
  };
}

/**
 * The per-SM shared memory the shared-memory limit divides by, for a block allocating
 * `allocatedSharedMemPerBlock` bytes (derived by repeating the header's steps; not a
 * header output). An error code when the header's preference step fails.
 */
export function sharedMemPerMultiprocessorUsed(q: OccupancyQuery, allocatedSharedMemPerBlock: number): Outcome<number> {
  return attempt(() => {
    const pref = Number(cudaOccSMemPerMultiprocessor(q.device, resolveState(q)));
    if (pref >= allocatedSharedMemPerBlock) return pref;
    if (q.device.computeMajor >= 7) return cudaOccAlignUpShmemSizeVoltaPlus(allocatedSharedMemPerBlock, q.device);
    return q.device.sharedMemPerMultiprocessor;
  });
}
