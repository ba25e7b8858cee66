/**
 * `uncoalesced-access`: a global load or store whose addresses, lane by lane, touch more 32-byte
 * sectors per warp request than the same lanes would at unit stride. The element offset is the
 * uniformity walk's symbolic value of the thread; it is evaluated for every lane of every warp of
 * the block shapes in use, for every sample of the unknowns it reads (a verdict must hold for all
 * of them: a stride that is a run-time value may be 1). A gather through per-lane data has no
 * verdict.
 */
import type { Dim3 } from '../types';
import { INVALID, LANE_UNKNOWN, type EvalResult } from '../uniformity/lane-evaluation';
import type { AccessEvent } from '../uniformity/memory-events';
import { binary, constant, isThreadDependent, symFacts, ZERO, type Sym } from '../uniformity/symbolic-values';
import { byteOffset, conjunction, laneSamples, threadValues, type LaneSample, type RuleShapes } from './lane-samples';

export interface CoalescingVerdict {
  shape: Dim3;
  /** Row pitches the verdict assumes hold at least the columns a warp's lanes index (`N` ≥ 124), else none. */
  pitches: PitchBound[];
  /** Mean 32-byte sectors per warp request, over the warps and samples. */
  sectors: number;
  /** What the same lanes touch at unit stride with the same width. */
  ideal: number;
  /** Elements between neighbouring lanes of a warp, when it is one number. */
  stride: number | null;
}

/** A request this many times its ideal sectors, or more, is uncoalesced (less is alignment or a 2-D tile's edge). */
const UNCOALESCED_RATIO = 2;
const SECTOR = 32;
/** Requests with fewer active lanes (the edge of a guard) are not judged. */
const MIN_LANES = 8;

/** The access's verdict (null: coalesced, or not knowable). */
export function coalescingVerdict(ev: AccessEvent, shapes: RuleShapes): CoalescingVerdict | null {
  let chosen: CoalescingVerdict | null = null;
  for (const shape of shapes.shapes) {
    let v = shapeVerdict(ev, shape, []);
    // Where a run-time size is a matrix's row pitch, the rows a warp spans fold onto each other only
    // if a row were shorter than the columns its lanes index: the verdict for real pitches, named.
    if (!v) {
      const pitches = pitchBounds(ev, shape);
      if (pitches.length > 0) v = shapeVerdict(ev, shape, pitches);
    }
    // No sample ran enough lanes of a request here (a guard's edge the samples missed): no evidence
    // either way for this shape.
    if (v === NO_REQUEST) continue;
    if (shapes.known) {
      if (v && (!chosen || v.sectors / v.ideal > chosen.sectors / chosen.ideal)) chosen = v;
    } else {
      if (!v) return null;
      if (!chosen || v.sectors / v.ideal < chosen.sectors / chosen.ideal) chosen = v;
    }
  }
  return chosen;
}

const NO_REQUEST = 'no-request';

