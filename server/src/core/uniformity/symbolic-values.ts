/**
 * The symbolic values of the thread-dependence walk: each value is a small expression (`Sym`) over
 * `threadIdx`, `blockIdx`, `blockDim`, `gridDim`, the lane id, constants, uniform values we cannot
 * compute (`free`: parameters, loads at uniform addresses, loop counters) and opaque values with a
 * known kind (`opaque`: atomics' results, loads at lane-varying addresses, shuffles). Keeping the
 * shape, not just a flag, is what lets the divergence analysis tell `threadIdx.x / 32 == 0`
 * (warp-uniform) from `threadIdx.x % 32 == 0` (divergent).
 */
import type { Span } from '../types';
import { counter, memoByText } from '../incremental/kept-tables';
import { hiddenMemo } from '../incremental/engine-seams';

export type Axis = 'x' | 'y' | 'z';
export type DependenceKind = 'uniform' | 'warpUniform' | 'laneVarying' | 'globalIndex';

export interface ValueOrigin {
  /** The statement or expression the thread dependence came from: `int t = threadIdx.x;`. */
  text: string;
  span: Span;
}

export interface LoopInfo {
  /** `counter`: a uniform loop variable (`s` in `for (s = blockDim.x / 2; s > 0; s >>= 1)`); `offset`: `k * step` added to a thread-dependent variable each iteration. */
  role: 'counter' | 'offset';
  init: Sym;
  /** The loop condition in terms of this variable, when it depends on nothing else lane-varying. */
  cond: Sym | null;
  update: { operator: '+' | '-' | '*' | '/' | '<<' | '>>'; amount: Sym } | null;
}

