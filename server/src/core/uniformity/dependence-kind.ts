/** How a value varies across the threads of a block: uniform, the same within each warp, a global index, or lane-varying. */
import type { Dim3 } from '../types';
import { memoByText } from '../incremental/kept-tables';
import {
  isThreadDependent,
  structuralKey,
  symFacts,
  type Axis,
  type AffineShape,
  type DependenceKind,
  type Sym,
  type SymFacts,
} from './symbolic-values';
import {
  defaultBlockShape,
  evaluateSym,
  blockEvaluator,
  freeSamples,
  threadCoordinates,
  threadValue,
  LANE_UNKNOWN,
  INVALID,
  type BlockSample,
  type EvalPoint,
  type EvalResult,
} from './lane-evaluation';

/**
 * Kinds by what decides them (`structuralKey`, as divergence.ts keeps its verdicts): the walk asks
 * for the kind of values of one shape again and again (each load's address, each join of paths,
 * the same index in each kernel), and one can cost an evaluation of every lane of a block.
 */
const evaluatedKindOf = memoByText(
  'dependence kinds',
  (sym: Sym, shape: Dim3 | undefined) => `${shape ? `${shape.x}x${shape.y}x${shape.z}` : ''}|${structuralKey(sym)}`,
  (sym: Sym, shape: Dim3 | undefined) => evaluatedKind(sym, symFacts(sym), shape),
);

/** The kind of a value: uniform, the same within each warp, a global index, or lane-varying (under `shape`). */
export function dependenceKind(sym: Sym, shape?: Dim3): DependenceKind {
  const facts = symFacts(sym);
  if (facts.threadAxes.size === 0 && !facts.laneId && !facts.opaqueLane && !facts.opaqueWarp) return 'uniform';
  if (facts.opaqueLane) return 'laneVarying';
  return evaluatedKindOf(sym, shape);
}

function evaluatedKind(sym: Sym, facts: SymFacts, shape: Dim3 | undefined): DependenceKind {
  const dims = shape ?? defaultBlockShape(facts.threadAxes.has('y') || facts.threadAxes.has('z'));
  const base = {
    blockIdx: { x: 1, y: 1, z: 0 },
    blockDim: dims,
    gridDim: { x: 8, y: 8, z: 1 },
    threadIdx: { x: 0, y: 0, z: 0 },
    warpKey: 0,
  };
  // A sample of each unknown that divides nothing by zero (0 is among the samples, for conditions).
  // A run-time value's first sample is 1, which makes `pid % n` the same in every lane: where the
  // lanes agree, they are asked again with its next (3), and agree only if they agree for both.
  const round = (second: boolean) => {
    const bindings = new Map<number, number>();
    let differs = false;
    for (const f of facts.frees) {
      const samples = freeSamples(f, base).filter((v) => v !== 0);
      const pick = second && !f.fixed && !f.loop && samples.length > 1 ? samples[1] : (samples[0] ?? 1);
      differs ||= pick !== (samples[0] ?? 1);
      bindings.set(f.id, pick);
    }
    return { bindings, differs };
  };
  const disagreementWith = (bindings: Map<number, number>) =>
    firstDisagreement(sym, dims, {
      blockIdx: base.blockIdx,
      gridDim: base.gridDim,
      bindings,
      warpKey: (w) => w,
    });
  let disagreement = disagreementWith(round(false).bindings);
  if (disagreement === null) {
    const again = round(true);
    if (again.differs) disagreement = disagreementWith(again.bindings);
  }
  if (disagreement === 'unknown') return facts.blockIdx ? 'globalIndex' : 'laneVarying';
  if (disagreement === 'differ') return facts.blockIdx && isAffineIndex(sym) ? 'globalIndex' : 'laneVarying';
  return 'warpUniform';
}

/**
 * The first lane, warp by warp, whose value is per-lane data (`unknown`) or
 * differs from its warp's first lane (`differ`); null when there is none.
 * Most values already differ in warp 0, so it is evaluated lane by lane, and
 * the rest of the block only when it agrees, all at once.
 */