function shapeVerdict(
  ev: AccessEvent,
  shape: Dim3,
  pitches: PitchBound[],
): CoalescingVerdict | null | typeof NO_REQUEST {
  const size = shape.x * shape.y * shape.z;
  const guard = conjunction(ev.guards);
  // The offset counts `pitch` bytes; an access is its element wide, or a member of it (`a[i].w`) is
  // `bytes` wide, `within` bytes in.
  const pitch = ev.offsetUnit ?? ev.elementBytes;
  const bytes = ev.member?.bytes ?? ev.elementBytes;
  const within = ev.member?.offset ?? 0;
  const address = threadValues(ev.offset, shape);
  const here = guard ? threadValues(guard, shape) : null;
  const least = pitches.length > 0 ? new Map(pitches.map((p) => [p.id, p.least])) : null;
  const samples = laneSamples(guard ? [ev.offset, guard] : [ev.offset], shape, least);
  let ideal = 0;
  let requests = 0;
  let shown: { lanes: number; sectors: number; ideal: number } | null = null;
  let stride: number | null | undefined;
  // Samples whose run-time sizes are all a warp or more: how many ran a request, how many left only
  // lone lanes (fewer than MIN_LANES in every request, some running).
  let fullSized = 0;
  let loneOnly = 0;
  for (const sample of samples) {
    const at = address(sample);
    const active = here ? here(sample) : null;
    // The stride between the first two lanes, in every sample, whether a guard lets them run or not:
    // one that moves with a run-time value is not a number to show.
    if (size > 1 && stride !== null) {
      const a0 = at(0);
      const a1 = at(1);
      // (A sample where a lane's address is no number, an unknown at 0 in a divisor, tells nothing.)
      if (typeof a0 === 'number' && typeof a1 === 'number')
        stride = stride === undefined || stride === a1 - a0 ? a1 - a0 : null;
    }
    let sampleSectors = 0;
    let sampleIdeal = 0;
    let sparse = false;
    for (let w = 0; w * 32 < size; w++) {
      const touched = new Set<number>();
      const addresses = new Set<number>();
      // What unit stride touches: each active lane at its own place in the warp (a guard that
      // leaves every other lane idle does not make an access uncoalesced).
      const unit = new Set<number>();
      let firstLane = -1;
      let lastLane = -1;
      let touchedLanes = 0;
      let lowest = Infinity;
      for (let t = w * 32; t < Math.min(size, w * 32 + 32); t++) {
        if (active && active(t) === 0) continue;
        const a = at(t);
        if (a === INVALID) continue;
        // A gather through per-lane data: where it goes is not known.
        if (a === LANE_UNKNOWN) return null;
        const start = byteOffset(a, pitch, within);
        if (start === null) return null;
        addresses.add(start);
        if (firstLane < 0) firstLane = t;
        lastLane = t;
        touchedLanes++;
        for (
          let s = Math.floor(((t - firstLane) * bytes) / SECTOR);
          s <= Math.floor(((t - firstLane + 1) * bytes - 1) / SECTOR);
          s++
        )
          unit.add(s);
        if (start < lowest) lowest = start;
      }
      // A few lanes (a guard's edge for some value of the unknowns) tell little about the pattern.
      if (addresses.size === 0 || unit.size === 0 || touchedLanes < MIN_LANES) {
        if (touchedLanes > 0) sparse = true;
        continue;
      }
      requests++;
      // Measured from the warp's lowest address taken as aligned: the pattern, not where an offset the lanes share puts it.
      const shift = -lowest;
      for (const a of addresses)
        for (let s = Math.floor((a + shift) / SECTOR); s <= Math.floor((a + shift + bytes - 1) / SECTOR); s++)
          touched.add(s);
      sampleSectors += touched.size;
      // The bytes the lanes use, in sectors, unrounded: a request one lane short of a warp at twice
      // the ideal stride (31 sectors for 15.5) is as wasteful as the full one (32 for 16).
      sampleIdeal += Math.max(1, Math.min(unit.size, ((lastLane - firstLane + 1) * bytes) / SECTOR));
      // The figures shown are those of the fullest request (a whole warp where there is one).
      if (!shown || touchedLanes > shown.lanes || (touchedLanes === shown.lanes && touched.size > shown.sectors))
        shown = { lanes: touchedLanes, sectors: touched.size, ideal: unit.size };
    }
    const sized = sample.sampled.length > 0 && sample.sampled.every((u) => u.value >= 32);
    if (sampleIdeal === 0) {
      if (sized && sparse) loneOnly++;
      continue;
    }
    if (sized) fullSized++;
    if (sampleSectors < UNCOALESCED_RATIO * sampleIdeal) return null;
    ideal += sampleIdeal;
  }
  if (ideal === 0 || requests === 0 || !shown) return NO_REQUEST;
  // Only sizes below a warp run enough lanes of a request to waste sectors; at a warp and up the
  // guard leaves lone lanes, one sector each (a store to column 0 of every row): nothing to fix at
  // the sizes data has.
  if (loneOnly > 0 && fullSized === 0) return null;
  return { shape, pitches, sectors: shown.sectors, ideal: shown.ideal, stride: stride ?? null };
}

/** A run-time size that is a row pitch of the access, and the columns a warp's lanes index in one row. */
export interface PitchBound {
  id: number;
  name: string;
  least: number;
}

/** Samples read per unknown when telling a pitch. */
const PITCH_SAMPLES = 96;

/**
 * The unknown that is the row pitch of this access: its offset is `row(lane) * n + column(lane)`,
 * with `row` and `column` not reading `n` (read from the offset's form, `linearIn`), `row` never
 * negative and a function of the thread, the block and loop counters alone (no other run-time
 * value: the layout is the code's), and both varying within some warp (a warp spanning rows and
 * columns of a row-major matrix). A row of the matrix holds the columns indexed in it, so `n` is at
 * least the columns one warp spans (the spread of `column` over its lanes, plus the access's
 * width). None where the name is read twice (two reads of one value are two unknowns here) or
 * where more than one unknown would do.
 */
