/**
 * One document's facts: the kernels, the launches and the kernel each one starts, the findings
 * that need no compiler, each kernel's memory-level parallelism, the branches on a thread index,
 * and the regions the grammar could not parse. Every feature (hover, lens, diagnostics, CLI)
 * reads these. core/incremental/document-analysis.ts computes them, reusing what an edit did not
 * touch; the functions here compute one part each, from scratch.
 */
import type { Kernel, Launch, MemoryParallelism, SmemOptIn, Span } from '../types';
import type { SourceText } from '../text/source-text';
import type { ConstantTable } from '../text/constant-table';
import type { Lookup } from '../text/const-eval';
import { resolveLaunchBounds } from './kernel-finder';
import { matchKernel, type WorkspaceIndex } from './workspace-index';
import type { LaunchTarget } from './launch-checks';
import type { Finding } from '../types';
import type { Branch } from '../body/divergence';
import type { MemoryRecord } from '../body/memory-rules';
import type { WrapperDefinition } from './launch-wrappers';

export interface DocumentFacts {
  uri: string;
  version: number;
  source: SourceText;
  /** The file's named constants (what the workspace index keeps of it, with the kernels and opt-ins). */
  constants: ConstantTable;
  kernels: Kernel[];
  launches: Launch[];
  /** The kernel each launch starts, in the order of `launches`, with its bounds resolved for that launch. */
  launchTargets: LaunchTarget[];
  /** `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n)` calls in this file (the checks also see its includes'). */
  smemOptIns: SmemOptIn[];
  /** The launch wrappers this file's functions are (the workspace index keeps them for the files that call them). */
  wrappers: WrapperDefinition[];
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

/**
 * What a launch starts: a kernel of this file (`kernels`: those whose name ends like the launched
 * one; matchKernel looks no further), else one the workspace index finds, with its launch bounds
 * resolved for the launch's template arguments.
 */
export function launchTarget(
  launch: Launch,
  kernels: readonly Kernel[],
  lookup: Lookup,
  key: string,
  workspace?: WorkspaceIndex,
): LaunchTarget {
  const templateArgs =
    launch.templateArgs?.map((a, k) =>
      launch.templateArgValues?.[k] != null ? String(launch.templateArgValues[k]) : a,
    ) ?? null;
  const local = matchKernel(
    kernels.map((kernel) => ({ kernel, path: key })),
    launch.kernelName,
    () => 'this file',
  );
  if (local?.kernel) {
    // Declared here, defined elsewhere: the figures are the definition's.
    const definition =
      !local.kernel.isDefinition && workspace
        ? workspace.findKernel(key, launch.kernelName, { skipOwnEntry: true })
        : null;
    const kernelPath =
      definition?.kernel?.isDefinition &&
      definition.path &&
      definition.kernel.qualifiedName === local.kernel.qualifiedName
        ? definition.path
        : key;
    return {
      kernel: local.kernel,
      kernelUri: null,
      launchBounds: resolveLaunchBounds(local.kernel, { templateArgs, argLookup: lookup, kernelLookup: lookup }),
      note: local.note,
      kernelPath,
    };
  }
  if (local) return { kernel: null, kernelUri: null, launchBounds: null, note: local.note };
  if (!workspace)
    return {
      kernel: null,
      kernelUri: null,
      launchBounds: null,
      note: `no kernel named \`${launch.kernelName}\` in this file`,
    };
  const match = workspace.findKernel(key, launch.kernelName, { skipOwnEntry: true });
  if (!match.kernel || !match.path) return { kernel: null, kernelUri: null, launchBounds: null, note: match.note };
  const launchBounds = workspace.launchBoundsFor({ kernel: match.kernel, path: match.path }, templateArgs, lookup);
  return {
    kernel: match.kernel,
    kernelUri: match.boundsPath === key ? null : (match.boundsPath ?? match.path),
    launchBounds,
    note: match.note,
    kernelPath: match.path,
  };
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
