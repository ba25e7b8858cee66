/**
 * Symbolic values evaluated lane by lane: for one thread (`evaluateSym`), or for every thread of a
 * block at once (`blockEvaluator`, columns of numbers), with loop counters simulated or sampled.
 */
import type { Dim3 } from '../types';
import { memoByText } from '../incremental/kept-tables';
import { applyBinary, applyUnary, binaryOperator, type BinaryOperator, type Sym } from './symbolic-values';

/** The value of an expression for a lane whose data we cannot know (a load at a lane-varying address). */
export const LANE_UNKNOWN = Symbol('lane-unknown');
/** The sample makes the expression undefined (division by zero): skip it. */
export const INVALID = Symbol('invalid');
export type EvalResult = number | typeof LANE_UNKNOWN | typeof INVALID;

export interface EvalPoint {
  threadIdx: Dim3;
  blockIdx: Dim3;
  blockDim: Dim3;
  gridDim: Dim3;
  /** Linear index of the thread's warp in the grid, for warp-uniform opaque values. */
  warpKey: number;
  /** Values for `free` symbols, by id. */
  bindings: ReadonlyMap<number, number>;
}

export function evaluateSym(sym: Sym, p: EvalPoint): EvalResult {
  switch (sym.op) {
    case 'const':
      return sym.value;
    case 'threadIdx':
      return p.threadIdx[sym.dim];
    case 'blockIdx':
      return p.blockIdx[sym.dim];
    case 'blockDim':
      return p.blockDim[sym.dim];
    case 'gridDim':
      return p.gridDim[sym.dim];
    case 'laneId':
      return linearThreadIndex(p.threadIdx, p.blockDim) % 32;
    case 'free':
      return p.bindings.get(sym.id) ?? INVALID;
    case 'opaque':
      return sym.kind === 'laneVarying' ? LANE_UNKNOWN : pseudoRandom(sym.id, p.warpKey);
    case 'unary': {
      const a = evaluateSym(sym.arg, p);
      if (typeof a !== 'number') return a;
      return applyUnary(sym.operator, a);
    }
    case 'select': {
      const c = evaluateSym(sym.cond, p);
      if (typeof c !== 'number') return c;
      return evaluateSym(c !== 0 ? sym.then : sym.else, p);
    }
    case 'binary': {
      const a = evaluateSym(sym.left, p);
      const b = evaluateSym(sym.right, p);
      if (a === INVALID || b === INVALID) return INVALID;
      if (a === LANE_UNKNOWN || b === LANE_UNKNOWN) return LANE_UNKNOWN;
      return applyBinary(sym.operator, a, b) ?? INVALID;
    }
  }
}

export function linearThreadIndex(t: Dim3, dim: Dim3): number {
  return t.x + dim.x * (t.y + dim.y * t.z);
}

// --- over a whole block ----------------------------------------------------
//
// The divergence pass evaluates a condition for every thread of a block, for
// many samples of the unknowns: walking the tree once per thread was most of
// its cost. A block evaluator computes each node of the Sym once per sample,
// as one loop over the threads (a column), and a node that is the same for
// every thread (a constant, blockIdx, an unknown) as a single value. It gives
// each thread exactly what `evaluateSym` gives it.

/** The status of a thread's value in a column. */
const NUMBER = 0;
const UNKNOWN = 1;
const UNDEFINED = 2; // INVALID; the larger status wins when operands combine, as in `evaluateSym`

/** Values of one node for the threads of a block, or one value for all of them. */
export interface Column {
  values: Float64Array;
  status: Uint8Array;
  /** Index mask: -1 when the column has a value per thread, 0 when one value serves them all. */
  mask: number;
}

/** What changes from one evaluation of a block to the next. */
export interface BlockSample {
  blockIdx: Dim3;
  gridDim: Dim3;
  bindings: ReadonlyMap<number, number>;
  /** The key of warp `w` of the block, for warp-uniform opaque values. */
  warpKey: (w: number) => number;
}

/** The value of thread `t` (linear index in the block) in a column. */
export function threadValue(column: Column, t: number): EvalResult {
  const i = t & column.mask;
  const status = column.status[i];
  return status === NUMBER ? column.values[i] : status === UNKNOWN ? LANE_UNKNOWN : INVALID;
}

