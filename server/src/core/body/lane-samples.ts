/**
 * What the memory and barrier rules share: the samples of the unknowns a value reads (a loop's
 * counter runs through the values it takes; anything else is sampled, and a verdict must then hold
 * for every sample), the block shapes to check, and a value written back as code for a message.
 */
import type { Dim3 } from '../types';
import {
  blockEvaluator,
  freeSamples,
  simulateLoopCounter,
  threadValue,
  type BlockSample,
  type EvalResult,
} from '../uniformity/lane-evaluation';
import { symFacts, type Sym } from '../uniformity/symbolic-values';
import { formatDim } from './branch-verdicts';

const GRID: Dim3 = { x: 8, y: 8, z: 1 };
/** Combinations of samples evaluated per value and block shape at most. */
const MAX_SAMPLES = 48;

/** The shapes a rule checks: the launches' when known; else a few common ones, and a verdict must hold for all. */
export interface RuleShapes {
  shapes: Dim3[];
  known: boolean;
}

/**
 * When no launch gives a block shape: blocks of 64 to 1024 threads, or 2-D ones where threadIdx.y
 * is read, 3-D ones where threadIdx.z is (a kernel indexes by a dimension it is launched with).
 */
export function candidateShapes(multiDimensional: boolean, threeDimensional = false): Dim3[] {
  if (threeDimensional)
    return [
      { x: 32, y: 4, z: 2 },
      { x: 32, y: 2, z: 4 },
      { x: 16, y: 4, z: 4 },
    ];
  return multiDimensional
    ? [
        { x: 32, y: 8, z: 1 },
        { x: 16, y: 16, z: 1 },
        { x: 32, y: 32, z: 1 },
      ]
    : [64, 128, 256, 512, 1024].map((x) => ({ x, y: 1, z: 1 }));
}

export function describeShapes(s: RuleShapes): string {
  const list = s.shapes.map(formatDim).join(', ');
  return s.known
    ? `for blocks of ${list} threads (the launches')`
    : `for any block of ${list} threads (no launch with a known block size in view)`;
}

/** One evaluation of a block: where the unknowns stand. */
export interface LaneSample {
  block: BlockSample;
  /** The unknowns that are not loop counters with known steps, and their values here. */
  sampled: Array<{ name: string; value: number }>;
}

/**
 * The samples for values reading `syms`, for blocks of `shape`. `least`: unknowns known (or assumed,
 * by the caller, who says so) to be at least a value, sampled from there up.
 */
