/**
 * Warp divergence: every branch whose condition depends on a thread index,
 * classified as
 * - `divergent`: lanes of one warp can disagree, so the warp runs the paths
 *   one after the other (cost = sum of the paths, ideal = the longest);
 * - `warp-uniform`: thread-dependent but the same in all 32 lanes of each warp
 *   (checked lane by lane for the block sizes the kernel is launched with);
 * - `tail`: a bounds guard on an index that grows with the thread index
 *   (`i < n`, a grid-stride loop): it splits at most the warp that holds the
 *   boundary.
 * Precision comes before recall: a branch is `divergent` only when the
 * enumeration finds a warp whose lanes disagree, or when its condition reads
 * per-lane data (`a[threadIdx.x] > 0`, an atomic's result).
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { Dim3, Kernel, Launch, Span } from '../types';
import { makeSourceText, offsetAt, withinLines, type SourceText } from '../text/source-text';
import { collectConstants, makeLookup } from '../text/constant-table';
import type { Lookup } from '../text/const-eval';
import {
  analyzeThreadDependence,
  findKernelDefinitions,
  lazyFunctions,
  defaultBlockShape,
  spanOfNode,
  uncalledDeviceFunctions,
  type BranchConstruct,
  type BranchSite,
  type FunctionTable,
} from './thread-dependence';
import { estimateCost } from './path-costs';
import { SyntaxViews } from '../syntax/syntax-view';
import { oneLineOfCode } from '../text/one-line';
import { classifySite, formatDim, type Verdict } from './branch-verdicts';
import { reparseSplitBranches } from './preprocessor-reparse';
import { explain, suggest } from './branch-prose';

export { isLeaderBranch } from './branch-prose';

export type BranchKind = 'divergent' | 'warp-uniform' | 'tail';

export interface BranchPath {
  label: string;
  /** Issue slots for one warp to run the path (estimated, or counted in PTX). */
  cost: number;
  /** The source the path covers (empty for an empty else). */
  spans: Span[];
}

/** How a divergent branch splits its warps, as plain data for the hover. */
export interface SplitSummary {
  /** `every warp`, `warp 0 of each block`, `3 of the 8 warps of each block`. */
  warps: string;
  /** Lane counts of the groups in one split warp, largest first (e.g. [16, 16], [31, 1]); null when data-dependent. */
  groups: number[] | null;
  /** When the split happens, for a loop counter: `s < 32 (s = 16, 8, 4, 2, 1)`. */
  when: string | null;
  /** The condition reads per-lane data: lanes disagree when their values do. */
  dataDependent: boolean;
  /** The split changes from one loop step to the next: `laneActivity` is a mean over the steps. */
  variesBySteps: boolean;
}

export interface Branch {
  kernel: string;
  kind: BranchKind;
  construct: BranchConstruct;
  /** The condition as written. */
  condition: string;
  span: Span;
  conditionSpan: Span;
  /** Where the thread dependence came from (`int t = threadIdx.x;`). */
  source: { text: string; span: Span };
  paths: BranchPath[];
  /** Sets of path indices that lanes of one warp can take together (each set runs one after the other). */
  concurrentPaths: number[][];
  /** Issue slots when the lanes disagree: the largest sum over `concurrentPaths`. */
  divergedCost: number;
  /** Issue slots if the lanes agreed: the longest path. */
  idealCost: number;
  /** idealCost / divergedCost (1 when nothing is serialized). */
  efficiency: number;
  /**
   * Issue slots per warp pass that a split warp spends with lanes idle, in whole-warp units: each
   * path's cost times the share of the warp's lanes not on it (`laneActivity`, half and half when the
   * split follows data). What the warning threshold is measured in.
   */
  idleIssueSlots: number;
  /** Issue slots of one pass of the whole kernel (or device function) the branch is in, counted the same way as its paths (loops once). */
  kernelIssueSlots: number;
  /** In a split warp, the mean fraction of lanes on `paths[0]` (the body, the next iteration, the rest after an early exit). */
  laneActivity?: number;
  split?: SplitSummary;
  costSource: 'syntax-estimate' | 'ptx';
  /** Short enough that the compiler will likely predicate it rather than branch. */
  likelyPredicated: boolean;
  /**
   * The compiled code has no branch instruction where this branch is: the compiler predicated it
   * (or turned it into a select), and every warp issues its instructions, split or not. `cost`: the
   * instructions on its lines (null when the listing does not say where instructions come from).
   */
  predicated?: { source: 'ptx' | 'sass'; cost: number | null };
  /** In a `__device__` function no kernel of the file calls (`kernel` is then its name). */
  inDeviceFunction?: boolean;
  /** One or two sentences for the hover. */
  explanation: string;
  suggestion: string | null;
  assumptions: string[];
}

