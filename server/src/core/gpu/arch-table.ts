/**
 * One row per compute capability NVIDIA documents from 5.0 to 12.1: the figures the
 * occupancy calculator, the next-step search and the latency estimate need.
 *
 * Sources (the ids each row's `sources` names; its `notes` say where they disagree or are unsure):
 * - PG13: CUDA Programming Guide (CUDA 13.x), 5.1 Compute Capabilities, Tables 30-32
 *   https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html
 * - PG-legacy: CUDA C++ Programming Guide (legacy edition), chapter 20 Compute Capabilities
 *   https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-capabilities
 * - VoltaTG / BlackwellTG: the Volta and Blackwell tuning guides, "Occupancy" sections
 * - HDR: cuda_occupancy.h from CUDA 13.0 (the per-arch constants it hard-codes:
 *   cudaOccMaxBlocksPerMultiprocessor, cudaOccAlignUpShmemSizeVoltaPlus, ...)
 * - CCCL: libcu++ cuda/__device/arch_traits.h (cross-check for 6.0-12.1)
 *
 * The header wins where a document disagrees, because our figures must be NVIDIA's
 * calculator's bit for bit: 12.x has 24 resident blocks per SM (PG13, CCCL, HDR; the
 * Blackwell tuning guide says 32). `maxRegsPerThread` is the documented 255; the header
 * itself checks `numRegs > 256` from major 7 on (see occupancy.ts).
 *
 * Latency-model figures (not used by the occupancy calculation):
 * - `globalMemoryLatency`: the default DRAM load latency in SM cycles for the family,
 *   rounded from the "Dissecting ... via microbenchmarking" series (pointer-chasing
 *   loads that miss L1 and L2): Jia et al. 2018, Volta (arXiv:1804.06826, which also
 *   measures Maxwell M60 and Pascal P100); Jia et al. 2019, Turing T4
 *   (arXiv:1903.07486); Luo et al. 2024, Hopper H800 compared with A100 and RTX 4090
 *   (arXiv:2402.13499). These are round defaults, good to a few tens of cycles, and a
 *   setting overrides them. Blackwell has no entry in that series that we could check,
 *   so its rows reuse the Hopper figure and say so.
 * - `referencePart`: one shipping part per arch (NVIDIA product pages / whitepapers)
 *   whose DRAM bandwidth, SM count and boost clock give the SM's share of DRAM
 *   bandwidth per cycle. Parts marked "unverified" have figures we could not confirm
 *   from a retrieved NVIDIA page.
 */

/** The 12 fields of cuda_occupancy.h's `cudaOccDeviceProp`. Sizes in bytes. */
import { memoByText } from '../incremental/kept-tables';

export interface DeviceProps {
  computeMajor: number;
  computeMinor: number;
  maxThreadsPerBlock: number;
  maxThreadsPerMultiprocessor: number;
  regsPerBlock: number;
  regsPerMultiprocessor: number;
  warpSize: number;
  sharedMemPerBlock: number;
  sharedMemPerMultiprocessor: number;
  numSms: number;
  sharedMemPerBlockOptin: number;
  reservedSharedMemPerBlock: number;
}

export interface ReferencePart {
  name: string;
  dramBandwidthGBs: number;
  numSms: number;
  boostClockMHz: number;
  source: string;
}

export interface MemoryLatency {
  cycles: number;
  source: string;
}

