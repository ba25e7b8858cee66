/**
 * One document's facts: the kernels, the launches and the kernel each one starts, the findings
 * that need no compiler, each kernel's memory-level parallelism, the branches on a thread index,
 * and the regions the grammar could not parse. Every feature (hover, lens, diagnostics, CLI)
 * reads these. core/incremental/document-analysis.ts computes them, reusing what an edit did not
 * touch; the functions here compute one part each, from scratch.
 */
import type { Kernel, Launch, MemoryParallelism, SmemOptIn, Span } from '../types';
import type { SourceText } from '../text/source-text';
import type { LaunchTarget } from './launch-checks';
import type { Finding } from '../types';
import type { Branch } from '../body/divergence';
import type { MemoryRecord } from '../body/memory-rules';

export interface DocumentFacts {
  uri: string;
  version: number;
  source: SourceText;
  kernels: Kernel[];
  launches: Launch[];
  /** The kernel each launch starts, in the order of `launches`, with its bounds resolved for that launch. */
  launchTargets: LaunchTarget[];
  /** `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n)` calls in this file (the checks also see its includes'). */
  smemOptIns: SmemOptIn[];
  /** Launch findings that need no compiler (see launch-checks.ts). */
  findings: Finding[];
  /** One entry per kernel definition, in the order of `kernels` (definitions only); empty without a tree. */
  memoryParallelism: MemoryParallelism[];
  /** Branches on a thread index, classified (see divergence.ts); empty without a tree or when switched off. */
  branches: Branch[];
  /** Barriers reached by part of a block, uncoalesced global accesses, bank conflicts (see memory-rules.ts); empty where branches are. */
  memory: MemoryRecord[];
  /**
   * Kernel definitions whose body passes have not run yet (an editor's time budget ran out): their
   * memory parallelism and branches are missing from this version's facts until a next call completes them.
   */
  pendingKernels: number;
  /** Regions tree-sitter-cuda marked as ERROR or MISSING (its grammar has gaps). */
  parseErrors: Span[];
}

export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
