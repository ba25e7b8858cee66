/**
 * `bank-conflict`: a shared-memory access whose lanes fall on the same 4-byte bank at different
 * words. Shared memory has 32 banks of 4-byte words; a warp's request is served in one pass per
 * distinct word on its busiest bank (lanes on one word share it: a broadcast). Accesses of 8 and
 * 16 bytes are served a half and a quarter warp at a time. The element offset is evaluated lane by
 * lane for the block shapes in use and every sample of the unknowns (a loop counter's known steps
 * included); the verdict must hold for every sample of the run-time values, and a loop's run is
 * conflicted where one of its steps is. For an array of two or more dimensions, the row length
 * nearest the declared one that removes the conflict is found the same way.
 */
import type { Dim3 } from '../types';
import { INVALID, LANE_UNKNOWN, simulateLoopCounter } from '../uniformity/lane-evaluation';
import type { AccessEvent } from '../uniformity/memory-events';
import { binary, constant, symFacts, type Sym } from '../uniformity/symbolic-values';
import { byteOffset, conjunction, laneSamples, threadValues, type LaneSample, type RuleShapes } from './lane-samples';

export interface BankVerdict {
  shape: Dim3;
  /** The most passes a request needs (n-way), and the fewest over the samples (a loop's steps). */
  ways: number;
  fewest: number;
  /**
   * Whether the fewest is a bound: every unknown the access reads is a loop counter run through its
   * values. Else it is only the least some sample of the run-time values gave (the lanes a guard's
   * edge leaves depend on where the edge falls), and only the most is shown, as a case that occurs.
   */
  exact: boolean;
  /**
   * The passes past the first, per pass group (a warp, or its half or quarter for 8- and 16-byte
   * accesses), summed over the block and divided by its warps: what one execution costs each warp of
   * the block on average (a conflict only the block's first warp makes is paid once among them all).
   * The most over the samples.
   */
  extraPerWarp: number;
  /** Rows of `from` elements made `to` long remove the conflict (arrays of two or more dimensions). */
  padding: { from: number; to: number } | null;
}

const BANKS = 32;

/** `use`: the kernel's accesses to the same array, for the padding advice. */
export function bankVerdict(ev: AccessEvent, shapes: RuleShapes, use: ArrayUse | null = null): BankVerdict | null {
  let chosen: Omit<BankVerdict, 'padding'> | null = null;
  for (const shape of shapes.shapes) {
    const v = shapeVerdict(ev, shape, ev.offset);
    // No sample ran two lanes of a request here (a guard's edge the samples missed): no evidence
    // either way for this shape.
    if (v === NO_REQUEST) continue;
    if (shapes.known) {
      if (v && (!chosen || v.ways > chosen.ways)) chosen = v;
    } else {
      if (!v) return null;
      if (!chosen || v.ways < chosen.ways) chosen = v;
    }
  }
  if (!chosen) return null;
  return { ...chosen, padding: paddingFor(ev, shapes, use) };
}

const NO_REQUEST = 'no-request';

function shapeVerdict(
  ev: AccessEvent,
  shape: Dim3,
  offset: Sym,
): Omit<BankVerdict, 'padding'> | null | typeof NO_REQUEST {
  const ways = waysOver(ev, shape, offset);
  if (ways === NO_REQUEST) return NO_REQUEST;
  if (!ways || ways.conflicted <= 1) return null;
  return { shape, ways: ways.most, fewest: ways.fewest, exact: ways.exact, extraPerWarp: ways.extraPerWarp };
}

/**
 * The n-way of each sample's worst request: the most and the fewest over the samples (null: a lane's
 * address is data). With `above`, it may stop at the first request worse than that: padding asks only
 * whether a layout is free of conflicts.
 */