export interface DivergenceOptions {
  /** Constants from included headers and the workspace. */
  lookup?: Lookup;
  /** All constants in view, the file's own included (as the document analysis builds them): used as is, instead of `lookup`. */
  fileLookup?: Lookup;
  /** The file's functions as the walk follows them (lazyFunctions), when the caller has them (analyzeDocument narrows them to the names the text passes saw defined, and its kernel keys read them too). */
  functions?: FunctionTable;
  /** The block shape to assume when no launch of a kernel resolves one (default 256×1×1, or 32×8×1 when threadIdx.y/z is used). */
  defaultBlock?: Dim3;
}

export interface DivergenceInput {
  source: SourceText | string;
  tree: Tree;
  kernels: readonly Kernel[];
  launches: readonly Launch[];
  options?: DivergenceOptions;
}

/** A divergent branch idles lanes for at least this many issue slots per warp before it is a warning. */
export const DEFAULT_DIVERGENCE_COST_THRESHOLD = 4;
/** ... and for at least this share (percent) of its kernel's issue slots. */
export const DEFAULT_DIVERGENCE_MIN_SHARE = 8;

/** The branches of every kernel of a document, and of the `__device__` functions nothing in it calls. */
export function analyzeDivergence(input: DivergenceInput): Branch[] {
  const ctx = prepareDivergence(input);
  return [
    ...divergenceOf(ctx, input.kernels),
    ...uncalledDeviceRoots(ctx).flatMap((root) => deviceFunctionBranches(ctx, root)),
  ];
}

/** What the analysis of any kernel of one document version reads: found once, shared by every call of divergenceOf. */
export interface DivergenceContext {
  source: SourceText;
  tree: Tree;
  lookup: Lookup;
  functions: FunctionTable;
  definitions: ReadonlyMap<Kernel, SyntaxNode>;
  launchesOf: ReadonlyMap<string, Launch[]>;
  defaultBlock?: Dim3;
}

export function prepareDivergence({
  source,
  tree,
  kernels,
  launches,
  options = {},
}: DivergenceInput): DivergenceContext {
  const text = typeof source === 'string' ? makeSourceText(source) : source;
  const lookup = options.fileLookup ?? makeLookup([collectConstants(text)], options.lookup);
  const launchesOf = new Map<string, Launch[]>();
  for (const l of launches) {
    const group = launchesOf.get(l.baseName);
    if (group) group.push(l);
    else launchesOf.set(l.baseName, [l]);
  }
  return {
    source: text,
    tree,
    lookup,
    functions: options.functions ?? lazyFunctions(tree.rootNode),
    definitions: findKernelDefinitions(tree.rootNode, kernels),
    launchesOf,
    defaultBlock: options.defaultBlock,
  };
}

/** The branches of `kernels` (a subset of the prepared ones: analyse a document a batch at a time). */
export function divergenceOf(ctx: DivergenceContext, kernels: readonly Kernel[]): Branch[] {
  const branches: Branch[] = [];
  for (const one of kernels) {
    // A kernel whose braces a preprocessor branch splits is read from a parse that keeps one branch.
    const definition =
      ctx.definitions.get(one) ??
      (one.isDefinition && one.bodySpan
        ? { startIndex: offsetAt(ctx.source, one.span.start), endIndex: offsetAt(ctx.source, one.span.end) }
        : null);
    const reparsed = definition ? reparseSplitBranches(ctx.tree, ctx.source.text, definition) : null;
    try {
      branches.push(...kernelBranches(ctx, one, reparsed));
    } finally {
      reparsed?.delete();
    }
  }
  return branches;
}