function pitchBounds(ev: AccessEvent, shape: Dim3): PitchBound[] {
  // A pitch multiplies a row that moves with the thread: without such a product there is none to
  // find, and no sample is evaluated.
  if (!scalesThreadRow(ev.offset)) return [];
  const size = shape.x * shape.y * shape.z;
  const unit = ev.offsetUnit ?? ev.elementBytes;
  const width = Math.max(1, Math.ceil((ev.member?.bytes ?? ev.elementBytes) / unit));
  const frees = symFacts(ev.offset).frees;
  const named = new Map<string, number>();
  for (const f of frees) named.set(f.name, (named.get(f.name) ?? 0) + 1);
  let samples: LaneSample[] | null = null;
  const out: PitchBound[] = [];
  for (const f of frees) {
    if (f.loop !== null || named.get(f.name) !== 1) continue;
    const split = linearIn(ev.offset, f.id);
    if (!split) continue;
    const rowFacts = symFacts(split.coef);
    if (!isThreadDependent(split.coef) || rowFacts.frees.some((x) => x.loop === null)) continue;
    samples ??= laneSamples([ev.offset], shape).slice(0, PITCH_SAMPLES);
    const rowValues = threadValues(split.coef, shape);
    const columnValues = threadValues(split.rest, shape);
    const counters = rowFacts.frees;
    // The rows per place of the loops and the block (they read nothing else): worked out once each.
    const rowsAt = new Map<string, Float64Array | null>();
    const rowsOf = (sample: LaneSample): Float64Array | null => {
      const { blockIdx, bindings } = sample.block;
      const key = rowFacts.blockIdx
        ? [blockIdx.x, blockIdx.y, blockIdx.z, ...counters.map((c) => bindings.get(c.id))].join(',')
        : counters.map((c) => bindings.get(c.id)).join(',');
      let rows = rowsAt.get(key);
      if (rows === undefined) {
        rows = numbers(rowValues(sample), size);
        if (rows && rows.some((r) => r < 0)) rows = null;
        rowsAt.set(key, rows);
      }
      return rows;
    };
    // Whether some warp's lanes fall in different rows, for some sample: else no warp spans rows.
    let pitch = true;
    let rowsSplit = false;
    for (const sample of samples) {
      const rows = rowsOf(sample);
      if (!rows) {
        pitch = false;
        break;
      }
      if (!rowsSplit) rowsSplit = someWarpSplits(rows, size);
    }
    if (!pitch || !rowsSplit) continue;
    let least = 0;
    let spans = false;
    for (const sample of samples) {
      const rows = rowsOf(sample)!;
      const columns = numbers(columnValues(sample), size);
      if (!columns) {
        pitch = false;
        break;
      }
      // Each warp: whether its lanes span rows and columns, and the columns one row holds.
      for (let w = 0; w * 32 < size; w++) {
        const end = Math.min(size, w * 32 + 32);
        let low = Infinity;
        let high = -Infinity;
        let rowsDiffer = false;
        for (let t = w * 32; t < end; t++) {
          if (columns[t] < low) low = columns[t];
          if (columns[t] > high) high = columns[t];
          if (rows[t] !== rows[w * 32]) rowsDiffer = true;
        }
        if (rowsDiffer && high > low) spans = true;
        least = Math.max(least, high - low + width);
      }
    }
    if (pitch && spans) out.push({ id: f.id, name: f.name, least });
  }
  return out.length === 1 ? out : [];
}

/** Each thread's value as a number, or null where some thread's is not one. */
function numbers(column: (t: number) => EvalResult, size: number): Float64Array | null {
  const out = new Float64Array(size);
  for (let t = 0; t < size; t++) {
    const v = column(t);
    if (typeof v !== 'number') return null;
    out[t] = v;
  }
  return out;
}

function readsLaneData(column: (t: number) => EvalResult, size: number): boolean {
  for (let t = 0; t < size; t++) if (column(t) === LANE_UNKNOWN) return true;
  return false;
}

function someWarpSplits(rows: Float64Array, size: number): boolean {
  for (let w = 0; w * 32 < size; w++)
    for (let t = w * 32 + 1; t < Math.min(size, w * 32 + 32); t++) if (rows[t] !== rows[w * 32]) return true;
  return false;
}

/**
 * `sym` as `coef * n + rest`, where neither reads the unknown `id` (n): sums, differences, products
 * and left shifts by a value that does not read it, negation, and conversions; null where n enters
 * otherwise (a division, a comparison, a select), which no row pitch does.
 */