export type Sym =
  | { op: 'const'; value: number }
  | { op: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim'; dim: Axis }
  | { op: 'laneId' }
  /**
   * A uniform value the source does not let us compute. `fixed`: set by the compiler or the launch
   * (a template parameter, a macro, `sizeof`, a function of `blockDim`), the same in every block and
   * every run with that configuration; otherwise data the kernel reads (a parameter, a load).
   * `perGrid`: a kernel's parameter or a member of one, the same in every block of a launch (unset
   * where not known so: a load, a join).
   */
  | { op: 'free'; id: number; name: string; loop: LoopInfo | null; fixed?: boolean; perGrid?: boolean }
  /** A value of known kind but unknown shape: `atomicAdd(...)`'s result, `a[threadIdx.x]`, `__ballot_sync(...)`. */
  | { op: 'opaque'; id: number; kind: 'warpUniform' | 'laneVarying'; what: string }
  | { op: 'binary'; operator: string; left: Sym; right: Sym }
  | { op: 'unary'; operator: string; arg: Sym }
  | { op: 'select'; cond: Sym; then: Sym; else: Sym };

export interface ThreadValue {
  sym: Sym;
  /** Where the thread dependence came from; null for uniform values. */
  origin: ValueOrigin | null;
}

/** The affine reading of a value: `a*threadIdx.x + b*threadIdx.y + ... (+ block offset)`, then `/ 32`-like or `% 32`-like. */
export interface AffineShape {
  /** Coefficients of threadIdx.{x,y,z}; null when a coefficient is not a known number (e.g. `blockDim.x`). */
  coefficients: { x: number | null; y: number | null; z: number | null };
  /** A `blockIdx * blockDim`-like term is added: a global index. */
  hasBlockOffset: boolean;
  /** `warp`: divided or shifted by a multiple of 32; `lane`: `% 32` or `& 31`-like; `none`: plain affine. */
  transform: 'none' | 'warp' | 'lane';
}

/** Ids of free and opaque values: unique in the process, so values of different analyses never alias. */
const nextId = counter('symbolic value ids');
export const ZERO: Sym = { op: 'const', value: 0 };

export function constant(value: number): Sym {
  return { op: 'const', value };
}

export function freeSym(name: string, loop: LoopInfo | null = null): Sym {
  return { op: 'free', id: nextId(), name, loop };
}

/** An unknown fixed by the compiler or the launch configuration (see the `free` Sym). */
export function fixedSym(name: string): Sym {
  return { op: 'free', id: nextId(), name, loop: null, fixed: true };
}

/** Whether a uniform value is fixed by the compiler or the launch: built from constants, `blockDim`, `gridDim` and fixed unknowns only. */
export function isFixedValue(sym: Sym): boolean {
  const f = symFacts(sym);
  return !isThreadDependent(sym) && !f.blockIdx && f.frees.every((x) => x.fixed === true);
}

export function opaqueSym(kind: 'warpUniform' | 'laneVarying', what: string): Sym {
  return { op: 'opaque', id: nextId(), kind, what };
}

export function binary(operator: string, left: Sym, right: Sym): Sym {
  if (left.op === 'const' && right.op === 'const') {
    const v = applyBinary(operator, left.value, right.value);
    if (v !== null) return constant(v);
  }
  return { op: 'binary', operator, left, right };
}

export interface SymFacts {
  readonly threadAxes: ReadonlySet<Axis>;
  readonly laneId: boolean;
  readonly blockIdx: boolean;
  readonly opaqueLane: boolean;
  readonly opaqueWarp: boolean;
  /** Distinct by id, in depth-first order of first appearance. */
  readonly frees: ReadonlyArray<Extract<Sym, { op: 'free' }>>;
}

const NO_FACTS: SymFacts = {
  threadAxes: new Set(),
  laneId: false,
  blockIdx: false,
  opaqueLane: false,
  opaqueWarp: false,
  frees: [],
};

/** The facts of the leaves that mention no unknown, shared: most of a walk's values are such leaves or hold one. */
const THREAD_FACTS: Record<Axis, SymFacts> = {
  x: { ...NO_FACTS, threadAxes: new Set(['x']) },
  y: { ...NO_FACTS, threadAxes: new Set(['y']) },
  z: { ...NO_FACTS, threadAxes: new Set(['z']) },
};
const LANE_FACTS: SymFacts = { ...NO_FACTS, laneId: true };
const BLOCK_FACTS: SymFacts = { ...NO_FACTS, blockIdx: true };
const OPAQUE_LANE_FACTS: SymFacts = { ...NO_FACTS, opaqueLane: true };
const OPAQUE_WARP_FACTS: SymFacts = { ...NO_FACTS, opaqueWarp: true };

/**
 * Syms are immutable (only a free's loop info is filled in later, and facts
 * do not look at it), so each inner node's facts are computed once, from its
 * children's: the walk and the classification ask for them again and again.
 * They are kept on the node, out of sight (not enumerable: JSON, spreads and
 * deep equality do not see them), which costs less than a WeakMap's look-ups
 * and its work in each collection. A leaf's facts cost less than a look-up:
 * they are not kept.
 */
const innerFacts = hiddenMemo<Sym, SymFacts>('facts');

export function symFacts(sym: Sym): SymFacts {
  switch (sym.op) {
    case 'threadIdx':
      return THREAD_FACTS[sym.dim];
    case 'laneId':
      return LANE_FACTS;
    case 'blockIdx':
      return BLOCK_FACTS;
    case 'opaque':
      return sym.kind === 'laneVarying' ? OPAQUE_LANE_FACTS : OPAQUE_WARP_FACTS;
    case 'free':
      return { ...NO_FACTS, frees: [sym] };
    case 'unary':
      return symFacts(sym.arg);
    case 'binary':
    case 'select': {
      return (
        innerFacts.get(sym) ??
        innerFacts.set(
          sym,
          sym.op === 'binary'
            ? mergeFacts([symFacts(sym.left), symFacts(sym.right)])
            : mergeFacts([symFacts(sym.cond), symFacts(sym.then), symFacts(sym.else)]),
        )
      );
    }
    default:
      return NO_FACTS;
  }
}

function mergeFacts(all: SymFacts[]): SymFacts {
  // Most nodes combine one thread-dependent operand with constants: their facts are that operand's
  // (found without building the set of parts).
  const first = all.find((p) => p !== NO_FACTS);
  if (!first || all.every((p) => p === first || p === NO_FACTS)) return first ?? NO_FACTS;
  const parts = [...new Set(all)].filter((p) => p !== NO_FACTS);
  // Facts are never changed: where one part alone has axes (or unknowns), the merge shares its set (or list).
  const withAxes = parts.filter((p) => p.threadAxes.size > 0);
  const withFrees = parts.filter((p) => p.frees.length > 0);
  return {
    threadAxes:
      withAxes.length <= 1 ? (withAxes[0] ?? NO_FACTS).threadAxes : new Set(withAxes.flatMap((p) => [...p.threadAxes])),
    laneId: parts.some((p) => p.laneId),
    blockIdx: parts.some((p) => p.blockIdx),
    opaqueLane: parts.some((p) => p.opaqueLane),
    opaqueWarp: parts.some((p) => p.opaqueWarp),
    frees: withFrees.length <= 1 ? (withFrees[0] ?? NO_FACTS).frees : distinctFrees(withFrees),
  };
}

/** The parts' unknowns, each once, in order of first appearance (each part's are distinct already). */
function distinctFrees(parts: SymFacts[]): SymFacts['frees'] {
  const seen = new Set<number>();
  const frees: Array<Extract<Sym, { op: 'free' }>> = [];
  for (const p of parts) {
    for (const f of p.frees) {
      if (seen.has(f.id)) continue;
      seen.add(f.id);
      frees.push(f);
    }
  }
  return frees;
}

export function isThreadDependent(sym: Sym): boolean {
  const f = symFacts(sym);
  return f.threadAxes.size > 0 || f.laneId || f.opaqueLane || f.opaqueWarp;
}

/** A readable key: equal keys mean equal values. */
export function symKey(sym: Sym): string {
  switch (sym.op) {
    case 'const':
      return String(sym.value);
    case 'threadIdx':
    case 'blockIdx':
    case 'blockDim':
    case 'gridDim':
      return `${sym.op}.${sym.dim}`;
    case 'laneId':
      return '%laneid';
    case 'free':
      return `${sym.name}#${sym.id}`;
    case 'opaque':
      return `${sym.what}#${sym.id}`;
    case 'binary':
      return `(${symKey(sym.left)} ${sym.operator} ${symKey(sym.right)})`;
    case 'unary':
      return `${sym.operator}${symKey(sym.arg)}`;
    case 'select':
      return `(${symKey(sym.cond)} ? ${symKey(sym.then)} : ${symKey(sym.else)})`;
  }
}

/**
 * A key for everything evaluation can tell of a Sym: Syms with equal keys
 * give every thread the same values under the same samples. Unlike `symKey`,
 * unknowns are numbered in order of first appearance (their ids are arbitrary)
 * and carry their names and loop info (which decide their samples), so that
 * the same condition in two kernels has the same key.
 */
export function structuralKey(sym: Sym): string {
  const numbers = new Map<number, number>();
  const warps = new Map<number, number>();
  const key = (s: Sym): string => {
    switch (s.op) {
      case 'const':
        return Object.is(s.value, -0) ? '-0' : String(s.value);
      case 'threadIdx':
      case 'blockIdx':
      case 'blockDim':
      case 'gridDim':
        return `${s.op}.${s.dim}`;
      case 'laneId':
        return '%laneid';
      case 'free': {
        const known = numbers.get(s.id);
        if (known !== undefined) return `$${known}`;
        const n = numbers.size;
        numbers.set(s.id, n);
        return `$${n}${s.fixed ? '!' : ''}${s.perGrid ? '^' : ''}${JSON.stringify(s.name)}${s.loop ? loopKey(s.loop) : ''}`;
      }
      case 'opaque': {
        // a warp-uniform value is a hash of its number (see canonicalWarpValues); a lane-varying one is unknown whatever its id
        if (s.kind === 'laneVarying') return '%data';
        const known = warps.get(s.id);
        if (known !== undefined) return `%warp${known}`;
        warps.set(s.id, warps.size + 1);
        return `%warp${warps.size}`;
      }
      case 'binary':
        return `(${key(s.left)} ${quoted(s.operator)} ${key(s.right)})`;
      case 'unary':
        return `(${quoted(s.operator)} ${key(s.arg)})`;
      case 'select':
        return `(${key(s.cond)} ? ${key(s.then)} : ${key(s.else)})`;
    }
  };
  const loopKey = (loop: LoopInfo): string =>
    `{${loop.role} ${key(loop.init)} ${loop.cond ? key(loop.cond) : '-'} ${loop.update ? `${loop.update.operator} ${key(loop.update.amount)}` : '-'}}`;
  return key(sym);
}

/**
 * `sym` with its warp-uniform opaque values numbered 1, 2, ... in order of first appearance (the
 * order structuralKey numbers them in), so that their sampled values, which follow the number, are
 * the same in every analysis whatever ids the walk gave them.
 */
export function canonicalWarpValues(sym: Sym, numbers: Map<number, number> = new Map()): Sym {
  const walk = (s: Sym): Sym => {
    switch (s.op) {
      case 'opaque': {
        if (s.kind !== 'warpUniform') return s;
        let n = numbers.get(s.id);
        if (n === undefined) {
          n = numbers.size + 1;
          numbers.set(s.id, n);
        }
        return n === s.id ? s : { ...s, id: n };
      }
      case 'binary': {
        const left = walk(s.left);
        const right = walk(s.right);
        return left === s.left && right === s.right ? s : { ...s, left, right };
      }
      case 'unary': {
        const arg = walk(s.arg);
        return arg === s.arg ? s : { ...s, arg };
      }
      case 'select': {
        const cond = walk(s.cond);
        const then = walk(s.then);
        const otherwise = walk(s.else);
        return cond === s.cond && then === s.then && otherwise === s.else ? s : { ...s, cond, then, else: otherwise };
      }
      default:
        return s;
    }
  };
  return walk(sym);
}

/** JSON.stringify of an operator, written out once per operator (every binary node of every key writes one). */
const quoted: (operator: string) => string = memoByText(
  'quoted operators',
  (operator: string) => operator,
  (operator: string) => JSON.stringify(operator),
);

// Arithmetic on the values of a lane, as the device computes it (constant folding uses it too).

export function applyUnary(operator: string, a: number): number {
  switch (operator) {
    case '-':
      return -a;
    case '!':
      return a === 0 ? 1 : 0;
    case '~':
      return ~a;
    default:
      return LANE_FUNCTIONS.get(operator)?.(a) ?? a;
  }
}

/** The bits of an integer value as the device holds it in `width` bits (two's complement); null when not an integer. */
function bitsOf(a: number, width: 32 | 64): bigint | null {
  return Number.isInteger(a) ? BigInt.asUintN(width, BigInt(a)) : null;
}

function countOnes(bits: bigint): number {
  let n = 0;
  for (let b = bits; b > 0n; b >>= 1n) n += Number(b & 1n);
  return n;
}

/** Leading zeros of `bits` in `width` bits (`__clz(0)` is 32). */
function leadingZeros(bits: bigint, width: number): number {
  let n = width;
  for (let b = bits; b > 0n; b >>= 1n) n--;
  return n;
}

/** The 1-based position of the lowest set bit, 0 when none (`__ffs`). */
function firstSet(bits: bigint): number {
  if (bits === 0n) return 0;
  let n = 1;
  for (let b = bits; (b & 1n) === 0n; b >>= 1n) n++;
  return n;
}

function reversed32(bits: bigint): number {
  let r = 0n;
  for (let i = 0n; i < 32n; i++) r |= ((bits >> i) & 1n) << (31n - i);
  return Number(r);
}

/**
 * CUDA's integer functions of one value, as the device computes them (see intrinsics.ts,
 * 'lane-function'); NaN for a value that is not an integer, which no comparison holds for.
 */
const LANE_FUNCTIONS: ReadonlyMap<string, (a: number) => number> = new Map<string, (a: number) => number>([
  ['__clz', (a) => (Number.isInteger(a) ? Math.clz32(a) : NaN)],
  ['__clzll', (a) => withBits(a, 64, (b) => leadingZeros(b, 64))],
  ['__popc', (a) => withBits(a, 32, countOnes)],
  ['__popcll', (a) => withBits(a, 64, countOnes)],
  ['__ffs', (a) => withBits(a, 32, firstSet)],
  ['__ffsll', (a) => withBits(a, 64, firstSet)],
  ['__brev', (a) => withBits(a, 32, reversed32)],
  ['abs', Math.abs],
  ['labs', Math.abs],
  ['llabs', Math.abs],
]);

function withBits(a: number, width: 32 | 64, f: (bits: bigint) => number): number {
  const bits = bitsOf(a, width);
  return bits === null ? NaN : f(bits);
}

/** Whether `operator` is one of the functions of one value `applyUnary` computes (`__clz`, `abs`). */
export function isLaneFunction(operator: string): boolean {
  return LANE_FUNCTIONS.has(operator);
}

export type BinaryOperator = (a: number, b: number) => number | null;

const unknownOperator: BinaryOperator = () => null;

/**
 * `&`, `|`, `^` on 64-bit integers; done on 32 bits when both operands fit,
 * where the result is the same and BigInt's cost is not paid. Undefined for an
 * infinite or NaN operand (`x & (1e300 * 1e300)`), which BigInt cannot take.
 */
function bitwise(int32: (a: number, b: number) => number, int64: (a: bigint, b: bigint) => bigint): BinaryOperator {
  return (a, b) => {
    if ((a | 0) === a && (b | 0) === b) return int32(a, b);
    if (!Number.isFinite(a) || !Number.isFinite(b)) return null;
    return Number(BigInt.asIntN(64, int64(BigInt(Math.trunc(a)), BigInt(Math.trunc(b)))));
  };
}

/** 2 ** 0 to 2 ** 62, exact: a shift is evaluated for every lane of every sample. */
const POWERS_OF_TWO = Array.from({ length: 63 }, (_, k) => 2 ** k);

function pow2(b: number): number {
  return (b | 0) === b ? POWERS_OF_TWO[b] : 2 ** b;
}

const BINARY_OPERATORS: ReadonlyMap<string, BinaryOperator> = new Map([
  ['+', (a, b) => a + b],
  ['-', (a, b) => a - b],
  ['*', (a, b) => a * b],
  ['/', (a, b) => (b === 0 ? null : Number.isInteger(a) && Number.isInteger(b) ? Math.trunc(a / b) : a / b)],
  ['%', (a, b) => (b === 0 ? null : a % b)],
  ['<<', (a, b) => (b < 0 || b > 62 ? null : a * pow2(b))],
  ['>>', (a, b) => (b < 0 || b > 62 ? null : Math.floor(a / pow2(b)))],
  [
    '&',
    bitwise(
      (a, b) => a & b,
      (a, b) => a & b,
    ),
  ],
  [
    '|',
    bitwise(
      (a, b) => a | b,
      (a, b) => a | b,
    ),
  ],
  [
    '^',
    bitwise(
      (a, b) => a ^ b,
      (a, b) => a ^ b,
    ),
  ],
  ['<', (a, b) => (a < b ? 1 : 0)],
  ['<=', (a, b) => (a <= b ? 1 : 0)],
  ['>', (a, b) => (a > b ? 1 : 0)],
  ['>=', (a, b) => (a >= b ? 1 : 0)],
  ['==', (a, b) => (a === b ? 1 : 0)],
  ['!=', (a, b) => (a !== b ? 1 : 0)],
  ['&&', (a, b) => (a !== 0 && b !== 0 ? 1 : 0)],
  ['||', (a, b) => (a !== 0 || b !== 0 ? 1 : 0)],
  ['min', (a, b) => Math.min(a, b)],
  ['max', (a, b) => Math.max(a, b)],
]);

export function applyBinary(operator: string, a: number, b: number): number | null {
  return (BINARY_OPERATORS.get(operator) ?? unknownOperator)(a, b);
}

/** The device's binary operator `operator` on two lane values (null: not a number, or not an operator we compute). */
export function binaryOperator(operator: string): BinaryOperator {
  return BINARY_OPERATORS.get(operator) ?? unknownOperator;
}

/**
 * Whether every block of a launch computes the same value: it reads no `blockIdx` and no per-lane
 * or per-warp data, and each unknown in it is fixed by the compiler or the launch, a kernel's
 * parameter or a member of one (`perGrid`), or the counter of a loop
 * whose start, bound and step are such values too. An address of that kind is one every block
 * reads (a parameter vector: `gamma[4 * threadIdx.x]`; see body/global-access.ts).
 */
export function sameInEveryBlock(sym: Sym, seen: Set<number> = new Set()): boolean {
  const facts = symFacts(sym);
  if (facts.blockIdx || facts.opaqueLane || facts.opaqueWarp) return false;
  for (const f of facts.frees) {
    if (seen.has(f.id) || f.fixed || f.perGrid) continue;
    if (!f.loop) return false;
    seen.add(f.id);
    const { init, cond, update } = f.loop;
    if (!sameInEveryBlock(init, seen) || (cond && !sameInEveryBlock(cond, seen))) return false;
    if (update && !sameInEveryBlock(update.amount, seen)) return false;
  }
  return true;
}