/**
 * The branches of the file's `__device__` functions (and device lambdas) that nothing in it calls:
 * helpers of a header without a kernel, members called from other files. Their parameters are
 * unknown, and the block shape is the default one.
 */
export function uncalledDeviceRoots(ctx: DivergenceContext): Array<{ name: string; node: SyntaxNode }> {
  return /\b__device__\b/.test(ctx.source.masked) ? uncalledDeviceFunctions(ctx.tree.rootNode, ctx.source.masked) : [];
}

export function deviceFunctionBranches(ctx: DivergenceContext, root: { name: string; node: SyntaxNode }): Branch[] {
  const body = root.node.childForFieldName('body');
  if (!body) return [];
  const span = spanOfNode(root.node);
  const device: Kernel = {
    name: root.name,
    qualifiedName: root.name,
    namespaces: [],
    templateParams: null,
    parameters: [],
    launchBounds: null,
    maxnreg: null,
    clusterDims: null,
    externC: false,
    isDefinition: true,
    span,
    nameSpan: span,
    headerSpan: span,
    bodySpan: spanOfNode(body),
    sharedDeclarations: [],
    staticSharedBytes: null,
    leadingComment: null,
  };
  const note = `${root.name === 'lambda' ? 'a device lambda' : `\`${root.name}\` is a __device__ function`} that no kernel of this file calls: its parameters are taken as unknown`;
  return kernelBranches(ctx, device, null, new Map([[device, root.node]])).map((b) => ({
    ...b,
    inDeviceFunction: true,
    assumptions: [note, ...b.assumptions],
  }));
}

function kernelBranches(
  ctx: DivergenceContext,
  one: Kernel,
  reparsed: Tree | null,
  roots?: ReadonlyMap<Kernel, SyntaxNode>,
): Branch[] {
  const tree = reparsed ?? ctx.tree;
  const { lookup } = ctx;
  // The reparse holds the definition alone: the functions it calls are the file's.
  const functions = ctx.functions;
  const definitions = roots ?? (reparsed ? findKernelDefinitions(reparsed.rootNode, [one]) : ctx.definitions);
  const kernels = [one];
  const branches: Branch[] = [];
  {
    // The walk and the cost of the paths read the same nodes: through the same views, kept for
    // one kernel (a whole document's views would be kept through many collections).
    const views = new SyntaxViews(tree, reparsed ? ctx.tree : undefined);
    for (const dep of analyzeThreadDependence(tree, [one], { lookup, functions, definitions, views })) {
      const kernel = kernels.find((k) => k.name === dep.kernel)!;
      const shapes = blockShapes(
        kernel,
        ctx.launchesOf.get(kernel.name) ?? [],
        dep.usesMultiDimensionalBlock,
        ctx.defaultBlock,
      );
      const verdicts = new Map<number, Verdict>();
      for (const site of dep.sites)
        verdicts.set(site.node.id * 16 + constructIndex(site.construct), classifySite(site, shapes.shapes));
      const nestedDivergent = (node: SyntaxNode) =>
        [...dep.sites].some(
          (s) =>
            s.node.id === node.id && verdicts.get(s.node.id * 16 + constructIndex(s.construct))?.kind === 'divergent',
        );
      const kernelCost = dep.sites.some(
        (site) => verdicts.get(site.node.id * 16 + constructIndex(site.construct))?.kind === 'divergent',
      )
        ? Math.max(1, estimateCost([dep.body], { functions, lookup, nestedDivergent, views }).cost)
        : 1;
      for (const site of dep.sites) {
        const verdict = verdicts.get(site.node.id * 16 + constructIndex(site.construct))!;
        // At most one lane of a warp gets there (inside `if (lane == 0)`): nothing to split, not listed.
        if (verdict.basis === 'single-lane') continue;
        branches.push(
          makeBranch(site, verdict, shapes, { kernelCost, functions, lookup, nestedDivergent, views }, ctx.source),
        );
      }
    }
  }
  return branches;
}

function constructIndex(c: BranchConstruct): number {
  return ['if', 'else-if', 'ternary', 'switch', 'short-circuit', 'loop', 'return', 'break', 'continue'].indexOf(c);
}

// ---------------------------------------------------------------------------
// Block shapes

interface Shapes {
  shapes: Dim3[];
  known: boolean;
  assumptions: string[];
}

/** CUDA's limit on threads per block, on every architecture since sm_20. */
const MAX_BLOCK_THREADS = 1024;

function blockShapes(kernel: Kernel, launches: readonly Launch[], multiDimensional: boolean, fallback?: Dim3): Shapes {
  const mine = launches.filter((l) => l.baseName === kernel.name && !l.inMacro);
  const known = new Map<string, Dim3>();
  // Lanes are simulated one by one: a block that cannot launch (over 1024 threads, a zero
  // dimension; launch-checks reports it) counts as unresolved, not as 241 million lanes.
  const launchable = (d: Dim3 | null): d is Dim3 =>
    !!d && [d.x, d.y, d.z].every((n) => Number.isInteger(n) && n >= 1) && d.x * d.y * d.z <= MAX_BLOCK_THREADS;
  for (const l of mine) if (launchable(l.block.value)) known.set(formatDim(l.block.value), l.block.value);
  const unresolved = mine.filter((l) => !launchable(l.block.value));
  const assumptions: string[] = [];
  if (known.size > 0) {
    if (unresolved.length > 0)
      assumptions.push(
        `checked for the launches with ${[...known.keys()].join(', ')} threads per block; ${unresolved.length} launch${unresolved.length > 1 ? 'es' : ''} with an unresolved block size (\`${unresolved[0].block.text}\`) not checked`,
      );
    return { shapes: [...known.values()], known: true, assumptions };
  }
  const shape = fallback ?? defaultBlockShape(multiDimensional);
  assumptions.push(
    `no launch of ${kernel.name} with a known block size in view: assumed ${formatDim(shape)} threads per block (blockDim.x a multiple of 32)`,
  );
  return { shapes: [shape], known: false, assumptions };
}

