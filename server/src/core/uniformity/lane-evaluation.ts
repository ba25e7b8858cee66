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
      // Short-circuit: the right side of a decided `&&` or `||` is not evaluated.
      if (sym.operator === '&&' && a === 0) return 0;
      if (sym.operator === '||' && typeof a === 'number' && a !== 0) return 1;
      const b = evaluateSym(sym.right, p);
      if (
        a === LANE_UNKNOWN &&
        ((sym.operator === '&&' && b === 0) || (sym.operator === '||' && typeof b === 'number' && b !== 0))
      )
        return sym.operator === '&&' ? 0 : 1;
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
export const NUMBER = 0;
export const UNKNOWN = 1; // LANE_UNKNOWN
export const UNDEFINED = 2; // INVALID; the larger status wins when operands combine, as in `evaluateSym`

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

/**
 * Compiles `sym` for blocks of shape `blockDim`: the function fills the columns for a sample and returns the root's.
 *
 * Samples come in runs that change one unknown at a time (the combinations of the unknowns, the
 * last varying fastest, then the blocks): a node whose inputs kept their values keeps its column
 * from the previous sample, so the parts that read only the thread index are computed once per
 * shape, and a part is computed again only when an unknown it reads has moved.
 */
export function blockEvaluator(sym: Sym, blockDim: Dim3): (sample: BlockSample) => Column {
  const size = blockDim.x * blockDim.y * blockDim.z;
  const threads = threadCoordinates(blockDim);
  // Each step fills its node's column when its inputs moved since the previous sample, and says whether it did.
  const steps: Array<(sample: BlockSample) => boolean> = [];
  // Per node, in the order of `steps`: whether its column changed in this sample.
  const moved: boolean[] = [];
  const columns = new Map<Sym, { column: Column; node: number }>();
  let first = true;
  const slab = columnSlab();
  const uniform = (): Column => slab.take(1, 0);
  const perThread = (): Column => slab.take(size, -1);
  const fixed = (status: number, value: number): Column => {
    const c = uniform();
    c.status[0] = status;
    c.values[0] = value;
    return c;
  };
  /** A node whose column never changes: no step (-1). */
  const CONSTANT = -1;
  const step = (fill: (sample: BlockSample) => boolean): number => {
    steps.push(fill);
    moved.push(true);
    return steps.length - 1;
  };
  const changed = (node: number) => node !== CONSTANT && moved[node];
  const build = (s: Sym): { column: Column; node: number } => {
    let built = columns.get(s);
    if (!built) {
      built = buildColumn(s);
      columns.set(s, built);
    }
    return built;
  };
  const buildColumn = (s: Sym): { column: Column; node: number } => {
    switch (s.op) {
      case 'const':
        return { column: fixed(NUMBER, s.value), node: CONSTANT };
      case 'threadIdx':
        return { column: { values: threads[s.dim], status: threads.numbers, mask: -1 }, node: CONSTANT };
      case 'laneId':
        return { column: { values: threads.lane, status: threads.numbers, mask: -1 }, node: CONSTANT };
      case 'blockDim':
        return { column: fixed(NUMBER, blockDim[s.dim]), node: CONSTANT };
      case 'blockIdx':
      case 'gridDim': {
        const c = uniform();
        const { op, dim } = s;
        const node = step((sample) => {
          const v = sample[op][dim];
          if (!first && Object.is(v, c.values[0])) return false;
          c.values[0] = v;
          return true;
        });
        return { column: c, node };
      }
      case 'free': {
        const c = uniform();
        const id = s.id;
        const node = step((sample) => {
          const v = sample.bindings.get(id);
          const status = v === undefined ? UNDEFINED : NUMBER;
          const value = v ?? 0;
          if (!first && status === c.status[0] && Object.is(value, c.values[0])) return false;
          c.status[0] = status;
          c.values[0] = value;
          return true;
        });
        return { column: c, node };
      }
      case 'opaque': {
        if (s.kind === 'laneVarying') return { column: fixed(UNKNOWN, 0), node: CONSTANT };
        const c = perThread();
        const id = s.id;
        // Each warp's value comes from the sample's warp keys: the same function gives the same values.
        let keys: BlockSample['warpKey'] | null = null;
        const node = step((sample) => {
          if (!first && sample.warpKey === keys) return false;
          keys = sample.warpKey;
          for (let w = 0; w * 32 < size; w++)
            c.values.fill(pseudoRandom(id, sample.warpKey(w)), w * 32, Math.min(size, w * 32 + 32));
          return true;
        });
        return { column: c, node };
      }
      case 'unary': {
        const arg = build(s.arg);
        const c = arg.column.mask ? perThread() : uniform();
        const operator = s.operator;
        if (arg.node === CONSTANT) {
          unaryStep(operator, arg.column, c);
          return { column: c, node: CONSTANT };
        }
        const node = step(() => {
          if (!first && !changed(arg.node)) return false;
          unaryStep(operator, arg.column, c);
          return true;
        });
        return { column: c, node };
      }
      case 'binary': {
        const left = build(s.left);
        const right = build(s.right);
        const c = left.column.mask || right.column.mask ? perThread() : uniform();
        const apply = binaryOperator(s.operator);
        const total = TOTAL_OPERATORS.get(s.operator);
        const partial = PARTIAL_OPERATORS.get(s.operator);
        const fill =
          total !== undefined
            ? () => totalStep(total, left.column, right.column, c)
            : partial !== undefined
              ? () => partialStep(partial, apply, left.column, right.column, c)
              : () => binaryStep(apply, left.column, right.column, c);
        if (left.node === CONSTANT && right.node === CONSTANT) {
          fill();
          return { column: c, node: CONSTANT };
        }
        const node = step(() => {
          if (!first && !changed(left.node) && !changed(right.node)) return false;
          fill();
          return true;
        });
        return { column: c, node };
      }
      case 'select': {
        const cond = build(s.cond);
        const then = build(s.then);
        const otherwise = build(s.else);
        const c = cond.column.mask || then.column.mask || otherwise.column.mask ? perThread() : uniform();
        if (cond.node === CONSTANT && then.node === CONSTANT && otherwise.node === CONSTANT) {
          selectStep(cond.column, then.column, otherwise.column, c);
          return { column: c, node: CONSTANT };
        }
        const node = step(() => {
          if (!first && !changed(cond.node) && !changed(then.node) && !changed(otherwise.node)) return false;
          selectStep(cond.column, then.column, otherwise.column, c);
          return true;
        });
        return { column: c, node };
      }
    }
  };
  const root = build(sym).column;
  return (sample) => {
    for (let k = 0; k < steps.length; k++) moved[k] = steps[k](sample);
    first = false;
    return root;
  };
}