export function linearIn(sym: Sym, id: number, depth = 0): { coef: Sym; rest: Sym } | null {
  if (depth > 64) return null;
  if (!symFacts(sym).frees.some((f) => f.id === id)) return { coef: ZERO, rest: sym };
  switch (sym.op) {
    case 'free':
      return { coef: constant(1), rest: ZERO };
    case 'unary': {
      // Only a sign is linear: `!`, `~` and the functions of one value (`__clz`, `abs`) are not.
      if (sym.operator !== '-') return null;
      const inner = linearIn(sym.arg, id, depth + 1);
      if (!inner || sym.operator !== '-') return inner;
      return {
        coef: { op: 'unary', operator: '-', arg: inner.coef },
        rest: { op: 'unary', operator: '-', arg: inner.rest },
      };
    }
    case 'binary': {
      const reads = (x: Sym) => symFacts(x).frees.some((f) => f.id === id);
      if (sym.operator === '+' || sym.operator === '-') {
        const left = linearIn(sym.left, id, depth + 1);
        const right = left && linearIn(sym.right, id, depth + 1);
        if (!left || !right) return null;
        return {
          coef: binary(sym.operator, left.coef, right.coef),
          rest: binary(sym.operator, left.rest, right.rest),
        };
      }
      if (sym.operator === '*' || sym.operator === '<<') {
        const [linear, factor] = reads(sym.left) ? [sym.left, sym.right] : [sym.right, sym.left];
        if (reads(factor) || (sym.operator === '<<' && linear !== sym.left)) return null;
        const inner = linearIn(linear, id, depth + 1);
        if (!inner) return null;
        return { coef: binary(sym.operator, inner.coef, factor), rest: binary(sym.operator, inner.rest, factor) };
      }
      return null;
    }
    default:
      return null;
  }
}

/** Whether `sym` holds a product of a thread-dependent value and one that depends on a run-time unknown. */
function scalesThreadRow(sym: Sym, depth = 0): boolean {
  if (depth > 64) return true;
  switch (sym.op) {
    case 'binary':
      if (sym.operator === '*') {
        const unknown = (x: Sym) => symFacts(x).frees.some((f) => f.loop === null);
        if ((isThreadDependent(sym.left) && unknown(sym.right)) || (isThreadDependent(sym.right) && unknown(sym.left)))
          return true;
      }
      return scalesThreadRow(sym.left, depth + 1) || scalesThreadRow(sym.right, depth + 1);
    case 'unary':
      return scalesThreadRow(sym.arg, depth + 1);
    case 'select':
      return (
        scalesThreadRow(sym.cond, depth + 1) ||
        scalesThreadRow(sym.then, depth + 1) ||
        scalesThreadRow(sym.else, depth + 1)
      );
    default:
      return false;
  }
}

/** A lane's accesses to one array gathered at most, the access itself included. */
const MAX_NEIGHBOURS = 16;

/**
 * Whether the lane's other accesses to the same array (`p[4 * i]`, `p[4 * i + 1]`, ... written one
 * by one) read or write the rest of the sectors this one touches: together they are no worse than
 * unit stride, for every shape and sample. Each request still fetches sectors it does not use, but
 * the neighbours' requests use them from L1: the cost is requests, not bytes, and one vector access
 * per lane removes it.
 */
export function coveredByNeighbours(
  ev: AccessEvent,
  others: readonly AccessEvent[],
  shapes: RuleShapes,
  offsets: KernelOffsets = new KernelOffsets(shapes.shapes[0]),
): boolean {
  const group = [ev, ...others.filter((o) => o !== ev && sameStream(ev, o) && shiftedCopy(ev, o, offsets))].slice(
    0,
    MAX_NEIGHBOURS,
  );
  if (group.length < 2) return false;
  for (const shape of shapes.shapes) {
    const size = shape.x * shape.y * shape.z;
    const syms = group.flatMap((g) => [g.offset, ...g.guards]);
    const columns = group.map((g) => {
      const guard = conjunction(g.guards);
      return { g, at: threadValues(g.offset, shape), here: guard ? threadValues(guard, shape) : null };
    });
    const ranges: Array<[number, number]> = [];
    for (const sample of laneSamples(syms, shape)) {
      const lanes = columns.map((c) => ({ c, at: c.at(sample), here: c.here ? c.here(sample) : null }));
      for (let w = 0; w * 32 < size; w++) {
        // The byte ranges the group's lanes touch: the bytes they cover, and the sectors those fall in.
        ranges.length = 0;
        for (const { c, at, here } of lanes)
          for (let t = w * 32; t < Math.min(size, w * 32 + 32); t++) {
            if (here && here(t) === 0) continue;
            const a = at(t);
            if (a === INVALID) continue;
            if (a === LANE_UNKNOWN) return false;
            const start = byteOffset(a, c.g.offsetUnit ?? c.g.elementBytes, c.g.member?.offset ?? 0);
            if (start === null) return false;
            ranges.push([start, start + (c.g.member?.bytes ?? c.g.elementBytes)]);
          }
        if (ranges.length === 0) continue;
        const { bytes, sectors } = coverage(ranges);
        if (sectors >= UNCOALESCED_RATIO * Math.max(1, bytes / SECTOR)) return false;
      }
    }
  }
  return true;
}

