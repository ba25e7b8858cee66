/**
 * The register budget of a launch whose kernel's register count is not known (no nvcc, or before
 * ptxas answers): at its block size and shared memory, for each occupancy level some register
 * count reaches, the most registers per thread that still reach it ("100% needs ≤ 32 registers
 * per thread, 75% ≤ 40, 50% ≤ 64"). No guess of the kernel's own count.
 *
 * Exact: every register count from 1 to the architecture's maximum goes through the occupancy
 * calculation (occupancy.ts, NVIDIA's cuda_occupancy.h step by step), so the answer carries its
 * proof: at each level's register count the level is reached, one register more and it is not.
 */
import { occupancy, type OccupancyQuery } from './occupancy';
import { MAX_REGS_PER_THREAD } from './next-step';

export interface BudgetLevel {
  /** Blocks per SM, and the occupancy they give. */
  activeBlocks: number;
  occupancy: number;
  /** The most registers per thread at which `activeBlocks` blocks fit. */
  maxRegsPerThread: number;
}

/**
 * The levels from the best down, one per distinct block count (0, where nothing fits, is left
 * out: above the last level's registers the launch fails). Empty when the configuration cannot
 * run at any register count, or the query is invalid.
 */
export function registerBudget(
  query: Omit<OccupancyQuery, 'numRegs'>,
  maxRegsPerThread = MAX_REGS_PER_THREAD,
): BudgetLevel[] {
  const levels: BudgetLevel[] = [];
  for (let regs = 1; regs <= maxRegsPerThread; regs++) {
    const outcome = occupancy({ ...query, numRegs: regs });
    if (!outcome.ok) return [];
    const { activeBlocksPerMultiprocessor: blocks, occupancy: fraction } = outcome.value;
    if (blocks === 0) break;
    const last = levels[levels.length - 1];
    if (last && last.activeBlocks === blocks) last.maxRegsPerThread = regs;
    else levels.push({ activeBlocks: blocks, occupancy: fraction, maxRegsPerThread: regs });
  }
  return levels;
}
