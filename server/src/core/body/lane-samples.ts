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
/** Values kept per sampled unknown; their combinations are picked among (spreadCombinations). */
const SAMPLED_VALUES = 6;
/** Combinations of the sampled unknowns evaluated at least, where they have that many. */
const MIN_PICKS = 16;
/** A lane's run of a loop: the counters' combinations read together at most, and picks of the other unknowns at least. */
const ITERATION_ROOM = 64;
const ITERATION_PICKS = 4;

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
 * by the caller, who says so) to be at least a value, sampled from there up. `iterations`: the loop
 * counters run through all their values first (a lane's iterations are read together), the other
 * unknowns in the room left.
 */
export function laneSamples(
  syms: readonly Sym[],
  shape: Dim3,
  least: ReadonlyMap<number, number> | null = null,
  iterations = false,
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
  // Loop counters run through their values with every sampled combination: thinned, keeping each
  // list's ends, until their combinations fit. The other unknowns keep a few values each, and their
  // combinations are picked among all of them (spreadCombinations).
  for (const l of lists) if (!l.known && l.values.length > SAMPLED_VALUES) l.values = thinned(l.values, SAMPLED_VALUES);
  const counters = lists.filter((l) => l.known);
  const product = () => counters.reduce((p, l) => p * Math.max(1, l.values.length), 1);
  // The counters leave room for a few picks of the other unknowns: a verdict for every value is
  // refuted by those, and one pick alone would be every unknown at its smallest.
  const others = lists.reduce((p, l) => (l.known ? p : p * l.values.length), 1);
  // `iterations`: a lane's whole run of a loop is what is asked: the counters come first, with a
  // few picks of the rest (asked only of a finding already made, so a larger budget).
  const room = iterations ? ITERATION_ROOM : Math.max(1, Math.floor(MAX_SAMPLES / Math.min(others, MIN_PICKS)));
  while (product() > room) {
    const widest = counters.reduce((a, b) => (b.values.length > a.values.length ? b : a));
    if (widest.values.length <= 3) break;
    widest.values = thinned(widest.values, 2 + Math.floor((widest.values.length - 2) / 2));
  }
  const combos = spreadCombinations(lists, room, iterations ? Math.min(others, ITERATION_PICKS) : 1);
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

/**
 * `values` cut to `count`: the first two stay (the small values, 1 and 3, that a verdict for every
 * value must meet), and the rest are kept evenly, with its last.
 */
function thinned(values: number[], count: number): number[] {
  const [a, b, ...rest] = values;
  const keep = Math.max(1, count - 2);
  const picked: number[] = [];
  for (let i = 0; i < keep; i++)
    picked.push(rest[keep === 1 ? rest.length - 1 : Math.round((i * (rest.length - 1)) / (keep - 1))]);
  return [...new Set([a, b, ...picked])];
}

/**
 * The combinations of the lists' values: MAX_SAMPLES of them at most, or `room` counter
 * combinations times `picksAtLeast` picks where the caller asks for more. The loop counters that run
 * through known values take each of them (their first `room` combinations) with every sampled
 * combination: a lane's iterations are read together. Where the sampled unknowns' combinations are
 * too many, the first (each at its smallest), the last, and each unknown small with the others at
 * their last are taken, and the rest picked by a fixed hash of each unknown's place. The first ones
 * alone would hold every unknown but the last at its smallest value, and a verdict for every value
 * is not checked by one corner of the space.
 */
function spreadCombinations(
  lists: ReadonlyArray<{ f: { id: number }; values: number[]; known: boolean }>,
  room: number,
  picksAtLeast: number,
): Array<Map<number, number>> {
  const counters = lists.filter((l) => l.known);
  const sampled = lists.filter((l) => !l.known);
  const counterCombos: Array<Array<[number, number]>> = [];
  const walk = (i: number, acc: Array<[number, number]>): void => {
    if (counterCombos.length >= room) return;
    if (i === counters.length) {
      counterCombos.push([...acc]);
      return;
    }
    for (const v of counters[i].values) walk(i + 1, [...acc, [counters[i].f.id, v]]);
  };
  walk(0, []);
  const total = sampled.reduce((p, l) => p * l.values.length, 1);
  const picks = Math.max(picksAtLeast, Math.floor(MAX_SAMPLES / counterCombos.length));
  const chosen: number[][] = [];
  if (total <= picks) {
    for (let k = 0; k < total; k++) {
      let index = k;
      chosen.push(
        sampled.map((l) => {
          const d = index % l.values.length;
          index = Math.floor(index / l.values.length);
          return d;
        }),
      );
    }
  } else {
    const seen = new Set<string>();
    const add = (digits: number[]): void => {
      const key = digits.join(',');
      if (chosen.length >= picks || seen.has(key)) return;
      seen.add(key);
      chosen.push(digits);
    };
    const last = sampled.map((l) => l.values.length - 1);
    add(sampled.map(() => 0));
    add(last);
    // Each unknown at its small values with the others large: a size of 1 (one head, one column)
    // is where a pattern most often folds into a broadcast, and only with the rest large does it show.
    for (const d of [0, 1])
      for (let i = 0; i < sampled.length; i++) add(last.map((x, j) => (j === i ? Math.min(d, x) : x)));
    for (let k = 2; chosen.length < picks && k < picks * 4; k++)
      add(sampled.map((l, i) => mix(k, i) % l.values.length));
  }
  const combos: Array<Map<number, number>> = [];
  for (const digits of chosen)
    for (const c of counterCombos)
      combos.push(new Map([...sampled.map((l, i): [number, number] => [l.f.id, l.values[digits[i]]]), ...c]));
  return combos;
}

/** A fixed hash of a pick and an unknown's place (no state: the same samples every run). */
function mix(k: number, i: number): number {
  let h = Math.imul(k + 1, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 13;
  return h >>> 0;
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