/**
 * The lane's own iterations of a loop whose counter moves the address (`for (k = 0; k < 4; k++)
 * dst[4 * i + k]`, a counter whose values are known) use the rest of the sectors one iteration
 * touches: over all of the counter's values, each warp's lanes are no worse than unit stride, for
 * every shape and sample of the other unknowns. As with neighbouring accesses, the cost is
 * requests, not bytes, and one vector access per lane removes it.
 */
export function coveredByIterations(ev: AccessEvent, shapes: RuleShapes): boolean {
  const counters = symFacts(ev.offset).frees.filter((f) => f.loop !== null && f.loop.role === 'counter');
  if (counters.length === 0) return false;
  const ids = new Set(counters.map((c) => c.id));
  const guard = conjunction(ev.guards);
  const syms = guard ? [ev.offset, guard] : [ev.offset];
  let evidence = false;
  for (const shape of shapes.shapes) {
    const size = shape.x * shape.y * shape.z;
    const at = threadValues(ev.offset, shape);
    const here = guard ? threadValues(guard, shape) : null;
    // The samples that differ only in the counters' values: one lane's iterations.
    const groups = new Map<string, LaneSample[]>();
    for (const sample of laneSamples(syms, shape, null, true)) {
      // A counter that is sampled (its trip count not known) does not run through its values.
      if (sample.sampled.some((x) => counters.some((c) => c.name === x.name))) return false;
      const { blockIdx, bindings } = sample.block;
      const key = `${blockIdx.x},${blockIdx.y},${blockIdx.z}:${[...bindings]
        .filter(([id]) => !ids.has(id))
        .map(([id, v]) => `${id}=${v}`)
        .join(',')}`;
      const group = groups.get(key);
      if (group) group.push(sample);
      else groups.set(key, [sample]);
    }
    for (const group of groups.values()) {
      if (group.length < 2) return false;
      const lanes = new Set<number>();
      // Each warp's byte ranges over the lane's iterations (a sample's columns are read before the next fills them).
      const perWarp: Array<Array<[number, number]>> = Array.from({ length: Math.ceil(size / 32) }, () => []);
      for (const sample of group) {
        const values = at(sample);
        const active = here ? here(sample) : null;
        for (let t = 0; t < size; t++) {
          if (active && active(t) === 0) continue;
          const a = values(t);
          if (a === INVALID) continue;
          if (a === LANE_UNKNOWN) return false;
          const start = byteOffset(a, ev.offsetUnit ?? ev.elementBytes, ev.member?.offset ?? 0);
          if (start === null) return false;
          perWarp[t >> 5].push([start, start + (ev.member?.bytes ?? ev.elementBytes)]);
          lanes.add(t);
        }
      }
      // A guard's edge that leaves a few lanes says nothing of the pattern (nor, alone, that it is covered).
      if (lanes.size < MIN_LANES) continue;
      evidence = true;
      for (const ranges of perWarp) {
        if (ranges.length === 0) continue;
        const { bytes, sectors } = coverage(ranges);
        if (sectors >= UNCOALESCED_RATIO * Math.max(1, bytes / SECTOR)) return false;
      }
    }
  }
  return evidence;
}

/**
 * The distinct bytes `[start, end)` ranges cover, and the 32-byte sectors those bytes fall in,
 * counted from the lowest byte taken as aligned (sorted in place).
 */
