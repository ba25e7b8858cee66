/** The words of the latency estimate, shared by the hover, the latency-deficit note and the CLI. */

/** The loads and the work the estimate assumed, as the hover, the note and the CLI word them. */
export interface LoadsAssumed {
  independentOpsPerWarp: number;
  instructionsPerIteration?: number;
  workSource?: 'ptx' | 'source';
  loopLine?: number | null;
  /** The work is a lower bound (an inner loop counted once). */
  atLeast?: boolean;
}

/**
 * "1 load in flight per warp", or with the work between loads known: "8 lines of 128 bytes in
 * flight per warp and 250 instructions per iteration of the loop at line 42, from the PTX".
 */
export function loadsText(a: LoadsAssumed): string {
  const p = a.independentOpsPerWarp;
  const shown = Number.isInteger(p) ? `${p}` : p.toFixed(1);
  const one = p === 1;
  const loads =
    a.workSource === 'ptx'
      ? `${shown} line${one ? '' : 's'} of 128 bytes in flight per warp`
      : `${shown} load${one ? '' : 's'} in flight per warp`;
  const n = a.instructionsPerIteration;
  if (n === undefined) return loads;
  const where =
    a.loopLine !== undefined && a.loopLine !== null
      ? `iteration of the loop at line ${a.loopLine}`
      : 'run of the kernel';
  return `${loads} and ${n}${a.atLeast ? ' or more' : ''} instruction${n === 1 && !a.atLeast ? '' : 's'} per ${where}, ${a.workSource === 'ptx' ? 'from the PTX' : 'estimated from the source'}`;
}

/** What sets the pace with the work known: "keep the schedulers busy (compute-bound" or "keep DRAM busy (bandwidth-bound". */
export function paceText(limit: 'dram' | 'issue' | undefined): string {
  return limit === 'issue' ? 'keep the schedulers busy (compute-bound' : 'keep DRAM busy (bandwidth-bound';
}