function waysOver(
  ev: AccessEvent,
  shape: Dim3,
  offset: Sym,
  above = Infinity,
):
  | { most: number; fewest: number; exact: boolean; extraPerWarp: number; conflicted: number }
  | null
  | typeof NO_REQUEST {
  // An address that never reads per-lane data cannot turn out unknown in a later sample.
  const stops = above < Infinity && !symFacts(offset).opaqueLane;
  const size = shape.x * shape.y * shape.z;
  const guard = conjunction(ev.guards);
  const pitch = ev.offsetUnit ?? ev.elementBytes;
  const bytes = ev.member?.bytes ?? ev.elementBytes;
  const within = ev.member?.offset ?? 0;
  const address = threadValues(offset, shape);
  const here = guard ? threadValues(guard, shape) : null;
  const samples = laneSamples(guard ? [offset, guard] : [offset], shape);
  const lanesPerPass = bytes <= 4 ? 32 : Math.max(1, Math.floor(128 / bytes));
  let most = 0;
  let fewest = Infinity;
  let exact = true;
  let extraPerWarp = 0;
  // Per run of the loops (one value of each unknown that is not a counter), its worst iteration.
  const runs = new Map<string, number>();
  const warps = Math.max(1, Math.ceil(size / 32));
  // The words one pass touches, reused from pass to pass; and per bank, how many distinct words fall on it.
  const words: number[] = [];
  const perBank = new Int32Array(BANKS);
  for (const sample of samples) {
    const at = address(sample);
    const active = here ? here(sample) : null;
    let worst = 0;
    let extra = 0;
    for (let from = 0; from < size; from += lanesPerPass) {
      // Lanes of one pass never span two warps (passes divide a warp).
      words.length = 0;
      let lanes = 0;
      for (let t = from; t < Math.min(size, from + lanesPerPass); t++) {
        if (active && active(t) === 0) continue;
        const a = at(t);
        if (a === INVALID) continue;
        if (a === LANE_UNKNOWN) return null;
        const start = byteOffset(a, pitch, within);
        if (start === null) return null;
        lanes++;
        for (let w = Math.floor(start / 4); w <= Math.floor((start + bytes - 1) / 4); w++) words.push(w);
      }
      if (lanes < 2) continue;
      const passes = busiestBank(words, perBank);
      worst = Math.max(worst, passes);
      extra += passes - 1;
      if (stops && worst > above)
        return { most: worst, fewest: worst, exact: false, extraPerWarp: extra / warps, conflicted: worst };
    }
    if (worst === 0) continue;
    if (sample.sampled.length > 0) exact = false;
    extraPerWarp = Math.max(extraPerWarp, extra / warps);
    if (worst > most) most = worst;
    if (worst < fewest) fewest = worst;
    const key = runKey(sample);
    runs.set(key, Math.max(runs.get(key) ?? 0, worst));
  }
  if (most === 0) return NO_REQUEST;
  // Every value of a loop's counter runs, one iteration after another: a run of the loop pays the
  // passes of its worst iteration, whatever the others need (the last steps of a triangular loop,
  // with one or two lanes left, are conflict-free). A verdict must hold for every value of the
  // other unknowns: the fewest is over their runs.
  const conflicted = Math.min(...runs.values());
  return { most, fewest, exact, extraPerWarp, conflicted };
}

/** The values of the unknowns a sample holds that are not loop counters run through their steps. */
function runKey(sample: LaneSample): string {
  return sample.sampled.map((s) => `${s.name}=${s.value}`).join(',');
}

/** The most distinct words on one bank among `words` (sorted in place; `perBank` is scratch). */
function busiestBank(words: number[], perBank: Int32Array): number {
  words.sort((a, b) => a - b);
  perBank.fill(0);
  let busiest = 0;
  for (let k = 0; k < words.length; k++) {
    const w = words[k];
    // A word counts once however many lanes read it (a broadcast).
    if (k > 0 && w === words[k - 1]) continue;
    const bank = ((w % BANKS) + BANKS) % BANKS;
    const n = ++perBank[bank];
    if (n > busiest) busiest = n;
  }
  return busiest;
}

/** What a lane's run of consecutive elements would be as one vector access the compiler may make. */
export interface MergedAccess {
  /** Elements merged into one access (2 or 4), and the loop's trip count. */
  elements: number;
  trips: number;
  /** The ways of the merged access (1: conflict-free). */
  ways: number;
}

/**
 * Where the lane's own iterations of its innermost loop (whose counter is `counter`), of a known
 * trip count, touch consecutive elements (`regM[i] = As[base + i]`, `i` from 0 to TM) at an
 * address aligned to a vector of them, the
 * compiler may merge them into one 8- or 16-byte access (`LDS.64`, `LDS.128`: ptxas does, where it
 * can prove the alignment, from PTX that moves them one at a time), served a half or
 * a quarter warp at a time, where lanes that conflicted as 4-byte requests may not. The ways of that
 * access; null where there is no such loop or the alignment fails for some lane (it cannot merge).
 */