function coverage(ranges: Array<[number, number]>): { bytes: number; sectors: number } {
  ranges.sort((a, b) => a[0] - b[0]);
  const lowest = ranges[0][0];
  let bytes = 0;
  let sectors = 0;
  let covered = -Infinity; // bytes below this are counted
  let lastSector = -1;
  for (const [start, end] of ranges) {
    const from = Math.max(start, covered);
    if (end <= from) continue;
    bytes += end - from;
    covered = end;
    const first = Math.max(Math.floor((from - lowest) / SECTOR), lastSector + 1);
    const last = Math.floor((end - 1 - lowest) / SECTOR);
    if (last >= first) sectors += last - first + 1;
    lastSector = Math.max(lastSector, last);
  }
  return { bytes, sectors };
}

/** Neighbours a lane reads one after another are the same pattern moved by a few elements (`p[4 * i + 1]` beside `p[4 * i]`). */
const MAX_SHIFT = 16;

/**
 * The element offsets of a kernel's accesses, thread by thread, for each sample of the unknowns
 * they read (blocks of `shape`): worked out once per access and compared pair by pair, where a
 * kernel's run of scalar accesses (`p[4 * i]`, `p[4 * i + 1]`, ...) makes every pair a question.
 */
export class KernelOffsets {
  private readonly kept = new Map<AccessEvent, Array<Float64Array | null> | null>();
  constructor(readonly shape: Dim3) {}

  /** What decides an access's samples: pairs with equal ones are sampled alike, alone or together. */
  samplingOf(ev: AccessEvent): string {
    const facts = symFacts(ev.offset);
    return `${facts.blockIdx ? 'b' : ''}|${facts.frees.map((f) => f.id).join(',')}`;
  }

  /**
   * Each sample's offsets: null for a sample where some thread's is invalid (an unknown sampled at 0
   * in a divisor: no such launch), and null for all where a thread's is per-lane data.
   */
  of(ev: AccessEvent): Array<Float64Array | null> | null {
    let columns = this.kept.get(ev);
    if (columns === undefined) {
      const size = this.shape.x * this.shape.y * this.shape.z;
      const values = threadValues(ev.offset, this.shape);
      columns = [];
      for (const sample of laneSamples([ev.offset], this.shape)) {
        const column = values(sample);
        const out = numbers(column, size);
        if (!out && readsLaneData(column, size)) {
          columns = null;
          break;
        }
        columns.push(out);
      }
      this.kept.set(ev, columns);
    }
    return columns;
  }
}

/** Whether `b`'s offsets are `a`'s moved by one small amount, the same for every lane, in each sample. */
function shiftedCopy(a: AccessEvent, b: AccessEvent, offsets: KernelOffsets): boolean {
  if (offsets.samplingOf(a) === offsets.samplingOf(b)) {
    // Sampled alike: the offsets each has alone are those they have together.
    const x = offsets.of(a);
    const y = x && offsets.of(b);
    if (!x || !y) return false;
    let compared = 0;
    for (let k = 0; k < x.length; k++) {
      const xk = x[k];
      const yk = y[k];
      if (!xk || !yk) continue;
      compared++;
      const shift = yk[0] - xk[0];
      if (shift === 0 || Math.abs(shift) > MAX_SHIFT) return false;
      for (let t = 1; t < xk.length; t++) if (yk[t] - xk[t] !== shift) return false;
    }
    return compared > 0;
  }
  const shape = offsets.shape;
  const size = shape.x * shape.y * shape.z;
  const at = threadValues(a.offset, shape);
  const bt = threadValues(b.offset, shape);
  let compared = 0;
  samples: for (const sample of laneSamples([a.offset, b.offset], shape)) {
    const x = at(sample);
    const y = bt(sample);
    let shift: number | null = null;
    for (let t = 0; t < size; t++) {
      const u = x(t);
      const v = y(t);
      if (u === INVALID || v === INVALID) continue samples;
      if (typeof u !== 'number' || typeof v !== 'number') return false;
      if (shift === null) shift = v - u;
      else if (v - u !== shift) return false;
    }
    if (shift === null || shift === 0 || Math.abs(shift) > MAX_SHIFT) return false;
    compared++;
  }
  return compared > 0;
}

/** Accesses of one lane to the same array, in the same function, the same way (both loads or both stores). */
function sameStream(a: AccessEvent, b: AccessEvent): boolean {
  return (
    a.array === b.array &&
    a.space === b.space &&
    a.store === b.store &&
    a.elementBytes === b.elementBytes &&
    a.offsetUnit === b.offsetUnit &&
    a.file === b.file &&
    a.calls.length === b.calls.length &&
    a.calls.every((c, k) => c.file === b.calls[k].file && c.at[0] === b.calls[k].at[0])
  );
}
