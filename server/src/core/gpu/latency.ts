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
 * With the work between loads known (n instructions per iteration of the kernel's loop, its p
 * lines in flight per wait: ptx-load-work.ts, or the source estimate), both readings become one:
 * a warp spends at least L + n cycles per iteration and issues n instructions and p lines in it,
 * and the SM can take at most r lines (DRAM) and S instructions (issue) per cycle, so
 *
 *     W_needed = ceil(min(r, S x p / n) x (L + n) / p)
 *
 * which is L x r / p for a kernel that only loads (n small: DRAM sets the pace) and S x (L + n) / n
 * for one that does much work per load (a register-tiled GEMM: the schedulers set the pace, and
 * a few warps fill the gap: "no gap at all" in the seeds' words).
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
  /** n: instructions a warp issues per iteration of the loop its loads are in (loads included), when known. */
  work?: LatencyWork | null;
}

/** The work between loads: instructions per iteration, and whether that is only a lower bound (an inner loop counted once). */
export interface LatencyWork {
  instructions: number;
  atLeast: boolean;
  /** Where it was read: the PTX, or estimated from the source. */
  source: 'ptx' | 'source';
  /** The loop measured (1-based source line, when known), or null: the kernel runs straight through. */
  loop: { line: number | null } | null;
}

export interface LatencyAssumptions {
  latencyCycles: number;
  rate: number;
  independentOpsPerWarp: number;
  referencePart?: string;
  latencySource: string;
  /** n, instructions per iteration, when the work between loads is known. */
  instructionsPerIteration?: number;
  /** What sets the pace with that work: DRAM's bandwidth, or the schedulers' issue rate. */
  limit?: 'dram' | 'issue';
  workSource?: 'ptx' | 'source';
  /** The loop measured (its first source line), or null for a kernel without one. */
  loopLine?: number | null;
}

export interface LatencyReading {
  warpsNeeded: number;
  /** The work is a lower bound (an inner loop counted once), so `warpsNeeded` is at most this: no shortfall is claimed. */
  upperBound?: boolean;
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

/** Warps needed with the work known: min(r, S × p / n) × (L + n) / p, rounded up (see the top of the file). */
export function warpsNeededWithWork(
  latencyCycles: number,
  rate: number,
  issueRate: number,
  p: number,
  n: number,
): { warpsNeeded: number; limit: 'dram' | 'issue' } {
  const issueLines = (issueRate * p) / n;
  const limit = rate <= issueLines ? 'dram' : 'issue';
  const pace = Math.min(rate, issueLines);
  return { warpsNeeded: Math.max(0, Math.ceil((pace * (latencyCycles + n)) / p - 1e-9)), limit };
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
  const rate = dramRequestsPerCyclePerSm(input.arch);
  const bandwidthBound = reading(
    latencyCycles,
    rate,
    p,
    input.warpsResident,
    latencySource,
    input.arch.referencePart.name,
  );
  const work = input.work;
  if (work && work.instructions > 0) {
    const { warpsNeeded, limit } = warpsNeededWithWork(latencyCycles, rate, issueRate, p, work.instructions);
    bandwidthBound.warpsNeeded = warpsNeeded;
    bandwidthBound.deficitWarps = work.atLeast ? 0 : Math.max(0, warpsNeeded - input.warpsResident);
    bandwidthBound.coveredFraction = warpsNeeded === 0 ? 1 : Math.min(1, input.warpsResident / warpsNeeded);
    if (work.atLeast) bandwidthBound.upperBound = true;
    Object.assign(bandwidthBound.assumptions, {
      instructionsPerIteration: work.instructions,
      limit,
      workSource: work.source,
      loopLine: work.loop ? work.loop.line : null,
    });
  }
  return {
    issueBound: reading(latencyCycles, issueRate, p, input.warpsResident, latencySource),
    bandwidthBound,
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
  /** With the work between loads known: n, what sets the pace, and whether n is only a lower bound (warpsNeeded then at most). */
  instructionsPerIteration?: number;
  limit?: 'dram' | 'issue';
  atLeast?: boolean;
  workSource?: 'ptx' | 'source';
  loopLine?: number | null;
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
  work: LatencyWork | null = null,
  /** Warp instructions the part's SM issues per cycle (its schedulers). */
  issueRate = 4,
): PartLatencyRange | null {
  if (part.boostClockMHz === null || part.dramBandwidthGBs === null || part.latency === null) return null;
  const p = independentOpsPerWarp > 0 ? independentOpsPerWarp : 1;
  const rate = (part.dramBandwidthGBs * 1e9) / (part.sms * part.boostClockMHz * 1e6 * WARP_REQUEST_BYTES);
  const n = work && work.instructions > 0 ? work.instructions : null;
  const needed = (l: number) =>
    n !== null
      ? warpsNeededWithWork(l, rate, issueRate, p, n).warpsNeeded
      : Math.max(0, Math.ceil((l * rate) / p - 1e-9));
  const range: PartLatencyRange = {
    part: part.name,
    warpsNeeded: { low: needed(part.latency.lowCycles), high: needed(part.latency.highCycles) },
    warpsResident,
    latencyCycles: { low: part.latency.lowCycles, high: part.latency.highCycles },
    rate,
    independentOpsPerWarp: p,
    latencyNote: part.latency.note,
  };
  if (n !== null && work)
    Object.assign(range, {
      instructionsPerIteration: n,
      limit: warpsNeededWithWork(part.latency.highCycles, rate, issueRate, p, n).limit,
      atLeast: work.atLeast,
      workSource: work.source,
      loopLine: work.loop ? work.loop.line : null,
    });
  return range;
}