/** Compiles `sym` for blocks of shape `blockDim`: the function fills the columns for a sample and returns the root's. */
export function blockEvaluator(sym: Sym, blockDim: Dim3): (sample: BlockSample) => Column {
  const size = blockDim.x * blockDim.y * blockDim.z;
  const threads = threadCoordinates(blockDim);
  const steps: Array<(sample: BlockSample) => void> = [];
  const columns = new Map<Sym, Column>();
  const uniform = (): Column => ({ values: new Float64Array(1), status: new Uint8Array(1), mask: 0 });
  const perThread = (): Column => ({ values: new Float64Array(size), status: new Uint8Array(size), mask: -1 });
  const fixed = (status: number, value: number): Column => {
    const c = uniform();
    c.status[0] = status;
    c.values[0] = value;
    return c;
  };
  const build = (s: Sym): Column => {
    let column = columns.get(s);
    if (!column) {
      column = buildColumn(s);
      columns.set(s, column);
    }
    return column;
  };
  const buildColumn = (s: Sym): Column => {
    switch (s.op) {
      case 'const':
        return fixed(NUMBER, s.value);
      case 'threadIdx':
        return { values: threads[s.dim], status: threads.numbers, mask: -1 };
      case 'laneId':
        return { values: threads.lane, status: threads.numbers, mask: -1 };
      case 'blockDim':
        return fixed(NUMBER, blockDim[s.dim]);
      case 'blockIdx':
      case 'gridDim': {
        const c = uniform();
        const { op, dim } = s;
        steps.push((sample) => void (c.values[0] = sample[op][dim]));
        return c;
      }
      case 'free': {
        const c = uniform();
        const id = s.id;
        steps.push((sample) => {
          const v = sample.bindings.get(id);
          c.status[0] = v === undefined ? UNDEFINED : NUMBER;
          c.values[0] = v ?? 0;
        });
        return c;
      }
      case 'opaque': {
        if (s.kind === 'laneVarying') return fixed(UNKNOWN, 0);
        const c = perThread();
        const id = s.id;
        steps.push((sample) => {
          for (let w = 0; w * 32 < size; w++)
            c.values.fill(pseudoRandom(id, sample.warpKey(w)), w * 32, Math.min(size, w * 32 + 32));
        });
        return c;
      }
      case 'unary': {
        const arg = build(s.arg);
        const c = arg.mask ? perThread() : uniform();
        const operator = s.operator;
        steps.push(() => unaryStep(operator, arg, c));
        return c;
      }
      case 'binary': {
        const left = build(s.left);
        const right = build(s.right);
        const c = left.mask || right.mask ? perThread() : uniform();
        const apply = binaryOperator(s.operator);
        steps.push(() => binaryStep(apply, left, right, c));
        return c;
      }
      case 'select': {
        const cond = build(s.cond);
        const then = build(s.then);
        const otherwise = build(s.else);
        const c = cond.mask || then.mask || otherwise.mask ? perThread() : uniform();
        steps.push(() => selectStep(cond, then, otherwise, c));
        return c;
      }
    }
  };
  const root = build(sym);
  return (sample) => {
    for (const step of steps) step(sample);
    return root;
  };
}

function unaryStep(operator: string, arg: Column, out: Column): void {
  for (let i = 0; i < out.values.length; i++) {
    const status = arg.status[i];
    out.status[i] = status;
    if (status === NUMBER) out.values[i] = applyUnary(operator, arg.values[i]);
  }
}

function binaryStep(apply: BinaryOperator, left: Column, right: Column, out: Column): void {
  const lm = left.mask;
  const rm = right.mask;
  for (let i = 0; i < out.values.length; i++) {
    const status = Math.max(left.status[i & lm], right.status[i & rm]);
    if (status !== NUMBER) {
      out.status[i] = status;
      continue;
    }
    const v = apply(left.values[i & lm], right.values[i & rm]);
    out.status[i] = v === null ? UNDEFINED : NUMBER;
    if (v !== null) out.values[i] = v;
  }
}

function selectStep(cond: Column, then: Column, otherwise: Column, out: Column): void {
  for (let i = 0; i < out.values.length; i++) {
    const ci = i & cond.mask;
    if (cond.status[ci] !== NUMBER) {
      out.status[i] = cond.status[ci];
      continue;
    }
    const chosen = cond.values[ci] !== 0 ? then : otherwise;
    const j = i & chosen.mask;
    out.status[i] = chosen.status[j];
    out.values[i] = chosen.values[j];
  }
}

interface ThreadCoordinates {
  x: Float64Array;
  y: Float64Array;
  z: Float64Array;
  lane: Float64Array;
  /** All NUMBER: the status of these columns. */
  numbers: Uint8Array;
}

/** threadIdx and the lane id of each thread of a block, by shape (a few shapes per document; kept while there are few). */
export const threadCoordinates = memoByText(
  'thread coordinates',
  (d: Dim3) => `${d.x},${d.y},${d.z}`,
  (d: Dim3): ThreadCoordinates => {
    const size = d.x * d.y * d.z;
    const c = {
      x: new Float64Array(size),
      y: new Float64Array(size),
      z: new Float64Array(size),
      lane: new Float64Array(size),
      numbers: new Uint8Array(size),
    };
    for (let t = 0; t < size; t++) {
      const idx = { x: t % d.x, y: Math.floor(t / d.x) % d.y, z: Math.floor(t / (d.x * d.y)) };
      c.x[t] = idx.x;
      c.y[t] = idx.y;
      c.z[t] = idx.z;
      c.lane[t] = linearThreadIndex(idx, d) % 32;
    }
    return c;
  },
);