export interface ArchRow {
  /** `sm_90` */
  name: string;
  family: string;
  device: Readonly<DeviceProps>;
  maxBlocksPerMultiprocessor: number;
  maxWarpsPerMultiprocessor: number;
  /** Registers are allocated per warp in units of this many registers. */
  regAllocationUnit: number;
  regAllocationGranularity: 'warp';
  /** Documented maximum registers per thread (ptxas never exceeds it). */
  maxRegsPerThread: number;
  /** Register-file sub-partitions per SM (the header's per-partition warp rounding). */
  subPartitionsPerMultiprocessor: number;
  /** Shared memory is allocated per block in multiples of this many bytes. */
  smemAllocationGranularity: number;
  /** Shared memory capacities per SM the carveout can select, in KB (the single fixed size before 7.0). */
  sharedMemCarveoutKB: readonly number[];
  carveoutConfigurable: boolean;
  /** Block barriers per block slot (the header's barrier factor; applied from 9.0 on). */
  barriersPerBlockSlot: number;
  /** Warp schedulers per SM, each issuing one instruction per cycle. */
  schedulersPerMultiprocessor: number;
  partitionedGlobalCachingSupported: boolean;
  /** The part `device.numSms` was taken from (only minGridSize depends on it). */
  numSmsExampleGpu: string;
  globalMemoryLatency: MemoryLatency;
  referencePart: ReferencePart;
  sources: readonly string[];
  notes: readonly string[];
}

const KB = 1024;

const LATENCY = {
  maxwell: {
    cycles: 400,
    source:
      'about 400 cycles: Jia et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (arXiv:1804.06826), Maxwell M60 comparison; rounded',
  },
  pascal: {
    cycles: 400,
    source:
      'about 400 cycles: Jia et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (arXiv:1804.06826), Pascal P100 comparison; rounded',
  },
  volta: {
    cycles: 400,
    source:
      'about 400 cycles: Jia et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (arXiv:1804.06826), V100; rounded',
  },
  turing: {
    cycles: 450,
    source:
      'about 450 cycles: Jia et al. 2019, "Dissecting the NVidia Turing T4 GPU via Microbenchmarking" (arXiv:1903.07486); rounded',
  },
  ga100: {
    cycles: 470,
    source:
      'about 470 cycles: Luo et al. 2024, "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture" (arXiv:2402.13499), A100 column; rounded',
  },
  ga10x: {
    cycles: 540,
    source:
      'about 540 cycles: Luo et al. 2024, "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture" (arXiv:2402.13499), RTX 4090 (Ada) column, used for the GA10x/Ada consumer parts; rounded',
  },
  hopper: {
    cycles: 480,
    source:
      'about 480 cycles: Luo et al. 2024, "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture" (arXiv:2402.13499), H800; rounded',
  },
  blackwell: {
    cycles: 480,
    source:
      'stand-in: the Hopper figure (about 480 cycles, Luo et al. 2024, arXiv:2402.13499); no Blackwell microbenchmark figure checked',
  },
} satisfies Record<string, MemoryLatency>;

function part(
  name: string,
  dramBandwidthGBs: number,
  numSms: number,
  boostClockMHz: number,
  source: string,
): ReferencePart {
  return { name, dramBandwidthGBs, numSms, boostClockMHz, source };
}

interface RowSpec {
  name: string;
  family: string;
  major: number;
  minor: number;
  maxThreadsPerMultiprocessor: number;
  regsPerBlock?: number;
  sharedMemPerMultiprocessor: number;
  sharedMemPerBlockOptin: number;
  numSms: number;
  numSmsExampleGpu: string;
  maxBlocksPerMultiprocessor: number;
  sharedMemCarveoutKB: readonly number[];
  barriersPerBlockSlot: number;
  subPartitionsPerMultiprocessor?: number;
  partitionedGlobalCachingSupported?: boolean;
  globalMemoryLatency: MemoryLatency;
  referencePart: ReferencePart;
  sources: readonly string[];
  notes?: readonly string[];
}