export function laneSamples(
  syms: readonly Sym[],
  shape: Dim3,
  least: ReadonlyMap<number, number> | null = null,
): LaneSample[] {
  const frees = new Map<number, Extract<Sym, { op: 'free' }>>();
  let blockIdx = false;
  for (const s of syms) {
    const f = symFacts(s);
    if (f.blockIdx) blockIdx = true;
    for (const x of f.frees) frees.set(x.id, x);
  }
  const base = {
    threadIdx: { x: 0, y: 0, z: 0 },
    blockIdx: { x: 0, y: 0, z: 0 },
    blockDim: shape,
    gridDim: GRID,
    warpKey: 0,
  };
  const lists = [...frees.values()].map((f) => {
    const values = freeSamples(f, base);
    const from = least?.get(f.id);
    return {
      f,
      // From the least value up: it, the next (odd or even as it is not), and the samples above.
      values: from === undefined ? values : [...new Set([from, from + 1, ...values.filter((v) => v > from + 1)])],
      known: f.loop !== null && simulateLoopCounter(f, base) !== null,
    };
  });
  // Thinned, keeping each list's ends, until the combinations fit.
  const product = () => lists.reduce((p, l) => p * Math.max(1, l.values.length), 1);
  while (product() > MAX_SAMPLES) {
    const widest = lists.reduce((a, b) => (b.values.length > a.values.length ? b : a));
    if (widest.values.length <= 3) break;
    // The first two samples stay (the small values, 1 and 3, that a verdict for every value must
    // meet), and the rest are halved evenly, keeping its last.
    const [a, b, ...rest] = widest.values;
    const keep = Math.max(1, Math.floor(rest.length / 2));
    const picked: number[] = [];
    for (let i = 0; i < keep; i++)
      picked.push(rest[keep === 1 ? rest.length - 1 : Math.round((i * (rest.length - 1)) / (keep - 1))]);
    widest.values = [...new Set([a, b, ...picked])];
  }
  const combos: Array<Map<number, number>> = [];
  const pick = (i: number, acc: Map<number, number>): void => {
    if (combos.length >= MAX_SAMPLES) return;
    if (i === lists.length) {
      combos.push(new Map(acc));
      return;
    }
    for (const v of lists[i].values) {
      acc.set(lists[i].f.id, v);
      pick(i + 1, acc);
    }
  };
  pick(0, new Map());
  const blocks: Dim3[] = blockIdx
    ? [
        { x: 0, y: 0, z: 0 },
        { x: 1, y: 1, z: 0 },
      ]
    : [{ x: 0, y: 0, z: 0 }];
  // One function per block: an evaluator keeps what a sample with the same warp keys gave before.
  const warpKeys = blocks.map((b) => (w: number) => w + 1000 * (b.x + 7 * b.y));
  const out: LaneSample[] = [];
  for (const bindings of combos)
    for (let k = 0; k < blocks.length; k++)
      out.push({
        block: { blockIdx: blocks[k], gridDim: GRID, bindings, warpKey: warpKeys[k] },
        sampled: lists.filter((l) => !l.known).map((l) => ({ name: l.f.name, value: bindings.get(l.f.id)! })),
      });
  return out;
}

/** Each thread's value of `sym` for a sample (a function per shape, compiled once). */
export function threadValues(sym: Sym, shape: Dim3): (sample: LaneSample) => (t: number) => EvalResult {
  const evaluate = blockEvaluator(sym, shape);
  return (sample) => {
    const column = evaluate(sample.block);
    return (t) => threadValue(column, t);
  };
}

/** The conjunction of conditions (null: none). */
export function conjunction(guards: readonly Sym[]): Sym | null {
  return guards.length === 0
    ? null
    : guards.reduce((a, b) => ({ op: 'binary', operator: '&&', left: a, right: b }) as Sym);
}

/** A symbolic value written as code, for messages: `threadIdx.x < 16`, `i < n`. */
export function symText(sym: Sym, depth = 0): string {
  if (depth > 12) return '…';
  switch (sym.op) {
    case 'const':
      return String(sym.value);
    case 'threadIdx':
    case 'blockIdx':
    case 'blockDim':
    case 'gridDim':
      return `${sym.op}.${sym.dim}`;
    case 'laneId':
      return 'lane';
    case 'free':
      return sym.name;
    case 'opaque':
      return sym.what;
    case 'unary':
      return `${sym.operator}${wrap(sym.arg, depth)}`;
    case 'select':
      return `${wrap(sym.cond, depth)} ? ${wrap(sym.then, depth)} : ${wrap(sym.else, depth)}`;
    case 'binary':
      if (sym.operator === 'min' || sym.operator === 'max')
        return `${sym.operator}(${symText(sym.left, depth + 1)}, ${symText(sym.right, depth + 1)})`;
      return `${wrap(sym.left, depth)} ${sym.operator} ${wrap(sym.right, depth)}`;
  }
}

function wrap(sym: Sym, depth: number): string {
  const text = symText(sym, depth + 1);
  return sym.op === 'binary' && sym.operator !== 'min' && sym.operator !== 'max' ? `(${text})` : text;
}

/**
 * A lane's byte offset from its element offset, or null where it cannot be an address: past the
 * 2^47 bytes of a GPU's virtual address space (an unknown sampled into a shift or a product), where
 * doubles no longer step by one and a walk over its bytes would never end.
 */
export function byteOffset(elements: number, unit: number, within: number): number | null {
  const start = elements * unit + within;
  return Number.isSafeInteger(start) && Math.abs(start) <= MAX_ADDRESS ? start : null;
}

const MAX_ADDRESS = 2 ** 47;
