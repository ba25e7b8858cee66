/**
 * A grid on a whole GPU: the SMs hold `blocksPerSm × SMs` blocks at once (one wave), so a grid
 * runs in ceil(grid / that) waves, the last one possibly part full, and a grid smaller than the
 * SM count leaves SMs idle. This is the arithmetic behind Nsight Compute's launch statistics
 * ("waves per SM", tail effect), done before the launch instead of after a profile.
 *
 * It assumes every block takes as long as every other and that the block scheduler fills the SMs
 * evenly; blocks of uneven length make the tail longer or shorter.
 */

export interface Waves {
  /** Blocks resident at once on the whole GPU. */
  blocksPerWave: number;
  /** grid / blocksPerWave (e.g. 1.25). */
  waves: number;
  /** Waves the GPU runs: ceil(waves). */
  wavesRun: number;
  /** Blocks in the last wave, and how full it runs (1 when the grid fills whole waves). */
  lastWaveBlocks: number;
  lastWaveFill: number;
  /**
   * The share of the SMs' block slots that stay empty over the whole run: the tail's empty slots
   * over all slots of every wave run. 0 for whole waves.
   */
  idleFraction: number;
  /** SMs with no block at all (the grid is smaller than the SM count), else 0. */
  idleSms: number;
  /** For a grid under one wave: how many SMs run how many blocks (`2` blocks on 12 SMs, `1` on 96). */
  spread: Array<{ blocks: number; sms: number }>;
}

/** Waves of `gridBlocks` blocks at `blocksPerSm` resident blocks per SM on `sms` SMs; null when nothing fits. */
export function wavesOf(gridBlocks: number, blocksPerSm: number, sms: number): Waves | null {
  if (!(gridBlocks >= 1) || !(blocksPerSm >= 1) || !(sms >= 1)) return null;
  const blocksPerWave = blocksPerSm * sms;
  const waves = gridBlocks / blocksPerWave;
  const wavesRun = Math.ceil(waves - 1e-12);
  const lastWaveBlocks = gridBlocks - (wavesRun - 1) * blocksPerWave;
  const lastWaveFill = lastWaveBlocks / blocksPerWave;
  const idleFraction = (blocksPerWave - lastWaveBlocks) / (wavesRun * blocksPerWave);
  // The last wave's blocks spread one per SM first, then a second, and so on.
  const perSm = Math.floor(lastWaveBlocks / sms);
  const extra = lastWaveBlocks - perSm * sms;
  const spread = [
    { blocks: perSm + 1, sms: extra },
    { blocks: perSm, sms: sms - extra },
  ].filter((s) => s.sms > 0 && s.blocks > 0);
  return {
    blocksPerWave,
    waves,
    wavesRun,
    lastWaveBlocks,
    lastWaveFill,
    idleFraction,
    idleSms: Math.max(0, sms - gridBlocks),
    spread,
  };
}

/** The smallest grid at least `gridBlocks` that fills whole waves (a suggestion, not an edit). */
export function wholeWavesGrid(gridBlocks: number, blocksPerSm: number, sms: number): number {
  const perWave = blocksPerSm * sms;
  return Math.max(perWave, Math.ceil(gridBlocks / perWave) * perWave);
}

/**
 * A grid that depends on a run-time size: `ceil(n / perBlock)` blocks (`(n + 255) / 256`,
 * `div_up(n, 256)`). Waves are then n / (perBlock × blocksPerWave): this is the n of one wave.
 */
export function elementsPerWave(perBlock: number, blocksPerSm: number, sms: number): number {
  return perBlock * blocksPerSm * sms;
}

/**
 * Thread block clusters (compute capability 9.0 on): a cluster's blocks run at the same time on
 * the SMs of one GPC, so at most floor(SMs of the GPC × blocks per SM / cluster size) clusters of a
 * GPC are active at once. NVIDIA does not publish how `cudaOccupancyMaxActiveClusters` computes
 * this, nor how each part's SMs are spread over its GPCs (it varies from chip to chip): this
 * estimate assumes the SMs spread as evenly as they can.
 */
