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
import type { Dim3, Finding, Kernel, Launch, Span } from '../types';
import { makeSourceText, withinLines, type SourceText } from '../text/source-text';
import { collectConstants, makeLookup } from '../text/constant-table';
import type { Lookup } from '../text/const-eval';
import {
  analyzeThreadDependence,
  findKernelDefinitions,
  lazyFunctions,
  defaultBlockShape,
  blockEvaluator,
  freeSamples,
  isAffineIndex,
  isThreadDependent,
  simulateLoopCounter,
  LANE_UNKNOWN,
  INVALID,
  spanOfNode,
  structuralKey,
  symFacts,
  threadValue,
  type BranchConstruct,
  type BranchSite,
  type FunctionTable,
  type BlockSample,
  type Column,
  type EvalPoint,
  type Sym,
  type SymFacts,
} from './thread-dependence';
import { estimateCost } from './path-costs';
import { SyntaxViews } from '../syntax/syntax-view';
import { countInstructionsInSpans, fileIdsFor, parsePtx, ptxEntriesFor, type PtxModule } from '../compiler/ptx-line-costs';
import { oneLineOfCode } from '../text/one-line';

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
  /** In a split warp, the mean fraction of lanes on `paths[0]` (the body, the next iteration, the rest after an early exit). */
  laneActivity?: number;
  split?: SplitSummary;
  costSource: 'syntax-estimate' | 'ptx';
  /** Short enough that the compiler will likely predicate it rather than branch. */
  likelyPredicated: boolean;
  /** One or two sentences for the hover. */
  explanation: string;
  suggestion: string | null;
  assumptions: string[];
}

