/**
 * The verdict on one branch condition: whether the lanes of a warp can disagree on it, for the
 * block shapes the kernel is launched with. Conditions are evaluated lane by lane for sampled
 * blocks and loop steps (uniformity/thread-uniformity.ts finds the symbolic values); bounds guards on an
 * index that grows with the thread index are told apart as tails.
 */
import type { Dim3 } from '../types';
import {
  blockEvaluator,
  freeSamples,
  simulateLoopCounter,
  counterStep,
  LANE_UNKNOWN,
  INVALID,
  NUMBER,
  UNDEFINED,
  UNKNOWN,
  threadValue,
  type BlockSample,
  threadCoordinates,
  type Column,
  type EvalPoint,
} from '../uniformity/lane-evaluation';
import {
  isThreadDependent,
  structuralKey,
  canonicalWarpValues,
  symFacts,
  type Sym,
  type SymFacts,
} from '../uniformity/symbolic-values';
import type { BranchSite } from './branch-syntax';
import type { BranchKind, SplitSummary } from './divergence';
import { memoByText } from '../incremental/kept-tables';

export interface Verdict {
  kind: BranchKind;
  /** How the verdict was reached (`single-lane`: at most one lane of a warp gets there, so nothing can split). */
  basis: 'lanes' | 'data' | 'grid-tail' | 'block-tail' | 'single-lane';
  split: SplitSummary | null;
  /** Mean fraction of a split warp's lanes for which the condition holds. */
  trueFraction: number | null;
  /** Sets of outcomes seen together in one warp (switch: case indices; others: '0'/'1'). */
  outcomeSets: string[][];
  /** Loop counters whose values were simulated or sampled, and unknowns sampled. */
  notes: string[];
  dependsOnShape: boolean;
  /** Every warp that splits changes value at most once along each axis of the block (a boundary, not a pattern). */
  staircase?: boolean;
  /** The whole block changes value at most once along each axis (one boundary in the block, not one per warp). */
  blockStaircase?: boolean;
  /** Warps split at consecutive steps of a loop (other things equal): the split recurs, it is not the loop's end. */
  recurs?: boolean;
}

/**
 * Verdicts by what decides them: the condition's structure, the block shapes
 * and, for a switch, its cases. The same conditions recur from kernel to
 * kernel (`tid == 0`, `i < n`) and from one analysis of a document to the
 * next, and each costs an enumeration of every lane for many samples.
 * A verdict is shared by the sites that ask for it: nothing changes one, and
 * a branch takes a copy of the part it keeps (`split`, in makeBranch).
 */
export const classifySite = memoByText('branch verdicts', verdictKey, computeVerdict);

function verdictKey(site: BranchSite, shapes: Dim3[]): string {
  const cases =
    site.construct === 'switch'
      ? site.paths
          .map((p) => (p.caseValues === null ? 'default' : `[${p.caseValues?.map(String).join(',') ?? '-'}]`))
          .join(';')
      : '';
  const guard = guardOf(site);
  // One key for the condition and its guards, so that their unknowns are numbered together.
  const keyed: Sym = guard
    ? { op: 'binary', operator: 'where', left: site.condition.sym, right: guard }
    : site.condition.sym;
  return `${cases}|${site.construct === 'loop' ? 'loop' : ''}|${shapes.map((d) => `${d.x}x${d.y}x${d.z}`).join(',')}|${structuralKey(keyed)}`;
}

/** The conjunction of a site's guards: where its lanes are (null: everywhere). */
function guardOf(site: BranchSite): Sym | null {
  const guards = site.guards ?? [];
  return guards.length === 0 ? null : guards.reduce((a, b) => ({ op: 'binary', operator: '&&', left: a, right: b }));
}

function computeVerdict(site: BranchSite, shapes: Dim3[]): Verdict {
  // Warp-uniform unknowns numbered as the key numbers them: the same samples in every analysis.
  const numbers = new Map<number, number>();
  const sym = canonicalWarpValues(site.condition.sym, numbers);
  const rawGuard = guardOf(site);
  const guard = rawGuard && canonicalWarpValues(rawGuard, numbers);
  if (site.construct === 'switch') {
    const caseOf = (v: number) => {
      const i = site.paths.findIndex((p) => p.caseValues?.includes(v));
      if (i >= 0) return String(i);
      const d = site.paths.findIndex((p) => p.caseValues === null);
      return d >= 0 ? String(d) : `v${v}`;
    };
    return classifyEnumerated(sym, shapes, caseOf, guard);
  }
  return classifyCondition(sym, shapes, guard, site.construct === 'loop');
}

