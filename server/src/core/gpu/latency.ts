/**
 * Latency hiding by Little's law: to keep a pipe of latency L busy at a rate of r
 * requests per cycle, L x r requests must be in flight; if each warp keeps p independent
 * memory operations in flight before it stalls, the SM needs
 *
 *     W_needed = ceil(L x r / p)
 *
 * resident warps. We read it two ways, because neither alone is right for every kernel:
 *
 * - issue-bound: r = schedulers x issue width (4 x 1 warp-instructions per cycle). The
 *   latency of a dependent load must be covered by other warps' instructions so every
 *   scheduler issues every cycle. With L = 400 this asks for 1,600 warps, far more than
 *   any SM holds: a kernel whose every instruction waits on memory cannot hide it by
 *   occupancy, only by ILP or fewer memory instructions. Read it as an upper bound.
 * - bandwidth-bound: r = the SM's share of DRAM bandwidth per cycle, in warp-wide
 *   128-byte requests = bandwidth / (numSMs x clock x 128), from a named reference part.
 *   L x r is then how many 128-byte requests must be in flight per SM to saturate DRAM;
 *   this decides whether a memory-bound kernel can reach peak bandwidth.
 *
 * Limits of the model: L is a published microbenchmark figure for the family (unloaded
 * latency; under load it grows), r is a peak, p is an estimate (1 unless the source
 * analysis finds more memory-level or instruction-level parallelism), caches are ignored
 * (hits shorten L), and one warp request is taken as one 128-byte line (wider or
 * scattered accesses need more). Occupancy is only one way to hide latency: Volkov,
 * "Better performance at lower occupancy" (GTC 2010) and "Understanding Latency Hiding
 * on GPUs" (PhD thesis, UC Berkeley 2016) show ILP doing the same job with fewer warps.
 * Once the gap is covered, more warps only cost registers and shared memory.
 */

import type { ArchRow } from './arch-table';

/** Bytes one warp-wide, fully coalesced request moves (32 threads x 4 bytes). */
export const WARP_REQUEST_BYTES = 128;
/** Warp instructions each scheduler can issue per cycle. */
export const ISSUE_WIDTH = 1;

export interface LatencyInput {
  arch: ArchRow;
  /** Resident warps per SM (the occupancy calculator's activeWarps). */
  warpsResident: number;
  /** p: independent memory operations each warp keeps in flight; default 1. */
  independentOpsPerWarp?: number;
  /** Overrides the family's default global-memory latency (cycles). */
  latencyCycles?: number;
}

export interface LatencyAssumptions {
  latencyCycles: number;
  rate: number;
  independentOpsPerWarp: number;
  referencePart?: string;
  latencySource: string;
}

export interface LatencyReading {
  warpsNeeded: number;
  warpsResident: number;
  deficitWarps: number;
  /** min(1, resident / needed): how much of the latency the resident warps cover. */
  coveredFraction: number;
  assumptions: LatencyAssumptions;
}

export interface LatencyEstimate {
  issueBound: LatencyReading;
  bandwidthBound: LatencyReading;
}

/** The SM's share of the reference part's DRAM bandwidth, in 128-byte warp requests per cycle. */
export function dramRequestsPerCyclePerSm(arch: ArchRow): number {
  const p = arch.referencePart;
  return (p.dramBandwidthGBs * 1e9) / (p.numSms * p.boostClockMHz * 1e6 * WARP_REQUEST_BYTES);
}

function reading(
  latencyCycles: number,
  rate: number,
  p: number,
  warpsResident: number,
  latencySource: string,
  referencePart?: string,
): LatencyReading {
  // The 1e-9 keeps float noise (40.000000001) from adding a warp.
  const warpsNeeded = Math.max(0, Math.ceil((latencyCycles * rate) / p - 1e-9));
  const assumptions: LatencyAssumptions = { latencyCycles, rate, independentOpsPerWarp: p, latencySource };
  if (referencePart !== undefined) assumptions.referencePart = referencePart;
  return {
    warpsNeeded,
    warpsResident,
    deficitWarps: Math.max(0, warpsNeeded - warpsResident),
    coveredFraction: warpsNeeded === 0 ? 1 : Math.min(1, warpsResident / warpsNeeded),
    assumptions,
  };
}

/** Warps needed to hide global-memory latency, read issue-bound and bandwidth-bound. */
export function latencyHiding(input: LatencyInput): LatencyEstimate {
  const p = input.independentOpsPerWarp ?? 1;
  if (!(p > 0) || !Number.isFinite(p))
    throw new RangeError(`independent operations per warp must be positive, got ${p}`);
  if (!(input.warpsResident >= 0)) throw new RangeError(`resident warps must be 0 or more, got ${input.warpsResident}`);
  const override = input.latencyCycles;
  if (override !== undefined && !(override > 0 && Number.isFinite(override)))
    throw new RangeError(`latency must be positive, got ${override}`);
  const latencyCycles = override ?? input.arch.globalMemoryLatency.cycles;
  const latencySource = override !== undefined ? 'override' : input.arch.globalMemoryLatency.source;
  const issueRate = input.arch.schedulersPerMultiprocessor * ISSUE_WIDTH;
  return {
    issueBound: reading(latencyCycles, issueRate, p, input.warpsResident, latencySource),
    bandwidthBound: reading(
      latencyCycles,
      dramRequestsPerCyclePerSm(input.arch),
      p,
      input.warpsResident,
      latencySource,
      input.arch.referencePart.name,
    ),
  };
}

/** The bandwidth-bound reading on a named part, at its low and its high published latency. */
export interface PartLatencyRange {
  part: string;
  /** Warps needed at the low and the high latency (equal with one published figure). */
  warpsNeeded: { low: number; high: number };
  warpsResident: number;
  latencyCycles: { low: number; high: number };
  /** The part's share of DRAM bandwidth per SM, in 128-byte warp requests per cycle. */
  rate: number;
  independentOpsPerWarp: number;
  /** Where the latencies come from. */
  latencyNote: string;
}

/**
 * Little's law on a named part: W = ceil(L × r / p) with r from the part's own bandwidth, SMs and
 * boost clock, at the low and the high published latency. Null when the part lacks a figure it
 * needs (its clock, its bandwidth, or a published latency: null beats wrong).
 */
export function partLatencyRange(
  part: {
    name: string;
    sms: number;
    boostClockMHz: number | null;
    dramBandwidthGBs: number | null;
    latency: { lowCycles: number; highCycles: number; note: string } | null;
  },
  warpsResident: number,
  independentOpsPerWarp = 1,
): PartLatencyRange | null {
  if (part.boostClockMHz === null || part.dramBandwidthGBs === null || part.latency === null) return null;
  const p = independentOpsPerWarp > 0 ? independentOpsPerWarp : 1;
  const rate = (part.dramBandwidthGBs * 1e9) / (part.sms * part.boostClockMHz * 1e6 * WARP_REQUEST_BYTES);
  const needed = (l: number) => Math.max(0, Math.ceil((l * rate) / p - 1e-9));
  return {
    part: part.name,
    warpsNeeded: { low: needed(part.latency.lowCycles), high: needed(part.latency.highCycles) },
    warpsResident,
    latencyCycles: { low: part.latency.lowCycles, high: part.latency.highCycles },
    rate,
    independentOpsPerWarp: p,
    latencyNote: part.latency.note,
  };
}