interface CostSetup {
  /** Issue slots of the kernel body's one pass (estimated). */
  kernelCost: number;
  functions: FunctionTable;
  lookup: Lookup;
  nestedDivergent: (node: SyntaxNode) => boolean;
  views: SyntaxViews;
}

const oneLine = oneLineOfCode;

function makeBranch(site: BranchSite, verdict: Verdict, shapes: Shapes, setup: CostSetup, source: SourceText): Branch {
  const spanOf = (node: SyntaxNode) => withinLines(source, spanOfNode(node));
  const estimates = site.paths.map((p) => estimateCost(p.nodes, setup));
  const paths: BranchPath[] = site.paths.map((p, i) => ({
    label: p.label,
    cost: estimates[i].cost,
    spans: p.nodes.map(spanOf),
  }));
  const divergent = verdict.kind === 'divergent';
  let concurrentPaths: number[][];
  if (!divergent) concurrentPaths = paths.map((_, i) => [i]);
  else if (site.construct === 'switch' && verdict.outcomeSets.length > 0 && verdict.basis !== 'data') {
    concurrentPaths = verdict.outcomeSets
      .map((set) => set.map(Number).filter((i) => Number.isInteger(i) && i < paths.length))
      .filter((s) => s.length > 0);
    if (concurrentPaths.length === 0) concurrentPaths = [paths.map((_, i) => i)];
  } else concurrentPaths = [paths.map((_, i) => i)];
  const firstPathIsFalse = site.construct === 'return' || site.construct === 'break' || site.construct === 'continue';
  const laneActivity =
    divergent && verdict.trueFraction !== null
      ? round(firstPathIsFalse ? 1 - verdict.trueFraction : verdict.trueFraction)
      : undefined;
  const notes = [...new Set(estimates.flatMap((e) => e.notes))];
  const predicable = ['if', 'else-if', 'ternary', 'short-circuit'].includes(site.construct);
  const totalStatements = estimates.reduce((s, e) => s + e.statements, 0);
  const likelyPredicated =
    predicable &&
    !estimates.some((e) => e.complex) &&
    totalStatements <= 4 &&
    estimates.reduce((s, e) => s + e.cost, 0) <= 16;
  const assumptions = [
    ...(verdict.dependsOnShape && verdict.basis === 'lanes' ? shapes.assumptions : []),
    ...verdict.notes,
    ...(divergent
      ? [
          'path costs are estimates from the syntax tree (about one instruction per operator, load, store or call)',
          ...notes,
        ]
      : []),
  ];
  const origin = site.condition.origin ?? { text: oneLine(site.conditionNode.text), span: spanOf(site.conditionNode) };
  const branch: Branch = {
    kernel: site.kernel,
    kind: verdict.kind,
    construct: site.construct,
    condition: oneLine(site.conditionNode.text),
    span: spanOf(site.node),
    conditionSpan: spanOf(site.conditionNode),
    source: { text: origin.text, span: withinLines(source, origin.span) },
    paths,
    concurrentPaths,
    divergedCost: 0,
    idealCost: 0,
    efficiency: 1,
    idleIssueSlots: 0,
    kernelIssueSlots: setup.kernelCost,
    ...(laneActivity !== undefined ? { laneActivity } : {}),
    ...(verdict.split
      ? { split: { ...verdict.split, groups: verdict.split.groups && [...verdict.split.groups] } }
      : {}),
    costSource: 'syntax-estimate',
    likelyPredicated,
    explanation: '',
    suggestion: null,
    assumptions: [...new Set(assumptions)],
  };
  return finish(branch, verdict.basis, shapes.known);
}