const truthy = (v: number) => (v !== 0 ? '1' : '0');

const RELATIONAL: ReadonlySet<string> = new Set(['<', '<=', '>', '>=']);
const RANK: Record<BranchKind, number> = { 'warp-uniform': 0, tail: 1, divergent: 2 };

/**
 * A condition's verdict: evaluated lane by lane; where lanes of a warp disagree, a tail when every
 * split is a boundary (see `isTail`), else divergent. In `a && b` (or `||`) each part that depends on
 * the thread index is judged on its own: a part that splits warps on its own keeps the whole
 * divergent (when the whole still splits them), tails and warp-uniform parts make a tail or a
 * warp-uniform whole.
 */
function classifyCondition(sym: Sym, shapes: Dim3[], guard: Sym | null = null, loop = false): Verdict {
  if (sym.op === 'binary' && (sym.operator === '&&' || sym.operator === '||')) {
    const whole = classifyEnumerated(sym, shapes, truthy, guard);
    // Where at most one lane of a warp runs, nothing is serialized.
    if (whole.basis === 'single-lane') return whole;
    const parts = [sym.left, sym.right].filter(isThreadDependent).map((s) => classifyCondition(s, shapes, guard, loop));
    const worst = parts.reduce((a, b) => (RANK[b.kind] > RANK[a.kind] ? b : a));
    if (worst.kind !== 'divergent') return worst;
    if (whole.kind !== 'divergent') return worst;
    // A part the thread indices alone prove split (`ixj > i && ixj < length`) proves the whole: the
    // other part only bounds which lanes are there.
    const proven = parts.some((p) => p.kind === 'divergent' && p.split && !p.split.dataDependent && !p.split.onlyFor);
    return proven && whole.split?.onlyFor ? { ...whole, split: { ...whole.split, onlyFor: undefined } } : whole;
  }
  if (sym.op === 'unary' && sym.operator === '!') return classifyCondition(sym.arg, shapes, guard, loop);
  const whole = classifyEnumerated(sym, shapes, truthy, guard);
  if (whole.kind !== 'divergent' || whole.basis === 'data') return whole;
  if (isTail(sym, whole, loop)) return tailVerdict(symFacts(sym).blockIdx);
  if (isDataBoundary(sym, whole)) return tailVerdict(symFacts(sym).blockIdx);
  return whole;
}

/**
 * A bound the program reads at run time that splits a warp only for some of its values, once in
 * each warp that splits (`dimBlocks + lane < dim`, `y * 32 + lane < NUM_ATOMS`): where the data
 * ends, not a choice of lanes the code makes. A split point only the compiler fixes (a template
 * parameter, a macro, `constexpr`) stays divergent for the values that split: it idles the same
 * lanes every time.
 */
function isDataBoundary(sym: Sym, whole: Verdict): boolean {
  const onlyFor = whole.split?.onlyFor;
  if (!onlyFor || onlyFor.length === 0 || !whole.staircase || whole.recurs) return false;
  if (sym.op !== 'binary' || !RELATIONAL.has(sym.operator)) return false;
  const deciding = symFacts(sym).frees.filter((f) => onlyFor.includes(f.name));
  return deciding.some((f) => !f.fixed && f.loop === null);
}

/**
 * A bounds guard: a comparison (`<`, `<=`, `>`, `>=`) at a point the lanes do not fix, that changes
 * value once along each axis: on a global index, once in each warp (the boundary falls in the
 * blocks at the grid's edge only); against a value the kernel reads at run time (`tid < n`), once
 * in the whole block. A loop's condition, or a test of an index the loop steps, needs it of each
 * warp only: a lane-stride loop splits each warp once, at its last iteration. A lane index against
 * a run-time value (`lane < n`) splits every warp each time: divergent. So does a split point fixed
 * by the compiler or the launch (`threadIdx.x < 16`, a template parameter, `blockDim.x / 32`): it
 * splits the same warps in every block.
 */