export function mergedAccess(ev: AccessEvent, shapes: RuleShapes, counter: string): MergedAccess | null {
  const o = ev.offset;
  if (ev.member || ev.offsetUnit || o.op !== 'binary' || o.operator !== '+') return null;
  const counterOf = (x: Sym) => (x.op === 'free' && x.loop?.role === 'counter' && x.name === counter ? x : null);
  const k = counterOf(o.right) ?? counterOf(o.left);
  if (!k) return null;
  const rest = k === o.right ? o.left : o.right;
  if (symFacts(rest).frees.some((f) => f.id === k.id)) return null;
  const shape = shapes.shapes[0];
  const base = {
    threadIdx: { x: 0, y: 0, z: 0 },
    blockIdx: { x: 0, y: 0, z: 0 },
    blockDim: shape,
    gridDim: { x: 1, y: 1, z: 1 },
    warpKey: 0,
  };
  const values = simulateLoopCounter(k, base);
  if (!values || values.length < 2 || values.some((v, i) => v !== values[0] + i)) return null;
  const bytes = ev.elementBytes;
  const elements = [4, 2].find((n) => n * bytes <= 16 && values.length % n === 0);
  if (!elements) return null;
  const first = binary('+', rest, constant(values[0]));
  // Every lane's first element on a vector boundary, or the compiler cannot merge.
  for (const sh of shapes.shapes) {
    const size = sh.x * sh.y * sh.z;
    const at = threadValues(first, sh);
    for (const sample of laneSamples([first], sh)) {
      const column = at(sample);
      for (let t = 0; t < size; t++) {
        const a = column(t);
        if (a === INVALID) continue;
        if (a === LANE_UNKNOWN || a % elements !== 0) return null;
      }
    }
  }
  const merged: AccessEvent = {
    ...ev,
    offset: first,
    elementBytes: elements * bytes,
    offsetUnit: bytes,
    dims: undefined,
    indices: undefined,
  };
  return { elements, trips: values.length, ways: bankVerdict(merged, shapes)?.ways ?? 1 };
}

/** The kernel's other accesses to the same array, and the most columns they use (null: not known). */
export interface ArrayUse {
  accesses: readonly AccessEvent[];
  columns: number | null;
}

/**
 * The shortest row length that leaves this access conflict-free, for every shape and sample, and
 * makes none of the kernel's other accesses to the array worse: no shorter than the columns they
 * use (the declared length when not known), so a padding the index never needed may be taken away
 * (`[17]` → `[16]` for a 16-wide tile a half warp reads per row) as well as one added.
 */
function paddingFor(ev: AccessEvent, shapes: RuleShapes, use: ArrayUse | null): BankVerdict['padding'] {
  const { dims, indices } = ev;
  if (!dims || !indices || dims.length < 2) return null;
  const last = dims.length - 1;
  const declared = dims[last];
  // The worst ways over the shapes; with `above`, any figure over it once one is found (the
  // question is then only whether the layout keeps to it).
  const worst = (access: AccessEvent, width: number, above = Infinity) => {
    const idx = access.indices;
    if (!idx || idx.length !== dims.length) return null;
    let offset = idx[0];
    for (let i = 1; i < idx.length; i++)
      offset = binary('+', binary('*', offset, constant(i === last ? width : dims[i])), idx[i]);
    let most = 1;
    for (const shape of shapes.shapes) {
      const ways = waysOver(access, shape, offset, above);
      most = Math.max(most, ways && ways !== NO_REQUEST ? ways.most : 1);
      if (most > above) break;
    }
    return most;
  };
  const others = (use?.accesses ?? []).filter(
    (a) => a !== ev && a.dims?.length === dims.length && a.dims.every((d, i) => d === dims[i]),
  );
  const before = others.map((a) => worst(a, declared));
  const least = Math.min(declared, Math.max(1, use?.columns ?? declared));
  for (let width = least; width <= declared + 32; width++) {
    if (width === declared || worst(ev, width, 1) !== 1) continue;
    if (others.every((a, k) => before[k] === null || (worst(a, width, before[k]!) ?? Infinity) <= before[k]!))
      return { from: declared, to: width };
  }
  return null;
}

/**
 * The columns an access to an array of two or more dimensions reaches: one past the largest last
 * index over the lanes and samples (null: the index reads a run-time value, or a lane's is data).
 */
export function columnsUsed(ev: AccessEvent, shapes: RuleShapes): number | null {
  const { dims, indices } = ev;
  if (!dims || !indices || dims.length < 2 || indices.length !== dims.length) return null;
  const index = indices[indices.length - 1];
  let most = -1;
  for (const shape of shapes.shapes) {
    const size = shape.x * shape.y * shape.z;
    const values = threadValues(index, shape);
    for (const sample of laneSamples([index], shape)) {
      if (sample.sampled.length > 0) return null;
      const at = values(sample);
      for (let t = 0; t < size; t++) {
        const v = at(t);
        if (v === LANE_UNKNOWN) return null;
        if (v !== INVALID && v > most) most = v;
      }
    }
  }
  return most >= 0 ? most + 1 : null;
}