export interface DivergenceOptions {
  /** Constants from included headers and the workspace. */
  lookup?: Lookup;
  /** All constants in view, the file's own included (as analyzeDocument builds them): used as is, instead of `lookup`. */
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

/** A divergent branch costs at least this many issue slots before it is a warning. */
export const DEFAULT_DIVERGENCE_COST_THRESHOLD = 4;

export function analyzeDivergence(input: DivergenceInput): Branch[] {
  return divergenceOf(prepareDivergence(input), input.kernels);
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

export function prepareDivergence({ source, tree, kernels, launches, options = {} }: DivergenceInput): DivergenceContext {
  const text = typeof source === 'string' ? makeSourceText(source) : source;
  const lookup = options.fileLookup ?? makeLookup([collectConstants(text)], options.lookup);
  const launchesOf = new Map<string, Launch[]>();
  for (const l of launches) {
    const group = launchesOf.get(l.baseName);
    if (group) group.push(l);
    else launchesOf.set(l.baseName, [l]);
  }
  return { source: text, tree, lookup, functions: options.functions ?? lazyFunctions(tree.rootNode), definitions: findKernelDefinitions(tree.rootNode, kernels), launchesOf, defaultBlock: options.defaultBlock };
}

/** The branches of `kernels` (a subset of the prepared ones: analyse a document a batch at a time). */
export function divergenceOf(ctx: DivergenceContext, kernels: readonly Kernel[]): Branch[] {
  const { tree, lookup, functions } = ctx;
  const branches: Branch[] = [];
  for (const one of kernels) {
    // The walk and the cost of the paths read the same nodes: through the same views, kept for
    // one kernel (a whole document's views would be kept through many collections).
    const views = new SyntaxViews(tree);
    for (const dep of analyzeThreadDependence(tree, [one], { lookup, functions, definitions: ctx.definitions, views })) {
      const kernel = kernels.find((k) => k.name === dep.kernel)!;
      const shapes = blockShapes(kernel, ctx.launchesOf.get(kernel.name) ?? [], dep.usesMultiDimensionalBlock, ctx.defaultBlock);
      const verdicts = new Map<number, Verdict>();
      for (const site of dep.sites) verdicts.set(site.node.id * 16 + constructIndex(site.construct), classifySite(site, shapes.shapes));
      const nestedDivergent = (node: SyntaxNode) => [...dep.sites].some((s) => s.node.id === node.id && verdicts.get(s.node.id * 16 + constructIndex(s.construct))?.kind === 'divergent');
      for (const site of dep.sites) {
        const verdict = verdicts.get(site.node.id * 16 + constructIndex(site.construct))!;
        branches.push(makeBranch(site, verdict, shapes, { functions, lookup, nestedDivergent, views }, ctx.source));
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

function formatDim(d: Dim3): string {
  return d.z > 1 ? `${d.x}×${d.y}×${d.z}` : d.y > 1 ? `${d.x}×${d.y}` : `${d.x}`;
}

/** CUDA's limit on threads per block, on every architecture since sm_20. */
const MAX_BLOCK_THREADS = 1024;

function blockShapes(kernel: Kernel, launches: readonly Launch[], multiDimensional: boolean, fallback?: Dim3): Shapes {
  const mine = launches.filter((l) => l.baseName === kernel.name && !l.inMacro);
  const known = new Map<string, Dim3>();
  // Lanes are simulated one by one: a block that cannot launch (over 1024 threads, a zero
  // dimension; launch-checks reports it) counts as unresolved, not as 241 million lanes.
  const launchable = (d: Dim3 | null): d is Dim3 => !!d && [d.x, d.y, d.z].every((n) => Number.isInteger(n) && n >= 1) && d.x * d.y * d.z <= MAX_BLOCK_THREADS;
  for (const l of mine) if (launchable(l.block.value)) known.set(formatDim(l.block.value), l.block.value);
  const unresolved = mine.filter((l) => !launchable(l.block.value));
  const assumptions: string[] = [];
  if (known.size > 0) {
    if (unresolved.length > 0) assumptions.push(`checked for the launches with ${[...known.keys()].join(', ')} threads per block; ${unresolved.length} launch${unresolved.length > 1 ? 'es' : ''} with an unresolved block size (\`${unresolved[0].block.text}\`) not checked`);
    return { shapes: [...known.values()], known: true, assumptions };
  }
  const shape = fallback ?? defaultBlockShape(multiDimensional);
  assumptions.push(`no launch of ${kernel.name} with a known block size in view: assumed ${formatDim(shape)} threads per block (blockDim.x a multiple of 32)`);
  return { shapes: [shape], known: false, assumptions };
}

// ---------------------------------------------------------------------------
// Classification

interface Verdict {
  kind: BranchKind;
  /** How the verdict was reached. */
  basis: 'lanes' | 'data' | 'grid-tail' | 'block-tail';
  split: SplitSummary | null;
  /** Mean fraction of a split warp's lanes for which the condition holds. */
  trueFraction: number | null;
  /** Sets of outcomes seen together in one warp (switch: case indices; others: '0'/'1'). */
  outcomeSets: string[][];
  /** Loop counters whose values were simulated or sampled, and unknowns sampled. */
  notes: string[];
  dependsOnShape: boolean;
}

/**
 * Verdicts by what decides them: the condition's structure, the block shapes
 * and, for a switch, its cases. The same conditions recur from kernel to
 * kernel (`tid == 0`, `i < n`) and from one analysis of a document to the
 * next, and each costs an enumeration of every lane for many samples.
 * A verdict is shared by the sites that ask for it: nothing changes one, and
 * a branch takes a copy of the part it keeps (`split`, in makeBranch).
 */
const verdictCache = new Map<string, Verdict>();
const VERDICT_CACHE_SIZE = 2000;

function classifySite(site: BranchSite, shapes: Dim3[]): Verdict {
  const cases = site.construct === 'switch' ? site.paths.map((p) => (p.caseValues === null ? 'default' : `[${p.caseValues?.map(String).join(',') ?? '-'}]`)).join(';') : '';
  const key = `${cases}|${shapes.map((d) => `${d.x}x${d.y}x${d.z}`).join(',')}|${structuralKey(site.condition.sym)}`;
  const cached = verdictCache.get(key);
  if (cached) {
    verdictCache.delete(key);
    verdictCache.set(key, cached);
    return cached;
  }
  const verdict = computeVerdict(site, shapes);
  if (verdictCache.size >= VERDICT_CACHE_SIZE) verdictCache.delete(verdictCache.keys().next().value!);
  verdictCache.set(key, verdict);
  return verdict;
}

function computeVerdict(site: BranchSite, shapes: Dim3[]): Verdict {
  if (site.construct === 'switch') {
    const caseOf = (v: number) => {
      const i = site.paths.findIndex((p) => p.caseValues?.includes(v));
      if (i >= 0) return String(i);
      const d = site.paths.findIndex((p) => p.caseValues === null);
      return d >= 0 ? String(d) : `v${v}`;
    };
    return classifyEnumerated(site.condition.sym, shapes, caseOf);
  }
  return classifyCondition(site.condition.sym, shapes);
}

const RELATIONAL = new Set(['<', '<=', '>', '>=']);
const EQUALITY = new Set(['==', '!=']);
const truthy = (v: number) => (v !== 0 ? '1' : '0');
const RANK: Record<BranchKind, number> = { 'warp-uniform': 0, tail: 1, divergent: 2 };

function classifyCondition(sym: Sym, shapes: Dim3[]): Verdict {
  if (sym.op === 'binary' && (sym.operator === '&&' || sym.operator === '||')) {
    const parts = [sym.left, sym.right].filter(isThreadDependent).map((s) => classifyCondition(s, shapes));
    const worst = parts.reduce((a, b) => (RANK[b.kind] > RANK[a.kind] ? b : a));
    if (worst.kind !== 'divergent') return worst;
    const whole = classifyEnumerated(sym, shapes, truthy);
    return whole.kind === 'divergent' ? whole : worst;
  }
  if (sym.op === 'unary' && sym.operator === '!') return classifyCondition(sym.arg, shapes);
  if (sym.op === 'binary' && (RELATIONAL.has(sym.operator) || EQUALITY.has(sym.operator))) {
    const leftDep = isThreadDependent(sym.left);
    const rightDep = isThreadDependent(sym.right);
    const thread: Sym = leftDep && rightDep ? { op: 'binary', operator: '-', left: sym.left, right: sym.right } : leftDep ? sym.left : sym.right;
    const bound: Sym = leftDep && rightDep ? { op: 'const', value: 0 } : leftDep ? sym.right : sym.left;
    const global = symFacts(thread).blockIdx;
    // An index that is the same across each warp compares the same way against any uniform bound.
    if (!isThreadDependent(bound) && sameInEveryWarp(thread, shapes)) return classifyEnumerated(sym, shapes, truthy);
    if (global) {
      const tail = tailGuard(thread, bound, sym.operator, shapes);
      if (tail) return tail;
    }
    const enumerated = classifyEnumerated(sym, shapes, truthy);
    if (enumerated.kind !== 'divergent' || enumerated.basis === 'data') return enumerated;
    return tailGuard(thread, bound, sym.operator, shapes) ?? enumerated;
  }
  return classifyEnumerated(sym, shapes, truthy);
}

/**
 * `index < bound` where `index` grows with the thread index and `bound` is a
 * value the source does not fix (a parameter): a bounds guard, which splits at
 * most the warp that holds the boundary. A bound that moves with a loop
 * (`tid < s` in a reduction) sweeps across the warps and is not a guard.
 */
function tailGuard(thread: Sym, bound: Sym, operator: string, shapes: Dim3[]): Verdict | null {
  if (isThreadDependent(bound) || !isAffineIndex(thread)) return null;
  const boundFacts = symFacts(bound);
  if (boundFacts.frees.some((f) => f.loop?.role === 'counter')) return null;
  const facts = symFacts(thread);
  const global = facts.blockIdx;
  if (!global && !RELATIONAL.has(operator)) return null;
  if (!global && boundFacts.frees.length === 0) return null;
  for (const shape of shapes) {
    const size = shape.x * shape.y * shape.z;
    const base = basePoint(shape, { x: 0, y: 0, z: 0 });
    const sampleSets = facts.frees.map((f) => freeSamples(f, base).slice(0, 2));
    const evaluate = blockEvaluator(thread, shape);
    for (let s = 0; s < Math.max(1, ...sampleSets.map((x) => x.length)); s++) {
      const bindings = new Map(facts.frees.map((f, i) => [f.id, sampleSets[i][Math.min(s, sampleSets[i].length - 1)] ?? 0] as [number, number]));
      const values: number[] = [];
      const column = evaluate({ ...base, bindings, warpKey: () => base.warpKey });
      for (let l = 0; l < size; l++) {
        const v = threadValue(column, l);
        if (typeof v !== 'number') return null;
        values.push(v);
      }
      const ranges = global ? chunks(values, 32) : [values];
      if (!ranges.every(monotone)) return null;
    }
  }
  return { kind: 'tail', basis: global ? 'grid-tail' : 'block-tail', split: null, trueFraction: null, outcomeSets: [], notes: [], dependsOnShape: false };
}

function chunks<T>(values: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += n) out.push(values.slice(i, i + n));
  return out;
}

function monotone(values: number[]): boolean {
  let up = true;
  let down = true;
  for (let i = 1; i < values.length; i++) {
    if (values[i] < values[i - 1]) up = false;
    if (values[i] > values[i - 1]) down = false;
  }
  return up || down;
}

const GRID_DIM: Readonly<Dim3> = Object.freeze({ x: 8, y: 8, z: 1 });

function basePoint(shape: Dim3, blockIdx: Dim3): Omit<EvalPoint, 'bindings'> {
  return { threadIdx: { x: 0, y: 0, z: 0 }, blockIdx, blockDim: shape, gridDim: GRID_DIM, warpKey: 0 };
}

interface ComboResult {
  values: Map<string, number>;
  splitWarps: number[];
  totalWarps: number;
  groups: number[] | null;
}

/** Evaluate the condition for every lane of every warp, for each block shape and each sample of the unknowns it reads. */
function classifyEnumerated(sym: Sym, shapes: Dim3[], outcome: (v: number) => string): Verdict {
  const facts = symFacts(sym);
  const notes: string[] = [];
  let data = false;
  const outcomeSets = new Map<string, string[]>();
  const combos: ComboResult[] = [];
  const simulated = new Set<string>();
  let trueSum = 0;
  let trueCount = 0;
  // One warp's outcomes and their lane counts, reused from warp to warp.
  const keys: string[] = [];
  const counts: number[] = [];
  const blockSamples = blockIdxSamples(facts);
  for (const shape of shapes) {
    const size = shape.x * shape.y * shape.z;
    const warps = Math.ceil(size / 32);
    const base0 = basePoint(shape, blockSamples[0]);
    const samples = freeSampleLists(facts, base0);
    const evaluate = blockEvaluator(sym, shape);
    for (const { f, values } of samples) {
      if (f.loop?.role !== 'counter') continue;
      if (simulateLoopCounter(f, base0)) {
        simulated.add(f.name);
        notes.push(`${f.name} takes ${describeValues(values)} with ${formatDim(shape)}-thread blocks`);
      } else notes.push(`${f.name} changes every iteration and its values are not known: checked ${describeValues(values)}`);
    }
    for (const bindings of sampleCombinations(samples)) {
      for (const blockIdx of blockSamples) {
        const column = evaluate(blockSample(blockIdx, bindings));
        const combo: ComboResult = { values: new Map(samples.map((s) => [s.f.name, bindings.get(s.f.id)!])), splitWarps: [], totalWarps: warps, groups: null };
        let invalid = false;
        for (let w = 0; w < warps && !invalid; w++) {
          keys.length = 0;
          counts.length = 0;
          let active = 0;
          // Neighbouring lanes mostly hold the same value: its outcome's slot is looked up once per run of them.
          let runValue = 0;
          let slot = -1;
          for (let l = w * 32; l < Math.min(size, w * 32 + 32); l++) {
            const v = threadValue(column, l);
            if (v === INVALID) {
              invalid = true;
              break;
            }
            if (v === LANE_UNKNOWN) {
              data = true;
              continue;
            }
            if (slot < 0 || !Object.is(v, runValue)) {
              runValue = v;
              slot = outcomeSlot(keys, counts, outcome(v));
            }
            counts[slot]++;
            active++;
          }
          if (invalid) break;
          const set = [...keys].sort();
          if (set.length > 0) outcomeSets.set(set.join(','), set);
          if (keys.length > 1) {
            combo.splitWarps.push(w);
            combo.groups ??= [...counts].sort((a, b) => b - a);
            const ones = keys.indexOf('1');
            trueSum += (ones >= 0 ? counts[ones] : 0) / active;
            trueCount++;
          }
        }
        if (!invalid) combos.push(combo);
      }
    }
  }
  const dependsOnShape = facts.threadAxes.size > 0 || facts.laneId || facts.frees.some((f) => f.loop?.role === 'counter');
  if (data) {
    return { kind: 'divergent', basis: 'data', split: { warps: 'warps', groups: null, when: null, dataDependent: true, variesBySteps: false }, trueFraction: null, outcomeSets: [], notes, dependsOnShape: false };
  }
  const splitting = combos.filter((c) => c.splitWarps.length > 0);
  if (splitting.length === 0) return { kind: 'warp-uniform', basis: 'lanes', split: null, trueFraction: null, outcomeSets: [...outcomeSets.values()], notes, dependsOnShape };
  const sampledInvariant = facts.frees.filter((f) => !f.loop).map((f) => f.name);
  if (sampledInvariant.length > 0) notes.push(`${sampledInvariant.map((n) => `\`${n}\``).join(', ')} unknown: lanes disagree for some values (e.g. ${sampledInvariant.map((n) => `${n} = ${splitting[0].values.get(n)}`).join(', ')})`);
  return {
    kind: 'divergent',
    basis: 'lanes',
    split: summarizeSplit(combos, splitting, [...simulated]),
    trueFraction: trueCount > 0 ? trueSum / trueCount : null,
    outcomeSets: [...outcomeSets.values()],
    notes,
    dependsOnShape,
  };
}

/** The index of `key` in a warp's tally, added with a count of 0 when new. */
function outcomeSlot(keys: string[], counts: number[], key: string): number {
  const i = keys.indexOf(key);
  if (i >= 0) return i;
  keys.push(key);
  counts.push(0);
  return keys.length - 1;
}

/**
 * Whether `classifyEnumerated(sym, shapes, String)` would find `sym` warp-uniform:
 * no lane reads per-lane data and, in every pass that stays defined, the lanes
 * of each warp agree. Only the verdict is needed, so nothing is tallied and the
 * search stops at the first answer.
 */
function sameInEveryWarp(sym: Sym, shapes: Dim3[]): boolean {
  const facts = symFacts(sym);
  const blockSamples = blockIdxSamples(facts);
  for (const shape of shapes) {
    const size = shape.x * shape.y * shape.z;
    const evaluate = blockEvaluator(sym, shape);
    for (const bindings of sampleCombinations(freeSampleLists(facts, basePoint(shape, blockSamples[0])))) {
      for (const blockIdx of blockSamples) {
        const verdict = passSplitsAWarp(evaluate(blockSample(blockIdx, bindings)), size);
        if (verdict === 'data' || verdict === 'split') return false;
      }
    }
  }
  return true;
}

/** One pass over a block's threads: `data` when a lane reads per-lane data before any lane is undefined, `invalid` when one is, `split` when a warp's lanes disagree. */
function passSplitsAWarp(column: Column, size: number): 'data' | 'invalid' | 'split' | 'agree' {
  let split = false;
  for (let w = 0; w * 32 < size; w++) {
    let first: number | null = null;
    for (let l = w * 32; l < Math.min(size, w * 32 + 32); l++) {
      const v = threadValue(column, l);
      if (v === INVALID) return 'invalid';
      if (v === LANE_UNKNOWN) return 'data';
      if (first === null) first = v;
      else if (v !== first && String(v) !== String(first)) split = true;
    }
  }
  return split ? 'split' : 'agree';
}

/** The enumeration's evaluation of a block: warps are keyed by block so that warp-uniform opaque values differ between blocks. */
function blockSample(blockIdx: Dim3, bindings: ReadonlyMap<number, number>): BlockSample {
  return { blockIdx, gridDim: GRID_DIM, bindings, warpKey: (w) => w + 1000 * (blockIdx.x + 7 * blockIdx.y) };
}

function blockIdxSamples(facts: SymFacts): Dim3[] {
  return facts.blockIdx ? [{ x: 0, y: 0, z: 0 }, { x: 1, y: 1, z: 0 }] : [{ x: 0, y: 0, z: 0 }];
}

function freeSampleLists(facts: SymFacts, base: Omit<EvalPoint, 'bindings'>): Array<{ f: Extract<Sym, { op: 'free' }>; values: number[] }> {
  return thinSamples(facts.frees.map((f) => ({ f, values: freeSamples(f, base) })), MAX_COMBINATIONS);
}

function sampleCombinations(samples: Array<{ f: Extract<Sym, { op: 'free' }>; values: number[] }>): Array<Map<number, number>> {
  return cartesian(samples.map((s) => s.values.map((v) => [s.f.id, v] as [number, number])), MAX_COMBINATIONS);
}

/**
 * Combinations of the unknowns' samples evaluated per branch and block shape.
 * Each combination costs a pass over every lane of every warp, so the samples
 * are thinned (keeping each list's ends, where splits start and stop) until
 * their product fits.
 */
const MAX_COMBINATIONS = 48;

function thinSamples<T extends { values: number[] }>(samples: T[], cap: number): T[] {
  const out = samples.map((s) => ({ ...s, values: [...s.values] }));
  const product = () => out.reduce((p, s) => p * Math.max(1, s.values.length), 1);
  while (product() > cap) {
    const widest = out.reduce((a, b) => (b.values.length > a.values.length ? b : a));
    if (widest.values.length <= 2) break;
    const keep = Math.max(2, Math.ceil(widest.values.length / 2));
    widest.values = evenly(widest.values, keep);
  }
  return out;
}

function evenly(values: number[], n: number): number[] {
  if (values.length <= n) return values;
  const picked: number[] = [];
  for (let i = 0; i < n; i++) picked.push(values[Math.round((i * (values.length - 1)) / (n - 1))]);
  return [...new Set(picked)];
}

/** The combinations of the lists' bindings, the last list varying fastest, at most `cap`. */
function cartesian(lists: Array<Array<[number, number]>>, cap: number): Array<Map<number, number>> {
  const out: Array<Map<number, number>> = [];
  const pick = (i: number, acc: Map<number, number>): void => {
    if (out.length >= cap) return;
    if (i === lists.length) {
      out.push(new Map(acc));
      return;
    }
    for (const [id, v] of lists[i]) {
      acc.set(id, v);
      pick(i + 1, acc);
    }
  };
  pick(0, new Map());
  return out;
}

function describeValues(values: number[]): string {
  if (values.length <= 6) return values.join(', ');
  return `${values.slice(0, 3).join(', ')}, …, ${values.slice(-2).join(', ')}`;
}

function summarizeSplit(all: ComboResult[], splitting: ComboResult[], counters: string[]): SplitSummary {
  const first = splitting.reduce((a, b) => (b.splitWarps.length > a.splitWarps.length ? b : a));
  const n = first.splitWarps.length;
  const warps = n === first.totalWarps ? (n === 1 ? 'the warp' : 'every warp') : n === 1 ? `warp ${first.splitWarps[0]} of each block` : `${n} of the ${first.totalWarps} warps of each block`;
  let when: string | null = null;
  for (const name of counters) {
    const split = [...new Set(splitting.map((c) => c.values.get(name)!))];
    const whole = [...new Set(all.filter((c) => c.splitWarps.length === 0).map((c) => c.values.get(name)!))].filter((v) => !split.includes(v));
    if (whole.length === 0) continue;
    const maxSplit = Math.max(...split);
    const minWhole = Math.min(...whole);
    when = maxSplit < minWhole ? `${name} < ${minWhole} (${name} = ${describeValues(split.sort((a, b) => b - a))})` : `${name} = ${describeValues(split)}`;
  }
  const variesBySteps = splitting.some((c) => c.groups?.join() !== first.groups?.join() || c.splitWarps.join() !== first.splitWarps.join());
  return { warps, groups: first.groups, when, dataDependent: false, variesBySteps };
}

// ---------------------------------------------------------------------------
// Branches

interface CostSetup {
  functions: FunctionTable;
  lookup: Lookup;
  nestedDivergent: (node: SyntaxNode) => boolean;
  views: SyntaxViews;
}

const oneLine = oneLineOfCode;

function makeBranch(site: BranchSite, verdict: Verdict, shapes: Shapes, setup: CostSetup, source: SourceText): Branch {
  const spanOf = (node: SyntaxNode) => withinLines(source, spanOfNode(node));
  const estimates = site.paths.map((p) => estimateCost(p.nodes, setup));
  const paths: BranchPath[] = site.paths.map((p, i) => ({ label: p.label, cost: estimates[i].cost, spans: p.nodes.map(spanOf) }));
  const divergent = verdict.kind === 'divergent';
  let concurrentPaths: number[][];
  if (!divergent) concurrentPaths = paths.map((_, i) => [i]);
  else if (site.construct === 'switch' && verdict.outcomeSets.length > 0 && verdict.basis !== 'data') {
    concurrentPaths = verdict.outcomeSets.map((set) => set.map(Number).filter((i) => Number.isInteger(i) && i < paths.length)).filter((s) => s.length > 0);
    if (concurrentPaths.length === 0) concurrentPaths = [paths.map((_, i) => i)];
  } else concurrentPaths = [paths.map((_, i) => i)];
  const firstPathIsFalse = site.construct === 'return' || site.construct === 'break' || site.construct === 'continue';
  const laneActivity = divergent && verdict.trueFraction !== null ? round(firstPathIsFalse ? 1 - verdict.trueFraction : verdict.trueFraction) : undefined;
  const notes = [...new Set(estimates.flatMap((e) => e.notes))];
  const predicable = ['if', 'else-if', 'ternary', 'short-circuit'].includes(site.construct);
  const totalStatements = estimates.reduce((s, e) => s + e.statements, 0);
  const likelyPredicated = predicable && !estimates.some((e) => e.complex) && totalStatements <= 4 && estimates.reduce((s, e) => s + e.cost, 0) <= 16;
  const assumptions = [
    ...(verdict.dependsOnShape && verdict.basis === 'lanes' ? shapes.assumptions : []),
    ...verdict.notes,
    ...(divergent ? ['path costs are estimates from the syntax tree (about one instruction per operator, load, store or call)', ...notes] : []),
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
    ...(laneActivity !== undefined ? { laneActivity } : {}),
    ...(verdict.split ? { split: { ...verdict.split, groups: verdict.split.groups && [...verdict.split.groups] } } : {}),
    costSource: 'syntax-estimate',
    likelyPredicated,
    explanation: '',
    suggestion: null,
    assumptions: [...new Set(assumptions)],
  };
  return finish(branch, verdict.basis, shapes.known);
}

/** Recompute the totals, the explanation and the suggestion from the paths. */
function finish(branch: Branch, basis: Verdict['basis'] | null, shapesKnown: boolean): Branch {
  const costs = branch.paths.map((p) => p.cost);
  const idealCost = Math.max(0, ...costs);
  const divergedCost = Math.max(idealCost, ...branch.concurrentPaths.map((set) => set.reduce((s, i) => s + (costs[i] ?? 0), 0)));
  const efficiency = divergedCost > 0 ? round(idealCost / divergedCost) : 1;
  const b: Branch = { ...branch, idealCost, divergedCost, efficiency };
  b.explanation = explain(b, basis, shapesKnown);
  b.suggestion = suggest(b);
  return b;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

function describeGroups(split: SplitSummary): string {
  const g = split.groups;
  if (!g) return '';
  if (g.length === 2 && g[0] === g[1]) return ` into two groups of ${g[0]} lanes`;
  if (g.length === 2) return ` (${g[0]} lanes against ${g[1]})`;
  return ` into ${g.length} groups (${g.join(' + ')} lanes)`;
}

function explain(b: Branch, basis: Verdict['basis'] | null, shapesKnown: boolean): string {
  const cond = `\`${b.condition}\``;
  if (b.kind === 'tail') {
    if (basis === 'block-tail') return `bounds guard: ${cond} splits at most one warp per block (the one holding the boundary).`;
    return b.construct === 'loop' ? `tail of a grid-stride loop: ${cond} splits at most the last warp.` : `tail guard: splits at most the last warp.`;
  }
  if (b.kind === 'warp-uniform') {
    const shape = shapesKnown ? 'for the launched block sizes' : 'assuming blockDim.x is a multiple of 32';
    return `warp-uniform: ${cond} has the same value in all 32 lanes of each warp (${shape}), so whole warps take one side and nothing is serialized.`;
  }
  const ptx = b.costSource === 'ptx';
  const amount = (c: number) => (ptx ? `${c} PTX instructions` : `about ${c} instructions, estimated from the syntax`);
  const slots = ptx ? 'PTX instructions' : 'estimated from the syntax';
  const split = b.split;
  const who = split?.dataDependent ? `${cond} depends on per-lane data (from \`${b.source.text}\`), so lanes of a warp disagree whenever their values do` : `${cond} splits ${split?.warps ?? 'warps'}${split ? describeGroups(split) : ''}${split?.when ? ` when ${split.when}` : ''}`;
  const lanes = b.laneActivity !== undefined ? ` (lane efficiency ${pct(b.laneActivity)} there${split?.variesBySteps ? ', averaged over the steps' : ''})` : '';
  const [first, second] = b.paths;
  let body: string;
  if (b.construct === 'loop') {
    body = `${who}: lanes leave the loop at different iterations, and the warp keeps issuing the body (${amount(first.cost)} per iteration) until its last lane is done, with finished lanes idle.`;
  } else if (b.construct === 'return' || b.construct === 'break' || b.construct === 'continue') {
    const rest = b.construct === 'return' ? 'the rest of the function' : 'the rest of the loop body';
    body = `${who}: the lanes that ${b.construct} early idle while the others run ${rest} (${amount(first.cost)})${b.laneActivity !== undefined ? `, with ${pct(b.laneActivity)} of the lanes active` : ''}.`;
  } else if (b.construct === 'switch') {
    const k = Math.max(...b.concurrentPaths.map((s) => s.length));
    body = `${who}: the lanes of a warp go to up to ${k} cases, run one after the other: ${b.divergedCost} issue slots against ${b.idealCost} if the lanes agreed (efficiency ${pct(b.efficiency)}; ${slots}).`;
  } else if (second && second.cost === 0) {
    const what = b.construct === 'short-circuit' ? `the right operand (${amount(first.cost)})` : `the body (${amount(first.cost)})`;
    body = `${who}; the idle lanes wait through ${what}${lanes}. The ${b.construct === 'short-circuit' ? 'skip' : 'else'} path is empty, so no extra issue slots are paid.`;
  } else {
    body = `${who}: the warp runs both paths one after the other: ${b.divergedCost} issue slots against ${b.idealCost} if the lanes agreed (efficiency ${pct(b.efficiency)}; ${slots}).`;
  }
  if (b.likelyPredicated) body += ' It is short: the compiler will likely predicate it instead of branching (the idle lanes still issue it).';
  return body;
}

function suggest(b: Branch): string | null {
  if (b.kind !== 'divergent') return null;
  const c = b.condition;
  if (b.split?.dataDependent) return 'If the data allows, group the work so the lanes of a warp see similar values (sort or bin it), or compute both sides without a branch.';
  if (b.split?.when && /<\s*32\b/.test(b.split.when)) return 'Finish the last steps (fewer than 32 active lanes) inside one warp with `__shfl_down_sync`, which needs no branch.';
  if (/%/.test(c) && /==|!=/.test(c) && b.split?.warps === 'every warp') return 'Index the work so the active lanes are contiguous (e.g. sequential addressing `tid < s` instead of `tid % (2*s) == 0`): whole warps then drop out together.';
  if (b.construct === 'loop') return 'Balance the trip counts across the lanes of a warp (or give each warp its own work item) so the lanes finish together.';
  if (isLeaderBranch(b)) return null;
  if (b.paths.length >= 2 && b.paths.filter((p) => p.cost > 0).length >= 2) return 'Move work common to the paths out of the branch, or regroup the data so the lanes of a warp agree.';
  if (/[<>]/.test(c)) return 'Align the condition to warp boundaries (a multiple of 32 lanes) so whole warps take one side.';
  return 'Align the condition to warp boundaries, move work out of the branch, or use warp-level primitives.';
}

// ---------------------------------------------------------------------------
// PTX refinement

/**
 * Replace syntax estimates with PTX instruction counts: for each branch of a
 * kernel found in the PTX, each path costs the instructions whose `.loc` falls
 * in its source. `filePath` names the analysed file as nvcc saw it. A branch
 * whose non-empty paths do not all map to instructions keeps its estimate.
 */
export function refineBranchesWithPtx(branches: readonly Branch[], ptx: PtxModule | string, filePath: string): Branch[] {
  const module = typeof ptx === 'string' ? parsePtx(ptx) : ptx;
  const fileIds = fileIdsFor(module, filePath);
  return branches.map((b) => {
    if (b.kind !== 'divergent' || fileIds.size === 0) return b;
    const entries = ptxEntriesFor(module, b.kernel);
    if (entries.length === 0) return b;
    const counts = b.paths.map((p) => (p.spans.length === 0 ? 0 : countInstructionsInSpans(entries, fileIds, p.spans)));
    if (b.paths.some((p, i) => p.spans.length > 0 && counts[i] === 0)) return b;
    const paths = b.paths.map((p, i) => ({ ...p, cost: counts[i] }));
    const assumptions = b.assumptions
      .filter((a) => !a.startsWith('path costs are estimates') && !a.startsWith('the loop at line'))
      .concat([`path costs are PTX instructions (nvcc -ptx -lineinfo) whose source location falls in each path, per warp and per pass; loops are counted once`]);
    const basis = b.split?.dataDependent ? 'data' : 'lanes';
    return finish({ ...b, paths, costSource: 'ptx', assumptions }, basis, !b.assumptions.some((a) => a.startsWith('no launch of')));
  });
}

// ---------------------------------------------------------------------------
// Findings and CLI

/** `if (lane == 0) ...`: one lane against the rest with no else, the way warp-level code elects a leader. */
export function isLeaderBranch(b: Branch): boolean {
  const g = b.split?.groups;
  return !!g && g.length === 2 && g[1] === 1 && (b.construct === 'if' || b.construct === 'else-if') && (b.paths[1]?.cost ?? 0) === 0;
}

/**
 * `divergent-branch` warnings for divergent branches that cost at least
 * `minCostThreshold` issue slots; nothing for warp-uniform or tail. A leader
 * branch (one lane, no else: `if (lane == 0) out[w] = v;`) is how warp-level
 * code is written, so it needs four times the threshold.
 */
export function divergenceFindings(branches: readonly Branch[], { minCostThreshold = DEFAULT_DIVERGENCE_COST_THRESHOLD }: { minCostThreshold?: number } = {}): Finding[] {
  const seen = new Set<string>();
  const findings: Finding[] = [];
  for (const b of branches) {
    if (b.kind !== 'divergent' || b.divergedCost < minCostThreshold) continue;
    if (isLeaderBranch(b) && b.divergedCost < 4 * minCostThreshold) continue;
    const key = `${b.span.start.line}:${b.span.start.character}:${b.construct}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push({
      code: 'divergent-branch',
      severity: 'warning',
      message: b.explanation,
      span: b.conditionSpan,
      related: [{ uri: null, span: b.source.span, message: `the thread index comes from \`${b.source.text}\`` }],
    });
  }
  return findings;
}

export interface CliBranch {
  line: number;
  column: number;
  kind: BranchKind;
  condition: string;
  efficiency: number;
}

/** `branches` of `cuda-occupancy check --format json`: 1-based positions, one per branch (the worst verdict when a device function is reached from several kernels). */
export function branchesForCli(branches: readonly Branch[]): CliBranch[] {
  const byPosition = new Map<string, CliBranch>();
  for (const b of branches) {
    const entry: CliBranch = { line: b.span.start.line + 1, column: b.span.start.character + 1, kind: b.kind, condition: b.condition, efficiency: b.efficiency };
    const key = `${entry.line}:${entry.column}:${b.construct}`;
    const prior = byPosition.get(key);
    if (!prior || RANK[entry.kind] > RANK[prior.kind] || (entry.kind === prior.kind && entry.efficiency < prior.efficiency)) byPosition.set(key, entry);
  }
  return [...byPosition.values()].sort((a, b) => a.line - b.line || a.column - b.column);
}