function row(spec: RowSpec): ArchRow {
  const reserved = spec.major >= 8 ? KB : 0; // "1 KB ... reserved for system use" from 8.0 (PG-legacy, HDR)
  return {
    name: spec.name,
    family: spec.family,
    device: Object.freeze({
      computeMajor: spec.major,
      computeMinor: spec.minor,
      maxThreadsPerBlock: 1024,
      maxThreadsPerMultiprocessor: spec.maxThreadsPerMultiprocessor,
      regsPerBlock: spec.regsPerBlock ?? 65536,
      regsPerMultiprocessor: 65536,
      warpSize: 32,
      sharedMemPerBlock: 48 * KB,
      sharedMemPerMultiprocessor: spec.sharedMemPerMultiprocessor,
      numSms: spec.numSms,
      sharedMemPerBlockOptin: spec.sharedMemPerBlockOptin,
      reservedSharedMemPerBlock: reserved,
    }),
    maxBlocksPerMultiprocessor: spec.maxBlocksPerMultiprocessor,
    maxWarpsPerMultiprocessor: spec.maxThreadsPerMultiprocessor / 32,
    regAllocationUnit: 256,
    regAllocationGranularity: 'warp',
    maxRegsPerThread: 255,
    subPartitionsPerMultiprocessor: spec.subPartitionsPerMultiprocessor ?? 4,
    smemAllocationGranularity: spec.major >= 8 ? 128 : 256,
    sharedMemCarveoutKB: Object.freeze([...spec.sharedMemCarveoutKB]),
    carveoutConfigurable: spec.major >= 7,
    barriersPerBlockSlot: spec.barriersPerBlockSlot,
    schedulersPerMultiprocessor: 4,
    partitionedGlobalCachingSupported: spec.partitionedGlobalCachingSupported ?? false,
    numSmsExampleGpu: spec.numSmsExampleGpu,
    globalMemoryLatency: spec.globalMemoryLatency,
    referencePart: spec.referencePart,
    sources: spec.sources,
    notes: spec.notes ?? [],
  };
}

const VOLTA_CARVEOUTS: readonly number[] = [0, 8, 16, 32, 64, 96];
const GA100_CARVEOUTS: readonly number[] = [0, 8, 16, 32, 64, 100, 132, 164];
const GA10X_CARVEOUTS: readonly number[] = [0, 8, 16, 32, 64, 100];
const HOPPER_CARVEOUTS: readonly number[] = [0, 8, 16, 32, 64, 100, 132, 164, 196, 228];