export interface ClusterEstimate {
  clusterBlocks: number;
  /** Active clusters on the whole GPU (an estimate; see assumptions). */
  maxActiveClusters: number;
  /** Blocks resident in clusters at once, against the blocks the SMs could hold without clusters. */
  blocksInClusters: number;
  blocksWithoutClusters: number;
  assumptions: string[];
}

/** The largest cluster a launch may ask for without cudaFuncAttributeNonPortableClusterSizeAllowed. */
export const PORTABLE_CLUSTER_BLOCKS = 8;

export function clusterEstimate(
  clusterBlocks: number,
  blocksPerSm: number,
  sms: number,
  gpcs: number,
): ClusterEstimate | null {
  if (!(clusterBlocks >= 1) || !(blocksPerSm >= 1) || !(sms >= 1) || !(gpcs >= 1)) return null;
  const base = Math.floor(sms / gpcs);
  const larger = sms - base * gpcs;
  let maxActiveClusters = 0;
  for (let g = 0; g < gpcs; g++)
    maxActiveClusters += Math.floor(((g < larger ? base + 1 : base) * blocksPerSm) / clusterBlocks);
  const assumptions = [
    `${sms} SMs spread as evenly as they can over ${gpcs} GPCs (${larger > 0 ? `${larger} of ${base + 1} and ${gpcs - larger} of ${base}` : `${base} each`}): NVIDIA publishes no per-part layout`,
    'a cluster runs inside one GPC; the formula of cudaOccupancyMaxActiveClusters is not published',
  ];
  if (clusterBlocks > PORTABLE_CLUSTER_BLOCKS)
    assumptions.push(
      `more than ${PORTABLE_CLUSTER_BLOCKS} blocks per cluster needs cudaFuncAttributeNonPortableClusterSizeAllowed`,
    );
  return {
    clusterBlocks,
    maxActiveClusters,
    blocksInClusters: maxActiveClusters * clusterBlocks,
    blocksWithoutClusters: blocksPerSm * sms,
    assumptions,
  };
}

/** A point of the waves chart: n elements, the grid ceil(n / perBlock), and the share of the SMs' block slots it keeps busy. */
export interface WavesPoint {
  n: number;
  gridBlocks: number;
  waves: number;
  /** 1 − idleFraction: the grid's blocks over the slots of the waves it runs. */
  used: number;
}

/** The waves chart of a grid of ceil(n / perBlock) blocks: what the tail costs as n grows. */
export interface WavesChart {
  part: string;
  variable: string;
  perBlock: number;
  blocksPerSm: number;
  sms: number;
  /** n of one full wave. */
  elementsPerWave: number;
  /** Ascending n, up to `waves` full waves: each wave's start and end, and points between. */
  points: WavesPoint[];
}

/**
 * The sawtooth of the tail effect: from one block to `waves` full waves of n, the share of block
 * slots used jumps down each time the grid spills into a new wave and climbs back as it fills.
 */
export function wavesChart(
  input: { part: string; variable: string; perBlock: number; blocksPerSm: number; sms: number },
  waves = 4,
  perWave = 24,
): WavesChart | null {
  const { perBlock, blocksPerSm, sms } = input;
  if (!(perBlock >= 1) || !(blocksPerSm >= 1) || !(sms >= 1)) return null;
  const blocksPerWave = blocksPerSm * sms;
  const grids = new Set<number>();
  for (let w = 0; w < waves; w++) {
    for (let k = 1; k <= perWave; k++)
      grids.add(Math.max(1, Math.round(w * blocksPerWave + (k * blocksPerWave) / perWave)));
    grids.add(w * blocksPerWave + 1);
  }
  const points = [...grids]
    .sort((a, b) => a - b)
    .map((gridBlocks) => {
      const w = wavesOf(gridBlocks, blocksPerSm, sms)!;
      return { n: gridBlocks * perBlock, gridBlocks, waves: w.waves, used: 1 - w.idleFraction };
    });
  return { ...input, elementsPerWave: elementsPerWave(perBlock, blocksPerSm, sms), points };
}