/**
 * A warp-uniform value we cannot compute (a ballot's count, a broadcast, a flag), for one warp: the
 * same in all its lanes, different from warp to warp, 0 in some (a flag that is false), and small
 * enough (0 to 40) that comparing it with a lane id (`lane == leader`) can pick out a lane.
 */
function pseudoRandom(id: number, key: number): number {
  let h = (id * 2654435761 + key * 40503 + 12345) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 1274126177) >>> 0;
  return (h >>> 8) % 41;
}
/** Values a loop counter takes under a block shape, when its init, condition and update can be computed (at most 64). */
export function simulateLoopCounter(
  sym: Extract<Sym, { op: 'free' }>,
  base: Omit<EvalPoint, 'bindings'>,
  bindings: ReadonlyMap<number, number> = new Map(),
): number[] | null {
  const loop = sym.loop;
  if (!loop || loop.role !== 'counter' || !loop.cond || !loop.update) return null;
  const withoutSelf: EvalPoint = { ...base, bindings };
  const selfBindings = new Map(bindings);
  const withSelf: EvalPoint = { ...base, bindings: selfBindings };
  const at = (s: Sym, self: number | null): EvalResult => {
    if (self === null) return evaluateSym(s, withoutSelf);
    selfBindings.set(sym.id, self);
    return evaluateSym(s, withSelf);
  };
  let v = at(loop.init, null);
  const values: number[] = [];
  for (let i = 0; i < 64; i++) {
    if (typeof v !== 'number') return null;
    const c = at(loop.cond, v);
    if (typeof c !== 'number') return null;
    if (c === 0) return values;
    values.push(v);
    const amount = at(loop.update.amount, v);
    if (typeof amount !== 'number') return null;
    const next = applyBinary(loop.update.operator, v, amount);
    if (next === null || next === v) return null;
    v = next;
  }
  return null;
}

/** The block shape assumed when no launch gives one: 256 threads, or 32×8 when threadIdx.y/z is used. */
export function defaultBlockShape(multiDimensional: boolean): Dim3 {
  return multiDimensional ? { x: 32, y: 8, z: 1 } : { x: 256, y: 1, z: 1 };
}

/**
 * A loop counter's next value from any value (`i += 1`, `s >>= 1`), where its stride is known: the
 * step of one run of the loop, not another sample of its range.
 */
export function counterStep(
  sym: Extract<Sym, { op: 'free' }>,
  base: Omit<EvalPoint, 'bindings'>,
): ((v: number) => number | null) | null {
  const update = sym.loop?.update;
  if (!update) return null;
  const amount = evaluateSym(update.amount, { ...base, bindings: new Map() });
  if (typeof amount !== 'number') return null;
  return (v) => {
    const next = applyBinary(update.operator, v, amount);
    return next === null || next === v ? null : next;
  };
}

/** Sample values for a free symbol when nothing better is known. */
export function freeSamples(sym: Extract<Sym, { op: 'free' }>, base: Omit<EvalPoint, 'bindings'>): number[] {
  const loop = sym.loop;
  if (loop) {
    const simulated = simulateLoopCounter(sym, base);
    if (simulated && simulated.length > 0) return simulated;
    const op = loop.update?.operator;
    if (op === '*' || op === '/' || op === '<<' || op === '>>') return [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
    if (loop.role === 'offset') {
      const step = loop.update ? evaluateSym(loop.update.amount, { ...base, bindings: new Map() }) : INVALID;
      return typeof step === 'number' ? [0, step, 2 * step] : [0];
    }
    // A counter stepped by a known stride from a known start (`for (b = 0; b < n; b += blockDim.x)`): its first steps.
    const start = evaluateSym(loop.init, { ...base, bindings: new Map() });
    const stride = loop.update ? evaluateSym(loop.update.amount, { ...base, bindings: new Map() }) : INVALID;
    if ((op === '+' || op === '-') && typeof start === 'number' && typeof stride === 'number' && Math.abs(stride) > 1) {
      return [0, 1, 2, 3, 4].map((k) => (op === '+' ? start + k * stride : start - k * stride));
    }
    return Array.from({ length: 65 }, (_, i) => i);
  }
  // Fixed by the compiler or the launch: sizes, mostly powers of two, a warp's 32 first (thinning
  // keeps a list's ends: 32 and 256 stay). Else data: odd sizes too, and 0 (kept in the middle of
  // the list, which thinning drops first: a divisor of 0 undoes a sample).
  if (sym.fixed) return [32, 1, 2, 4, 8, 16, 64, 128, 256];
  return [1, 3, 16, 31, 0, 32, 33, 64, 100, 1000];
}