/** Every architecture, in compute-capability order. */
export const ARCHS: readonly ArchRow[] = Object.freeze([
  // Maxwell: PG-legacy 20.4; 64 KB shared memory per SM on 5.0/5.3, 96 KB on 5.2.
  row({
    name: 'sm_50',
    family: 'Maxwell (GM107/GM108)',
    major: 5,
    minor: 0,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 64 * KB,
    sharedMemPerBlockOptin: 48 * KB,
    numSms: 5,
    numSmsExampleGpu: 'GeForce GTX 750 Ti (5 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: [64],
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.maxwell,
    referencePart: part('GeForce GTX 750 Ti', 86.4, 5, 1085, 'NVIDIA GeForce GTX 750 Ti specifications'),
    sources: ['PG-legacy', 'HDR'],
  }),
  row({
    name: 'sm_52',
    family: 'Maxwell (GM20x)',
    major: 5,
    minor: 2,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 96 * KB,
    sharedMemPerBlockOptin: 48 * KB,
    numSms: 16,
    numSmsExampleGpu: 'GeForce GTX 980 (16 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: [96],
    barriersPerBlockSlot: 2,
    partitionedGlobalCachingSupported: true,
    globalMemoryLatency: LATENCY.maxwell,
    referencePart: part('GeForce GTX 980', 224, 16, 1216, 'NVIDIA GeForce GTX 980 specifications'),
    sources: ['PG-legacy', 'HDR'],
  }),
  row({
    name: 'sm_53',
    family: 'Maxwell (Tegra X1)',
    major: 5,
    minor: 3,
    maxThreadsPerMultiprocessor: 2048,
    regsPerBlock: 32768,
    sharedMemPerMultiprocessor: 64 * KB,
    sharedMemPerBlockOptin: 48 * KB,
    numSms: 1,
    numSmsExampleGpu: 'Jetson TX1 / Jetson Nano (1 SM)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: [64],
    barriersPerBlockSlot: 2,
    partitionedGlobalCachingSupported: true,
    globalMemoryLatency: LATENCY.maxwell,
    referencePart: part('Jetson Nano', 25.6, 1, 921.6, 'NVIDIA Jetson Nano module data sheet'),
    sources: ['HDR'],
    notes: ['64 KB shared memory per SM rests on older guide editions and the header grouping (archs.json notes).'],
  }),
  // Pascal: PG-legacy 20.5; GP100 has 2 register-file sub-partitions in the header (cudaOccSubPartitionsPerMultiprocessor).
  row({
    name: 'sm_60',
    family: 'Pascal (GP100)',
    major: 6,
    minor: 0,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 64 * KB,
    sharedMemPerBlockOptin: 48 * KB,
    numSms: 56,
    numSmsExampleGpu: 'Tesla P100 (56 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: [64],
    barriersPerBlockSlot: 2,
    subPartitionsPerMultiprocessor: 2,
    globalMemoryLatency: LATENCY.pascal,
    referencePart: part('Tesla P100 SXM2', 732, 56, 1480, 'NVIDIA Tesla P100 data sheet'),
    sources: ['PG-legacy', 'CCCL', 'HDR'],
    notes: ['The header also refuses a block on 6.0 that would not fit a 4-sub-partition GP10x SM.'],
  }),
  row({
    name: 'sm_61',
    family: 'Pascal (GP10x)',
    major: 6,
    minor: 1,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 96 * KB,
    sharedMemPerBlockOptin: 48 * KB,
    numSms: 20,
    numSmsExampleGpu: 'GeForce GTX 1080 (20 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: [96],
    barriersPerBlockSlot: 2,
    partitionedGlobalCachingSupported: true,
    globalMemoryLatency: LATENCY.pascal,
    referencePart: part('GeForce GTX 1080', 320, 20, 1733, 'NVIDIA GeForce GTX 1080 specifications'),
    sources: ['PG-legacy', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_62',
    family: 'Pascal (Tegra X2)',
    major: 6,
    minor: 2,
    maxThreadsPerMultiprocessor: 2048,
    regsPerBlock: 32768,
    sharedMemPerMultiprocessor: 64 * KB,
    sharedMemPerBlockOptin: 48 * KB,
    numSms: 2,
    numSmsExampleGpu: 'Jetson TX2 (2 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: [64],
    barriersPerBlockSlot: 2,
    partitionedGlobalCachingSupported: true,
    globalMemoryLatency: LATENCY.pascal,
    referencePart: part('Jetson TX2', 59.7, 2, 1300, 'NVIDIA Jetson TX2 module data sheet'),
    sources: ['PG-legacy', 'CCCL', 'HDR'],
  }),
  // Volta: VoltaTG 1.4.1.3, PG-legacy 20.6 (carveouts 0-96 KB, 96 KB per block opt-in).
  row({
    name: 'sm_70',
    family: 'Volta (GV100)',
    major: 7,
    minor: 0,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 96 * KB,
    sharedMemPerBlockOptin: 96 * KB,
    numSms: 80,
    numSmsExampleGpu: 'Tesla V100 (80 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: VOLTA_CARVEOUTS,
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.volta,
    referencePart: part('Tesla V100 SXM2', 900, 80, 1530, 'NVIDIA Tesla V100 data sheet'),
    sources: ['VoltaTG', 'PG-legacy', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_72',
    family: 'Volta (Xavier)',
    major: 7,
    minor: 2,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 96 * KB,
    sharedMemPerBlockOptin: 96 * KB,
    numSms: 8,
    numSmsExampleGpu: 'Jetson AGX Xavier (8 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: VOLTA_CARVEOUTS,
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.volta,
    referencePart: part('Jetson AGX Xavier', 136.5, 8, 1377, 'NVIDIA Jetson AGX Xavier module data sheet'),
    sources: ['HDR'],
    notes: [
      '7.2 shared memory figures follow the Volta carveouts (header grouping); the current guide does not restate them.',
    ],
  }),
  // Turing: PG13 Tables 30-32; carveouts 32 or 64 KB only, 16 blocks and 32 warps per SM.
  row({
    name: 'sm_75',
    family: 'Turing',
    major: 7,
    minor: 5,
    maxThreadsPerMultiprocessor: 1024,
    sharedMemPerMultiprocessor: 64 * KB,
    sharedMemPerBlockOptin: 64 * KB,
    numSms: 40,
    numSmsExampleGpu: 'Tesla T4 (40 SMs)',
    maxBlocksPerMultiprocessor: 16,
    sharedMemCarveoutKB: [32, 64],
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.turing,
    referencePart: part('Tesla T4', 320, 40, 1590, 'NVIDIA T4 data sheet'),
    sources: ['PG13', 'PG-legacy', 'CCCL', 'HDR'],
  }),
  // Ampere and Ada: PG13 Tables 30-32; 1 KB reserved per block, opt-in = per-SM size minus 1 KB.
  row({
    name: 'sm_80',
    family: 'Ampere (GA100)',
    major: 8,
    minor: 0,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 164 * KB,
    sharedMemPerBlockOptin: 163 * KB,
    numSms: 108,
    numSmsExampleGpu: 'A100 (108 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: GA100_CARVEOUTS,
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.ga100,
    referencePart: part('A100 SXM4 40GB', 1555, 108, 1410, 'NVIDIA A100 Tensor Core GPU Architecture whitepaper'),
    sources: ['PG13', 'PG-legacy', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_86',
    family: 'Ampere (GA10x)',
    major: 8,
    minor: 6,
    maxThreadsPerMultiprocessor: 1536,
    sharedMemPerMultiprocessor: 100 * KB,
    sharedMemPerBlockOptin: 99 * KB,
    numSms: 82,
    numSmsExampleGpu: 'GeForce RTX 3090 (82 SMs)',
    maxBlocksPerMultiprocessor: 16,
    sharedMemCarveoutKB: GA10X_CARVEOUTS,
    barriersPerBlockSlot: 1,
    globalMemoryLatency: LATENCY.ga10x,
    referencePart: part('GeForce RTX 3090', 936, 82, 1695, 'NVIDIA Ampere GA102 GPU Architecture whitepaper'),
    sources: ['PG13', 'PG-legacy', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_87',
    family: 'Ampere (Orin)',
    major: 8,
    minor: 7,
    maxThreadsPerMultiprocessor: 1536,
    sharedMemPerMultiprocessor: 164 * KB,
    sharedMemPerBlockOptin: 163 * KB,
    numSms: 16,
    numSmsExampleGpu: 'Jetson AGX Orin 64GB (16 SMs)',
    maxBlocksPerMultiprocessor: 16,
    sharedMemCarveoutKB: GA100_CARVEOUTS,
    barriersPerBlockSlot: 1,
    globalMemoryLatency: LATENCY.ga10x,
    referencePart: part('Jetson AGX Orin 64GB', 204.8, 16, 1300, 'NVIDIA Jetson AGX Orin module data sheet'),
    sources: ['PG13', 'PG-legacy', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_88',
    family: 'Ampere (8.8, no public part name)',
    major: 8,
    minor: 8,
    maxThreadsPerMultiprocessor: 1536,
    sharedMemPerMultiprocessor: 100 * KB,
    sharedMemPerBlockOptin: 99 * KB,
    numSms: 16,
    numSmsExampleGpu: 'none known (placeholder)',
    maxBlocksPerMultiprocessor: 16,
    sharedMemCarveoutKB: GA10X_CARVEOUTS,
    barriersPerBlockSlot: 1,
    globalMemoryLatency: LATENCY.ga10x,
    referencePart: part(
      'GeForce RTX 3090 (stand-in: no 8.8 part is known)',
      936,
      82,
      1695,
      'stand-in: the sm_86 reference part',
    ),
    sources: ['CCCL', 'HDR'],
    notes: ['UNCERTAIN: 8.8 is not in the Programming Guide tables; nvcc 13.0 targets it and CCCL copies 8.6.'],
  }),
  row({
    name: 'sm_89',
    family: 'Ada Lovelace',
    major: 8,
    minor: 9,
    maxThreadsPerMultiprocessor: 1536,
    sharedMemPerMultiprocessor: 100 * KB,
    sharedMemPerBlockOptin: 99 * KB,
    numSms: 128,
    numSmsExampleGpu: 'GeForce RTX 4090 (128 SMs)',
    maxBlocksPerMultiprocessor: 24,
    sharedMemCarveoutKB: GA10X_CARVEOUTS,
    barriersPerBlockSlot: 1,
    globalMemoryLatency: LATENCY.ga10x,
    referencePart: part('GeForce RTX 4090', 1008, 128, 2520, 'NVIDIA Ada GPU Architecture whitepaper'),
    sources: ['PG13', 'PG-legacy', 'CCCL', 'HDR'],
  }),
  // Hopper: PG13; 228 KB per SM, 227 KB per block opt-in.
  row({
    name: 'sm_90',
    family: 'Hopper',
    major: 9,
    minor: 0,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 228 * KB,
    sharedMemPerBlockOptin: 227 * KB,
    numSms: 132,
    numSmsExampleGpu: 'H100 SXM5 (132 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: HOPPER_CARVEOUTS,
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.hopper,
    referencePart: part('H100 SXM5', 3350, 132, 1980, 'NVIDIA H100 Tensor Core GPU data sheet'),
    sources: ['PG13', 'PG-legacy', 'CCCL', 'HDR'],
    notes: ['sm_90a has the same occupancy limits.'],
  }),
  // Blackwell: PG13, BlackwellTG; 11.0 (Jetson Thor, 10.1 before CUDA 13) and 12.x have 24 blocks and 48 warps per SM.
  row({
    name: 'sm_100',
    family: 'Blackwell (B200/GB200)',
    major: 10,
    minor: 0,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 228 * KB,
    sharedMemPerBlockOptin: 227 * KB,
    numSms: 148,
    numSmsExampleGpu: 'B200 (148 SMs)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: HOPPER_CARVEOUTS,
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.blackwell,
    referencePart: part('B200', 8000, 148, 1965, 'NVIDIA DGX B200 / HGX B200 specifications (boost clock unverified)'),
    sources: ['PG13', 'BlackwellTG', 'PG-legacy', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_103',
    family: 'Blackwell Ultra (B300/GB300)',
    major: 10,
    minor: 3,
    maxThreadsPerMultiprocessor: 2048,
    sharedMemPerMultiprocessor: 228 * KB,
    sharedMemPerBlockOptin: 227 * KB,
    numSms: 148,
    numSmsExampleGpu: 'B300 (148 SMs, unverified)',
    maxBlocksPerMultiprocessor: 32,
    sharedMemCarveoutKB: HOPPER_CARVEOUTS,
    barriersPerBlockSlot: 2,
    globalMemoryLatency: LATENCY.blackwell,
    referencePart: part(
      'B300 (unverified)',
      8000,
      148,
      1965,
      'unverified: HGX B300 bandwidth; SM count and clock assumed equal to B200',
    ),
    sources: ['PG13', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_110',
    family: 'Blackwell (Jetson Thor)',
    major: 11,
    minor: 0,
    maxThreadsPerMultiprocessor: 1536,
    sharedMemPerMultiprocessor: 228 * KB,
    sharedMemPerBlockOptin: 227 * KB,
    numSms: 20,
    numSmsExampleGpu: 'Jetson AGX Thor (20 SMs, unverified)',
    maxBlocksPerMultiprocessor: 24,
    sharedMemCarveoutKB: HOPPER_CARVEOUTS,
    barriersPerBlockSlot: 1,
    globalMemoryLatency: LATENCY.blackwell,
    referencePart: part(
      'Jetson AGX Thor (unverified)',
      273,
      20,
      1575,
      'unverified: Jetson AGX Thor developer kit specifications',
    ),
    sources: ['PG13', 'CCCL', 'HDR'],
  }),
  row({
    name: 'sm_120',
    family: 'Blackwell (GB20x, RTX 50 series / RTX PRO)',
    major: 12,
    minor: 0,
    maxThreadsPerMultiprocessor: 1536,
    sharedMemPerMultiprocessor: 100 * KB,
    sharedMemPerBlockOptin: 99 * KB,
    numSms: 170,
    numSmsExampleGpu: 'GeForce RTX 5090 (170 SMs)',
    maxBlocksPerMultiprocessor: 24,
    sharedMemCarveoutKB: GA10X_CARVEOUTS,
    barriersPerBlockSlot: 1,
    globalMemoryLatency: LATENCY.blackwell,
    referencePart: part('GeForce RTX 5090', 1792, 170, 2407, 'NVIDIA GeForce RTX 5090 specifications'),
    sources: ['PG13', 'BlackwellTG', 'PG-legacy', 'CCCL', 'HDR'],
    notes: [
      'CONFLICT: 24 resident blocks per SM (PG13, CCCL, header) against 32 in the Blackwell Tuning Guide; we follow the header.',
    ],
  }),
  row({
    name: 'sm_121',
    family: 'Blackwell (GB10, DGX Spark)',
    major: 12,
    minor: 1,
    maxThreadsPerMultiprocessor: 1536,
    sharedMemPerMultiprocessor: 100 * KB,
    sharedMemPerBlockOptin: 99 * KB,
    numSms: 48,
    numSmsExampleGpu: 'DGX Spark GB10 (48 SMs, unverified)',
    maxBlocksPerMultiprocessor: 24,
    sharedMemCarveoutKB: GA10X_CARVEOUTS,
    barriersPerBlockSlot: 1,
    globalMemoryLatency: LATENCY.blackwell,
    referencePart: part(
      'DGX Spark GB10 (unverified)',
      273,
      48,
      2500,
      'unverified: DGX Spark specifications (LPDDR5x bandwidth); clock assumed',
    ),
    sources: ['PG13', 'CCCL', 'HDR'],
  }),
]);

/** The row for a compute capability, or undefined. */
export function archByCapability(major: number, minor: number): ArchRow | undefined {
  return ARCHS.find((r) => r.device.computeMajor === major && r.device.computeMinor === minor);
}

/**
 * Reads `sm_90`, `sm_90a`, `sm_100f`, `compute_90`, `90`, `9.0` (case-insensitive,
 * surrounding blanks ignored; the `a`/`f` suffix names an arch-specific target with
 * the limits of its base compute capability). Returns the row, or undefined.
 */
// Asked for every launch and arch of every report: the few names in use are read once.
export const parseArch: (text: string) => ArchRow | undefined = memoByText(
  'architecture names',
  (text: string) => text,
  readArch,
);

function readArch(text: string): ArchRow | undefined {
  const m = /^(?:sm_?|compute_)?(?:(\d+)\.(\d)|(\d{2,3}))[af]?$/.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  if (m[3] !== undefined) {
    const n = Number(m[3]);
    return archByCapability(Math.floor(n / 10), n % 10);
  }
  return archByCapability(Number(m[1]), Number(m[2]));
}

/** `sm_90` */
export function archName(row: ArchRow): string {
  return `sm_${row.device.computeMajor}${row.device.computeMinor}`;
}