/**
 * Columns cut from a few large buffers: an evaluator holds a column per node, up to 1024 threads
 * each, and allocating each on its own was much of the collector's work.
 */
function columnSlab(): { take(n: number, mask: number): Column } {
  let values = new Float64Array(0);
  let status = new Uint8Array(0);
  let used = 0;
  return {
    take(n, mask) {
      if (used + n > values.length) {
        // Doubling: an evaluator of a few nodes takes little, a large one a few buffers.
        const capacity = Math.max(n, 2 * values.length, 64);
        values = new Float64Array(capacity);
        status = new Uint8Array(capacity);
        used = 0;
      }
      const column = { values: values.subarray(used, used + n), status: status.subarray(used, used + n), mask };
      used += n;
      return column;
    },
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

/**
 * The operators that give a number for any two numbers (as symbolic-values' table computes them),
 * by code: computed in the loop itself, where a call per lane through the table cost most of a step.
 */
const TOTAL_OPERATORS: ReadonlyMap<string, number> = new Map(
  ['+', '-', '*', '<', '<=', '>', '>=', '==', '!=', '&&', '||', 'min', 'max'].map((op, code) => [op, code]),
);

function totalStep(code: number, left: Column, right: Column, out: Column): void {
  const lm = left.mask;
  const rm = right.mask;
  const lv = left.values;
  const ls = left.status;
  const rv = right.values;
  const rs = right.status;
  const ov = out.values;
  const os = out.status;
  // `false && x` is false and `true || x` true whatever x holds (it is not evaluated); `x && false`
  // too, where x is only unknown.
  const logical = code === 9 || code === 10;
  const decided = code === 9 ? 0 : 1;
  for (let i = 0; i < ov.length; i++) {
    const sl = ls[i & lm];
    const sr = rs[i & rm];
    if (sl !== NUMBER || sr !== NUMBER) {
      if (
        logical &&
        ((sl === NUMBER && (lv[i & lm] === 0) === (decided === 0)) ||
          (sl === UNKNOWN && sr === NUMBER && (rv[i & rm] === 0) === (decided === 0)))
      ) {
        os[i] = NUMBER;
        ov[i] = decided;
        continue;
      }
      os[i] = sl > sr ? sl : sr;
      continue;
    }
    const a = lv[i & lm];
    const b = rv[i & rm];
    let v: number;
    switch (code) {
      case 0:
        v = a + b;
        break;
      case 1:
        v = a - b;
        break;
      case 2:
        v = a * b;
        break;
      case 3:
        v = a < b ? 1 : 0;
        break;
      case 4:
        v = a <= b ? 1 : 0;
        break;
      case 5:
        v = a > b ? 1 : 0;
        break;
      case 6:
        v = a >= b ? 1 : 0;
        break;
      case 7:
        v = a === b ? 1 : 0;
        break;
      case 8:
        v = a !== b ? 1 : 0;
        break;
      case 9:
        v = a !== 0 && b !== 0 ? 1 : 0;
        break;
      case 10:
        v = a !== 0 || b !== 0 ? 1 : 0;
        break;
      case 11:
        v = Math.min(a, b);
        break;
      default:
        v = Math.max(a, b);
    }
    os[i] = NUMBER;
    ov[i] = v;
  }
}

/**
 * Operators undefined for some numbers (a division by zero) or costly for some (bitwise operators
 * past 32 bits): the common case computed in the loop as symbolic-values' table computes it, the
 * rest through the table.
 */
const PARTIAL_OPERATORS: ReadonlyMap<string, number> = new Map(['/', '%', '&', '|', '^'].map((op, code) => [op, code]));

function partialStep(code: number, apply: BinaryOperator, left: Column, right: Column, out: Column): void {
  const lm = left.mask;
  const rm = right.mask;
  const lv = left.values;
  const ls = left.status;
  const rv = right.values;
  const rs = right.status;
  const ov = out.values;
  const os = out.status;
  for (let i = 0; i < ov.length; i++) {
    const sl = ls[i & lm];
    const sr = rs[i & rm];
    if (sl !== NUMBER || sr !== NUMBER) {
      os[i] = sl > sr ? sl : sr;
      continue;
    }
    const a = lv[i & lm];
    const b = rv[i & rm];
    let v: number | null;
    if (code <= 1) {
      if (b === 0) v = null;
      else if (code === 0) v = Number.isInteger(a) && Number.isInteger(b) ? Math.trunc(a / b) : a / b;
      else v = a % b;
    } else if ((a | 0) === a && (b | 0) === b) v = code === 2 ? a & b : code === 3 ? a | b : a ^ b;
    else v = apply(a, b);
    if (v === null) os[i] = UNDEFINED;
    else {
      os[i] = NUMBER;
      ov[i] = v;
    }
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