function isTail(sym: Sym, whole: Verdict, loop: boolean): boolean {
  // On a global index the boundary falls in the blocks at the grid's edge only, whatever the warps
  // do; on an index a loop steps, in its last iteration only.
  const facts = symFacts(sym);
  const stepped = loop || facts.frees.some((f) => f.loop !== null);
  if (!(stepped || facts.blockIdx ? whole.staircase : whole.blockStaircase)) return false;
  if (stepped && !facts.blockIdx && whole.recurs) return false;
  if (sym.op !== 'binary' || !RELATIONAL.has(sym.operator)) return false;
  return facts.blockIdx || facts.frees.some((f) => !f.fixed && f.loop?.role !== 'counter');
}

function tailVerdict(global: boolean): Verdict {
  return {
    kind: 'tail',
    basis: global ? 'grid-tail' : 'block-tail',
    split: null,
    trueFraction: null,
    outcomeSets: [],
    notes: [],
    dependsOnShape: false,
  };
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

/**
 * Evaluate the condition for every lane of every warp, for each block shape and each sample of the
 * unknowns it reads; with a `guard`, only for the lanes where it holds (the others are not there).
 */
function classifyEnumerated(
  sym: Sym,
  shapes: Dim3[],
  outcome: (v: number) => string,
  guard: Sym | null = null,
): Verdict {
  const facts = guard ? symFacts({ op: 'binary', operator: 'where', left: sym, right: guard }) : symFacts(sym);
  const own = symFacts(sym);
  let mostLanes = 0;
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
  const blockSamples = blockIdxSamples(facts, guard ? [sym, guard] : [sym]);
  // One function per block: an evaluator keeps what a sample with the same warp keys gave before.
  const warpKeys = blockSamples.map(blockWarpKeys);
  const boolean = outcome === truthy;
  // Boundaries: every split warp changes value once along each axis; the block, once in all.
  let staircase = true;
  let blockStaircase = true;
  // For each value of the unknowns that are not loop counters: whether warps split at one step of
  // a loop split again at the next ones. A bound near the start splits once (`rank * 4 + i >= 1`),
  // so it must hold for most of the values that split, not all.
  const recurBySample = new Map<string, { recurs: boolean; checks: number }>();
  // Whether, for every shape and value of the unknowns at which some sampled block splits a warp,
  // another sampled block splits none: the split is then the block index's choice (one block of
  // the grid, its diagonal), not something every block pays.
  let blocksDiffer = facts.blockIdx;
  for (const shape of shapes) {
    const size = shape.x * shape.y * shape.z;
    const warps = Math.ceil(size / 32);
    const base0 = basePoint(shape, blockSamples[0]);
    const samples = freeSampleLists(facts, base0);
    const evaluate = blockEvaluator(sym, shape);
    const evaluateGuard = guard ? blockEvaluator(guard, shape) : null;
    const coords = boolean ? threadCoordinates(shape) : null;
    const invariants = samples.filter(({ f }) => !f.loop).map(({ f }) => f);
    // A lane-stride walk (an index the loop steps) splits a warp at its last step only, however the
    // inner loops move.
    const walks = samples.some(({ f }) => f.loop?.role === 'offset');
    const counters = walks
      ? []
      : samples.flatMap(({ f }) => {
          const step = f.loop?.role === 'counter' ? counterStep(f, base0) : null;
          return step ? [{ f, step }] : [];
        });
    for (const { f, values } of samples) {
      if (f.loop?.role !== 'counter') continue;
      if (simulateLoopCounter(f, base0)) {
        simulated.add(f.name);
        notes.push(`${f.name} takes ${describeValues(values)} with ${formatDim(shape)}-thread blocks`);
      } else
        notes.push(`${f.name} changes every iteration and its values are not known: checked ${describeValues(values)}`);
    }
    // Once a lane's outcome is per-lane data (and, under a guard, some warp has two lanes there), the
    // verdict is settled: the other samples could change only what a data verdict does not show.
    if (data && (!guard || mostLanes > 1)) continue;
    for (const bindings of sampleCombinations(samples)) {
      if (data && (!guard || mostLanes > 1)) break;
      let blocksSplit = 0;
      for (let k = 0; k < blockSamples.length; k++) {
        const sample: BlockSample = { blockIdx: blockSamples[k], gridDim: GRID_DIM, bindings, warpKey: warpKeys[k] };
        const column = evaluate(sample);
        const here = evaluateGuard ? evaluateGuard(sample) : null;
        const combo: ComboResult = {
          values: new Map(samples.map((s) => [s.f.name, bindings.get(s.f.id)!])),
          splitWarps: [],
          totalWarps: warps,
          groups: null,
        };
        // The columns read directly, lane by lane (as threadValue reads them).
        const { values, status, mask } = column;
        const hereValues = here?.values;
        const hereStatus = here?.status;
        const hereMask = here?.mask ?? 0;
        for (let w = 0; w < warps; w++) {
          keys.length = 0;
          counts.length = 0;
          let active = 0;
          // Neighbouring lanes mostly hold the same value: its outcome's slot is looked up once per run of them.
          let runValue = 0;
          let slot = -1;
          let present = 0;
          for (let l = w * 32; l < Math.min(size, w * 32 + 32); l++) {
            // Where the guard is false the lane is not there.
            if (hereStatus && hereStatus[l & hereMask] === NUMBER && hereValues![l & hereMask] === 0) continue;
            const state = status[l & mask];
            // Undefined for this sample in this lane (a division by a warp's value of 0): not counted.
            if (state === UNDEFINED) continue;
            present++;
            if (state === UNKNOWN) {
              data = true;
              continue;
            }
            const v = values[l & mask];
            if (slot < 0 || !Object.is(v, runValue)) {
              runValue = v;
              slot = outcomeSlot(keys, counts, outcome(v));
            }
            counts[slot]++;
            active++;
          }
          if (present > mostLanes) mostLanes = present;
          if (keys.length === 1) {
            if (!outcomeSets.has(keys[0])) outcomeSets.set(keys[0], [keys[0]]);
          } else if (keys.length > 1) {
            const set = [...keys].sort();
            outcomeSets.set(set.join(','), set);
          }
          if (keys.length > 1) {
            if (coords && staircase && !isBoundary(column, here, coords, shape, w * 32, Math.min(size, w * 32 + 32)))
              staircase = false;
            combo.splitWarps.push(w);
            combo.groups ??= [...counts].sort((a, b) => b - a);
            const ones = keys.indexOf('1');
            trueSum += (ones >= 0 ? counts[ones] : 0) / active;
            trueCount++;
          }
        }
        if (
          coords &&
          combo.splitWarps.length > 1 &&
          blockStaircase &&
          !isBoundary(column, here, coords, shape, 0, size, true)
        )
          blockStaircase = false;
        // Last: the evaluators fill their columns in place, so this sample's are not read after it.
        if (combo.splitWarps.length > 0 && counters.length > 0) {
          const key = `${formatDim(shape)}|${invariants.map((f) => bindings.get(f.id)).join(',')}`;
          const entry = recurBySample.get(key) ?? { recurs: false, checks: 0 };
          recurBySample.set(key, entry);
          if (!entry.recurs && entry.checks < MAX_RECUR_CHECKS) {
            entry.checks++;
            entry.recurs = splitsAgain(
              combo,
              counters,
              bindings,
              (b) => {
                const moved: BlockSample = { ...sample, bindings: b };
                return { column: evaluate(moved), here: evaluateGuard ? evaluateGuard(moved) : null };
              },
              outcome,
              size,
            );
          }
        }
        combos.push(combo);
        if (combo.splitWarps.length > 0) blocksSplit++;
      }
      if (blocksSplit === blockSamples.length) blocksDiffer = false;
    }
  }
  const dependsOnShape = own.threadAxes.size > 0 || own.laneId || own.frees.some((f) => f.loop?.role === 'counter');
  // No sample reaches the branch under its guards (they hold for values the samples missed): the
  // guards tell nothing, so the lanes are judged without them, unless one of them picks one lane
  // (`threadIdx.x == best`: whatever `best` is, nothing there can split).
  if (guard && mostLanes === 0 && !picksOneLane(guard, shapes)) return classifyEnumerated(sym, shapes, outcome, null);
  // At most one lane in every sample proves one lane only where the samples cover the guard's
  // unknowns: values fixed by the compiler are tried widely, but a guard on run-time values or a
  // loop's step (`first + tid + k * step <= length`) may hold for one lane in each sample and for
  // a whole warp in the program. There it must pick one lane by its form (`tid == leader`).
  const sampledAtRunTime = (g: Sym) => symFacts(g).frees.some((f) => !f.fixed || f.loop !== null);
  if (guard && mostLanes <= 1 && sampledAtRunTime(guard) && !picksOneLane(guard, shapes))
    return classifyEnumerated(sym, shapes, outcome, null);
  if (guard && mostLanes <= 1) {
    return {
      kind: 'warp-uniform',
      basis: 'single-lane',
      split: null,
      trueFraction: null,
      outcomeSets: [],
      notes: [],
      dependsOnShape,
    };
  }
  if (data) {
    return {
      kind: 'divergent',
      basis: 'data',
      split: { warps: 'warps', groups: null, when: null, dataDependent: true, variesBySteps: false },
      trueFraction: null,
      outcomeSets: [],
      notes,
      dependsOnShape: false,
    };
  }
  const splitting = combos.filter((c) => c.splitWarps.length > 0);
  if (splitting.length === 0)
    return {
      kind: 'warp-uniform',
      basis: 'lanes',
      split: null,
      trueFraction: null,
      outcomeSets: [...outcomeSets.values()],
      notes,
      dependsOnShape,
    };
  const sampledInvariant = own.frees.filter((f) => !f.loop).map((f) => f.name);
  // Proven when every value of the unknowns the condition reads splits some warp (in some block,
  // at some step of a loop); else the split happens only for some of them.
  const splitsFor = new Map<string, boolean>();
  for (const c of combos) {
    const key = sampledInvariant.map((n) => c.values.get(n)).join(',');
    splitsFor.set(key, (splitsFor.get(key) ?? false) || c.splitWarps.length > 0);
  }
  const onlyFor = [...splitsFor.values()].every(Boolean) ? [] : [...new Set(sampledInvariant)];
  if (sampledInvariant.length > 0)
    notes.push(
      `${sampledInvariant.map((n) => `\`${n}\``).join(', ')} unknown: lanes disagree for some values (e.g. ${sampledInvariant.map((n) => `${n} = ${splitting[0].values.get(n)}`).join(', ')})`,
    );
  return {
    kind: 'divergent',
    basis: 'lanes',
    split: {
      ...summarizeSplit(combos, splitting, [...simulated], blocksDiffer, sampledInvariant),
      // Split for some of the unknowns' values only: how it splits is one sample's.
      ...(onlyFor.length > 0 ? { onlyFor, groupsVary: true } : {}),
      ...(blocksDiffer ? { someBlocks: true } : {}),
    },
    trueFraction: trueCount > 0 ? trueSum / trueCount : null,
    outcomeSets: [...outcomeSets.values()],
    notes,
    dependsOnShape,
    staircase: boolean && staircase,
    blockStaircase: boolean && staircase && blockStaircase,
    recurs: 2 * [...recurBySample.values()].filter((r) => r.recurs).length > recurBySample.size,
  };
}

/**
 * Whether a split warp's condition changes value at most once along x in each row of the block and
 * once along y (and z) in each column: a boundary, not a pattern (`lane % 2`, a middle range of lanes).
 */
function isBoundary(
  column: Column,
  here: Column | null,
  coords: ReturnType<typeof threadCoordinates>,
  shape: Dim3,
  from: number,
  to: number,
  allColumns = false,
): boolean {
  let rowSwitches = 0;
  let prev = -1;
  const columns = allColumns || shape.x % 32 !== 0 ? new Map<number, { last: number; switches: number }>() : null;
  for (let l = from; l < to; l++) {
    if (coords.x[l] === 0) {
      rowSwitches = 0;
      prev = -1;
    }
    if (here && threadValue(here, l) === 0) continue;
    const v = threadValue(column, l);
    if (typeof v !== 'number') return false;
    const bit = v !== 0 ? 1 : 0;
    if (prev >= 0 && bit !== prev && ++rowSwitches > 1) return false;
    prev = bit;
    if (columns) {
      const c = columns.get(coords.x[l]);
      if (!c) columns.set(coords.x[l], { last: bit, switches: 0 });
      else if (c.last !== bit) {
        if (++c.switches > 1) return false;
        c.last = bit;
      }
    }
  }
  return true;
}

/** The index of `key` in a warp's tally, added with a count of 0 when new. */
function outcomeSlot(keys: string[], counts: number[], key: string): number {
  const i = keys.indexOf(key);
  if (i >= 0) return i;
  keys.push(key);
  counts.push(0);
  return keys.length - 1;
}

/** The enumeration's keys of a block's warps: keyed by block so that warp-uniform opaque values differ between blocks. */
function blockWarpKeys(blockIdx: Dim3): (w: number) => number {
  return (w) => w + 1000 * (blockIdx.x + 7 * blockIdx.y);
}

/**
 * The blocks a condition that reads the block index is evaluated in: the first and one on the grid's
 * diagonal, and where it reads `blockIdx.y` or `.z`, one off the diagonal too (a split of `x != y`
 * on global 2-D indices is the diagonal blocks' alone).
 */
function blockIdxSamples(facts: SymFacts, syms: readonly Sym[]): Dim3[] {
  if (!facts.blockIdx) return [{ x: 0, y: 0, z: 0 }];
  const diagonal = [
    { x: 0, y: 0, z: 0 },
    { x: 1, y: 1, z: 0 },
  ];
  return readsBlockIdxBeyondX(syms) ? [...diagonal, { x: 1, y: 0, z: 0 }] : diagonal;
}

function readsBlockIdxBeyondX(syms: readonly Sym[]): boolean {
  const seen = new Set<Sym>();
  const stack = [...syms];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    if (s.op === 'blockIdx' && s.dim !== 'x') return true;
    if (s.op === 'unary') stack.push(s.arg);
    else if (s.op === 'binary') stack.push(s.left, s.right);
    else if (s.op === 'select') stack.push(s.cond, s.then, s.else);
  }
  return false;
}

function freeSampleLists(
  facts: SymFacts,
  base: Omit<EvalPoint, 'bindings'>,
): Array<{ f: Extract<Sym, { op: 'free' }>; values: number[] }> {
  return thinSamples(
    facts.frees.map((f) => ({ f, values: freeSamples(f, base) })),
    MAX_COMBINATIONS,
  );
}

/**
 * A conjunction with a part `e == u` that holds in one lane of a warp at most: `e` the lane index or
 * `threadIdx.x` (where a warp holds one row of the block) plus a uniform amount, `u` the same in
 * every lane of the warp.
 */
function picksOneLane(guard: Sym, shapes: readonly Dim3[]): boolean {
  if (guard.op !== 'binary') return false;
  if (guard.operator === '&&') return picksOneLane(guard.left, shapes) || picksOneLane(guard.right, shapes);
  if (guard.operator !== '==') return false;
  // The same in every lane of a warp (a value broadcast from one lane counts).
  const warpWide = (x: Sym) => {
    const f = symFacts(x);
    return f.threadAxes.size === 0 && !f.laneId && !f.opaqueLane;
  };
  const side = warpWide(guard.right) ? guard.left : warpWide(guard.left) ? guard.right : null;
  if (!side || warpWide(side)) return false;
  const facts = symFacts(side);
  if (facts.opaqueLane || !isAffineIndex(side)) return false;
  // `threadIdx.x` repeats within a warp where rows are shorter than a warp.
  return facts.laneId || shapes.every((d) => (d.y === 1 && d.z === 1) || d.x % 32 === 0);
}

/** The lane index or `threadIdx.x`, plus or minus amounts that do not depend on the thread. */
function isAffineIndex(s: Sym): boolean {
  if ((s.op === 'threadIdx' && s.dim === 'x') || s.op === 'laneId') return true;
  if (s.op !== 'binary') return false;
  const l = isThreadDependent(s.left);
  const r = isThreadDependent(s.right);
  if (l === r) return false;
  const inner = l ? s.left : s.right;
  if (s.operator === '+' || s.operator === '-') return isAffineIndex(inner);
  return false;
}

const MAX_RECUR_CHECKS = 8;

/**
 * Whether more than one of the warps the combination splits split again at one of the next two steps
 * of a loop, other things equal: a split of every tile at each step (`rank * vec + i >= half`),
 * where a loop's end (`b + tid < n`) splits a warp at one step only.
 */
function splitsAgain(
  combo: ComboResult,
  counters: Array<{ f: Extract<Sym, { op: 'free' }>; step: (v: number) => number | null }>,
  bindings: Map<number, number>,
  evaluateAt: (bindings: Map<number, number>) => { column: Column; here: Column | null },
  outcome: (v: number) => string,
  size: number,
): boolean {
  for (const { f, step } of counters) {
    // How many of the steps split each warp the combination splits.
    const splits = new Map(combo.splitWarps.map((w) => [w, 1]));
    let v = bindings.get(f.id)!;
    for (let k = 0; k < 2; k++) {
      const next = step(v);
      if (next === null) break;
      v = next;
      const moved = new Map(bindings).set(f.id, v);
      const { column, here } = evaluateAt(moved);
      for (const [w, n] of splits) {
        const p = warpPattern(column, here, outcome, w * 32, Math.min(size, w * 32 + 32));
        if (p.includes('0') && p.includes('1')) splits.set(w, n + 1);
      }
    }
    // One warp at the end of the data may split at a few steps (`inner + i * q < K`); a split in
    // several warps at consecutive steps is a pattern of the lanes, not the data's end.
    if ([...splits.values()].filter((n) => n > 1).length > 1) return true;
  }
  return false;
}

/** One warp's outcomes, lane by lane (`-` where a lane is not there or its value is undefined). */
function warpPattern(
  column: Column,
  here: Column | null,
  outcome: (v: number) => string,
  from: number,
  to: number,
): string {
  let out = '';
  for (let l = from; l < to; l++) {
    const v = threadValue(column, l);
    out += (here && threadValue(here, l) === 0) || v === INVALID || v === LANE_UNKNOWN ? '-' : outcome(v);
  }
  return out;
}

function sampleCombinations(
  samples: Array<{ f: Extract<Sym, { op: 'free' }>; values: number[] }>,
): Array<Map<number, number>> {
  return cartesian(
    samples.map((s) => s.values.map((v) => [s.f.id, v] as [number, number])),
    MAX_COMBINATIONS,
  );
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

function summarizeSplit(
  all: ComboResult[],
  splitting: ComboResult[],
  counters: string[],
  someBlocks = false,
  sampled: readonly string[] = [],
): SplitSummary {
  const first = splitting.reduce((a, b) => (b.splitWarps.length > a.splitWarps.length ? b : a));
  const n = first.splitWarps.length;
  const blocks = someBlocks ? 'of some blocks' : 'of each block';
  const warps =
    n === first.totalWarps
      ? n === 1
        ? someBlocks
          ? 'the warp of some blocks'
          : 'the warp'
        : someBlocks
          ? 'every warp of some blocks'
          : 'every warp'
      : n === 1
        ? `warp ${first.splitWarps[0]} ${blocks}`
        : `${n} of the ${first.totalWarps} warps ${blocks}`;
  let when: string | null = null;
  for (const name of counters) {
    const split = [...new Set(splitting.map((c) => c.values.get(name)!))];
    const whole = [...new Set(all.filter((c) => c.splitWarps.length === 0).map((c) => c.values.get(name)!))].filter(
      (v) => !split.includes(v),
    );
    if (whole.length === 0) continue;
    const maxSplit = Math.max(...split);
    const minWhole = Math.min(...whole);
    when =
      maxSplit < minWhole
        ? `${name} < ${minWhole} (${name} = ${describeValues(split.sort((a, b) => b - a))})`
        : `${name} = ${describeValues(split)}`;
  }
  const variesBySteps = splitting.some(
    (c) => c.groups?.join() !== first.groups?.join() || c.splitWarps.join() !== first.splitWarps.join(),
  );
  // Groups that hold for the unknowns the condition reads: the same in every splitting sample, and
  // those samples more than one of the unknowns' values (else they are one sample's).
  const valuesOf = (c: ComboResult) => sampled.map((name) => c.values.get(name)).join(',');
  const groupsVary =
    sampled.length > 0 &&
    (new Set(splitting.map(valuesOf)).size < 2 || splitting.some((c) => c.groups?.join() !== first.groups?.join()));
  return {
    warps,
    warpShare: n / first.totalWarps,
    groups: first.groups,
    when,
    dataDependent: false,
    variesBySteps,
    ...(groupsVary ? { groupsVary } : {}),
  };
}

// ---------------------------------------------------------------------------
// Branches

/** `256`, `32×8`, `8×8×4`. */
export function formatDim(d: Dim3): string {
  return d.z > 1 ? `${d.x}×${d.y}×${d.z}` : d.y > 1 ? `${d.x}×${d.y}` : `${d.x}`;
}