function firstDisagreement(sym: Sym, dims: Dim3, sample: BlockSample): 'unknown' | 'differ' | null {
  const size = dims.x * dims.y * dims.z;
  const threads = threadCoordinates(dims);
  const point: EvalPoint = {
    threadIdx: { x: 0, y: 0, z: 0 },
    blockIdx: sample.blockIdx,
    blockDim: dims,
    gridDim: sample.gridDim,
    warpKey: sample.warpKey(0),
    bindings: sample.bindings,
  };
  const firstWarp = scanWarps(0, Math.min(size, 32), (t) => {
    point.threadIdx = { x: threads.x[t], y: threads.y[t], z: threads.z[t] };
    return evaluateSym(sym, point);
  });
  if (firstWarp || size <= 32) return firstWarp;
  const column = blockEvaluator(sym, dims)(sample);
  return scanWarps(32, size, (t) => threadValue(column, t));
}

function scanWarps(from: number, to: number, valueOf: (thread: number) => EvalResult): 'unknown' | 'differ' | null {
  for (let w = from; w < to; w += 32) {
    let first: EvalResult | undefined;
    for (let t = w; t < Math.min(to, w + 32); t++) {
      const v = valueOf(t);
      // Per-lane data, or a value the sample leaves undefined (a division by zero): nothing is known of it.
      if (v === LANE_UNKNOWN || v === INVALID) return 'unknown';
      if (first === undefined) first = v;
      else if (v !== first) return 'differ';
    }
  }
  return null;
}

/** Built only from +, -, * by uniforms and << by constants over thread and block indices: monotone in each index. */
export function isAffineIndex(sym: Sym): boolean {
  switch (sym.op) {
    case 'const':
    case 'threadIdx':
    case 'blockIdx':
    case 'blockDim':
    case 'gridDim':
    case 'free':
    case 'laneId':
      return true;
    case 'opaque':
    case 'select':
      return false;
    case 'unary':
      return sym.operator === '+' && isAffineIndex(sym.arg);
    case 'binary': {
      const { operator, left, right } = sym;
      if (operator === '+' || operator === '-')
        return isAffineIndex(left) && (operator === '+' ? isAffineIndex(right) : !isThreadDependent(right));
      if (operator === '*')
        return (isAffineIndex(left) && !isThreadDependent(right)) || (isAffineIndex(right) && !isThreadDependent(left));
      if (operator === '<<') return isAffineIndex(left) && right.op === 'const';
      return !isThreadDependent(sym);
    }
  }
}

/** The affine shape of a value, when it has one. */
export function affineShape(sym: Sym): AffineShape | null {
  let transform: AffineShape['transform'] = 'none';
  let inner = sym;
  if (sym.op === 'binary' && sym.right.op === 'const') {
    const c = sym.right.value;
    if ((sym.operator === '/' && c % 32 === 0) || (sym.operator === '>>' && c >= 5)) {
      transform = 'warp';
      inner = sym.left;
    } else if ((sym.operator === '%' && c === 32) || (sym.operator === '&' && c === 31)) {
      transform = 'lane';
      inner = sym.left;
    }
  }
  if (!isAffineIndex(inner)) return null;
  const coefficients = { x: coefficientOf(inner, 'x'), y: coefficientOf(inner, 'y'), z: coefficientOf(inner, 'z') };
  return { coefficients, hasBlockOffset: symFacts(inner).blockIdx, transform };
}

function coefficientOf(sym: Sym, dim: Axis): number | null {
  // d/d threadIdx.dim at a point, by finite difference over constants; null when a coefficient is symbolic.
  const facts = symFacts(sym);
  // Frees (and blockDim) are bound to two different values: a coefficient that changes with them is symbolic.
  const at = (t: number, freeValue: number, bdim: number): EvalResult => {
    const threadIdx = { x: 0, y: 0, z: 0, [dim]: t } as Dim3;
    const bindings = new Map(facts.frees.map((f) => [f.id, freeValue] as [number, number]));
    return evaluateSym(sym, {
      threadIdx,
      blockIdx: { x: 0, y: 0, z: 0 },
      blockDim: { x: bdim, y: bdim, z: bdim },
      gridDim: { x: 1, y: 1, z: 1 },
      warpKey: 0,
      bindings,
    });
  };
  const d1 = diff(at(1, 1, 64), at(0, 1, 64));
  const d2 = diff(at(1, 2, 128), at(0, 2, 128));
  if (d1 === null || d2 === null) return null;
  return d1 === d2 ? d1 : null;
}

function diff(a: EvalResult, b: EvalResult): number | null {
  return typeof a === 'number' && typeof b === 'number' ? a - b : null;
}