/** Recompute the totals, the explanation and the suggestion from the paths. */
export function finish(branch: Branch, basis: Verdict['basis'] | null, shapesKnown: boolean): Branch {
  const costs = branch.paths.map((p) => p.cost);
  const idealCost = Math.max(0, ...costs);
  const divergedCost = Math.max(
    idealCost,
    ...branch.concurrentPaths.map((set) => set.reduce((s, i) => s + (costs[i] ?? 0), 0)),
  );
  const efficiency = divergedCost > 0 ? round(idealCost / divergedCost) : 1;
  const b: Branch = {
    ...branch,
    idealCost,
    divergedCost,
    efficiency,
    idleIssueSlots: branch.kind === 'divergent' ? idleSlots(branch, costs) : 0,
  };
  b.explanation = explain(b, basis, shapesKnown);
  b.suggestion = suggest(b);
  return b;
}

/**
 * Issue slots a split warp spends with lanes idle that regrouping the work could give back: each
 * path's cost times the share of lanes not on it. The first path's share is `laneActivity` (the
 * body, the next iteration, the rest after an early exit), half when the split follows data; a
 * switch's cases share a split warp equally. A path that one lane of the warp takes (a leader's
 * store, a serial step) counts nothing: the warp issues it once however many lanes run it (the
 * sum of the paths is their maximum), and no grouping of lanes makes a serial step parallel.
 */
function idleSlots(b: Branch, costs: number[]): number {
  if (b.construct === 'switch') {
    const set = b.concurrentPaths.reduce(
      (a, c) => (c.reduce((s, i) => s + (costs[i] ?? 0), 0) > a.reduce((s, i) => s + (costs[i] ?? 0), 0) ? c : a),
      b.concurrentPaths[0] ?? [],
    );
    return round(set.length > 1 ? set.reduce((s, i) => s + (costs[i] ?? 0) * (1 - 1 / set.length), 0) : 0);
  }
  const first = b.laneActivity ?? 0.5;
  const shares = [first, 1 - first];
  const oneLane = 1.5 / 32;
  return round(costs.reduce((s, c, i) => s + ((shares[i] ?? 0) < oneLane ? 0 : c * (1 - (shares[i] ?? 0))), 0));
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
