/**
 * One document's facts, computed once per version from its text and syntax
 * tree: the kernels, the launches and the kernel each one starts, the
 * findings that need no compiler, each kernel's memory-level parallelism, and
 * the regions the grammar could not parse. Every feature (hover, lens,
 * diagnostics, CLI) reads these.
 */
import type { Tree } from 'web-tree-sitter';
import type { Finding, Kernel, Launch, MemoryParallelism, SmemOptIn, Span } from './types';
import { makeSourceText, type SourceText } from './source-text';
import { findKernels, resolveLaunchBounds } from './kernel-finder';
import { findLaunches, findSmemOptIns } from './launch-finder';
import { collectConstants, makeLookup } from './constant-table';
import type { Lookup } from './const-eval';
import { matchKernel, type WorkspaceIndex } from './workspace-index';
import { checkLaunches, type ArchSmemLimit, type LaunchTarget } from './launch-checks';
import { estimateMemoryParallelism } from './memory-parallelism';
import { analyzeDivergence, type Branch } from './divergence';

export interface DocumentFacts {
  uri: string;
  version: number;
  source: SourceText;
  kernels: Kernel[];
  launches: Launch[];
  /** The kernel each launch starts, in the order of `launches`, with its bounds resolved for that launch. */
  launchTargets: LaunchTarget[];
  /** `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n)` calls in view. */
  smemOptIns: SmemOptIn[];
  /** Launch findings that need no compiler (see launch-checks.ts). */
  findings: Finding[];
  /** One entry per kernel definition, in the order of `kernels` (definitions only); empty without a tree. */
  memoryParallelism: MemoryParallelism[];
  /** Branches on a thread index, classified (see divergence.ts); empty without a tree or when switched off. */
  branches: Branch[];
  /** Regions tree-sitter-cuda marked as ERROR or MISSING (its grammar has gaps). */
  parseErrors: Span[];
}

export interface AnalyzeInput {
  uri: string;
  version: number;
  text: string;
  tree: Tree | null;
  /** Constants from included headers and the rest of the workspace (used after `workspace`'s). */
  workspaceLookup?: Lookup;
  /** The workspace index: kernels and constants of included headers and other files. */
  workspace?: WorkspaceIndex;
  /** The key `workspace` knows this document by (default: `uri`). */
  path?: string;
  /** Target architectures' opt-in shared memory maxima, for `dynamic-smem-over-limit`. */
  archs?: readonly ArchSmemLimit[];
  /** Classify thread-index branches (default true). */
  divergence?: boolean;
}

export function analyzeDocument({ uri, version, text, tree, workspaceLookup, workspace, path, archs, divergence = true }: AnalyzeInput): DocumentFacts {
  const source = makeSourceText(text);
  const key = path ?? uri;
  const view = workspace?.constantView(key);
  const outer: Lookup | undefined = view ? (name) => view.lookup(name) ?? workspaceLookup?.(name) ?? null : workspaceLookup;
  const fileConstants = collectConstants(source);
  const lookup = makeLookup([fileConstants], outer);
  const kernels = findKernels(source, { lookup });
  const launches = findLaunches(source, { fileConstants, fallback: outer, describe: view?.describe });
  const ownOptIns = findSmemOptIns(source, { fileConstants, fallback: outer });
  const smemOptIns = workspace ? [...ownOptIns, ...workspace.includeClosure(key).flatMap((p) => workspace.get(p)?.smemOptIns ?? [])] : ownOptIns;
  const launchTargets = launches.map((launch) => targetOf(launch, kernels, lookup, uri, key, workspace));
  return {
    uri,
    version,
    source,
    kernels,
    launches,
    launchTargets,
    smemOptIns,
    findings: checkLaunches(launches, launchTargets, smemOptIns, archs ?? []),
    memoryParallelism: tree ? kernels.filter((k) => k.isDefinition).map((k) => estimateMemoryParallelism(k, tree, source, { lookup })) : [],
    branches: tree && divergence ? analyzeDivergence({ source, tree, kernels, launches, options: { lookup } }) : [],
    parseErrors: tree ? collectParseErrors(tree) : [],
  };
}

function targetOf(launch: Launch, kernels: readonly Kernel[], lookup: Lookup, uri: string, key: string, workspace?: WorkspaceIndex): LaunchTarget {
  const templateArgs = launch.templateArgs?.map((a, k) => (launch.templateArgValues?.[k] != null ? String(launch.templateArgValues[k]) : a)) ?? null;
  const local = matchKernel(kernels.map((kernel) => ({ kernel, path: key })), launch.kernelName, () => 'this file');
  if (local?.kernel) {
    return { kernel: local.kernel, kernelUri: null, launchBounds: resolveLaunchBounds(local.kernel, { templateArgs, argLookup: lookup, kernelLookup: lookup }), note: local.note };
  }
  if (local) return { kernel: null, kernelUri: null, launchBounds: null, note: local.note };
  if (!workspace) return { kernel: null, kernelUri: null, launchBounds: null, note: `no kernel named \`${launch.kernelName}\` in this file` };
  const match = workspace.findKernel(key, launch.kernelName);
  if (!match.kernel || !match.path) return { kernel: null, kernelUri: null, launchBounds: null, note: match.note };
  const launchBounds = workspace.launchBoundsFor({ kernel: match.kernel, path: match.path }, templateArgs, lookup);
  return { kernel: match.kernel, kernelUri: match.boundsPath === key ? null : match.boundsPath ?? match.path, launchBounds, note: match.note };
}

function collectParseErrors(tree: Tree, limit = 100): Span[] {
  const spans: Span[] = [];
  if (!tree.rootNode.hasError) return spans;
  const cursor = tree.walk();
  let visitedChildren = false;
  for (;;) {
    const node = cursor.currentNode;
    if (!visitedChildren && (node.isError || node.isMissing)) {
      spans.push({
        start: { line: node.startPosition.row, character: node.startPosition.column },
        end: { line: node.endPosition.row, character: node.endPosition.column },
      });
      if (spans.length >= limit) break;
      visitedChildren = true;
    }
    if (!visitedChildren && node.hasError && cursor.gotoFirstChild()) continue;
    if (cursor.gotoNextSibling()) {
      visitedChildren = false;
      continue;
    }
    if (!cursor.gotoParent()) break;
    visitedChildren = true;
  }
  cursor.delete();
  return spans;
}
