/**
 * `uncoalesced-access`: a global load or store whose addresses, lane by lane, touch more 32-byte
 * sectors per warp request than the same lanes would at unit stride. The element offset is the
 * uniformity walk's symbolic value of the thread; it is evaluated for every lane of every warp of
 * the block shapes in use, for every sample of the unknowns it reads (a verdict must hold for all
 * of them: a stride that is a run-time value may be 1). A gather through per-lane data has no
 * verdict.
 */
import type { Dim3 } from '../types';
import { INVALID, LANE_UNKNOWN } from '../uniformity/lane-evaluation';
import type { AccessEvent } from '../uniformity/memory-events';
import { conjunction, laneSamples, threadValues, type RuleShapes } from './lane-samples';

export interface CoalescingVerdict {
  shape: Dim3;
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
    const v = shapeVerdict(ev, shape);
    if (shapes.known) {
      if (v && (!chosen || v.sectors / v.ideal > chosen.sectors / chosen.ideal)) chosen = v;
    } else {
      if (!v) return null;
      if (!chosen || v.sectors / v.ideal < chosen.sectors / chosen.ideal) chosen = v;
    }
  }
  return chosen;
}

function shapeVerdict(ev: AccessEvent, shape: Dim3): CoalescingVerdict | null {
  const size = shape.x * shape.y * shape.z;
  const guard = conjunction(ev.guards);
  // Elements are `pitch` bytes apart; a member of one (`a[i].w`) is `bytes` wide, `within` bytes in.
  const pitch = ev.elementBytes;
  const bytes = ev.member?.bytes ?? pitch;
  const within = ev.member?.offset ?? 0;
  const address = threadValues(ev.offset, shape);
  const here = guard ? threadValues(guard, shape) : null;
  const samples = laneSamples(guard ? [ev.offset, guard] : [ev.offset], shape);
  let ideal = 0;
  let requests = 0;
  let shown: { lanes: number; sectors: number; ideal: number } | null = null;
  let stride: number | null | undefined;
  for (const sample of samples) {
    const at = address(sample);
    const active = here ? here(sample) : null;
    let sampleSectors = 0;
    let sampleIdeal = 0;
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
      let first: number | null = null;
      let second: number | null = null;
      for (let t = w * 32; t < Math.min(size, w * 32 + 32); t++) {
        if (active && active(t) === 0) continue;
        const a = at(t);
        if (a === INVALID) continue;
        // A gather through per-lane data: where it goes is not known.
        if (a === LANE_UNKNOWN) return null;
        const start = a * pitch + within;
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
        if (t === w * 32) first = a;
        else if (t === w * 32 + 1) second = a;
      }
      // A few lanes (a guard's edge for some value of the unknowns) tell little about the pattern.
      if (addresses.size === 0 || unit.size === 0 || touchedLanes < MIN_LANES) continue;
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
      if (w === 0 && first !== null && second !== null) {
        const d = second - first;
        stride = stride === undefined || stride === d ? d : null;
      }
    }
    if (sampleIdeal === 0) continue;
    if (sampleSectors < UNCOALESCED_RATIO * sampleIdeal) return null;
    ideal += sampleIdeal;
  }
  if (ideal === 0 || requests === 0 || !shown) return null;
  return { shape, sectors: shown.sectors, ideal: shown.ideal, stride: stride ?? null };
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
export function coveredByNeighbours(ev: AccessEvent, others: readonly AccessEvent[], shapes: RuleShapes): boolean {
  const group = [
    ev,
    ...others.filter((o) => o !== ev && sameStream(ev, o) && shiftedCopy(ev, o, shapes.shapes[0])),
  ].slice(0, MAX_NEIGHBOURS);
  if (group.length < 2) return false;
  for (const shape of shapes.shapes) {
    const size = shape.x * shape.y * shape.z;
    const syms = group.flatMap((g) => [g.offset, ...g.guards]);
    const columns = group.map((g) => {
      const guard = conjunction(g.guards);
      return { g, at: threadValues(g.offset, shape), here: guard ? threadValues(guard, shape) : null };
    });
    for (const sample of laneSamples(syms, shape)) {
      const lanes = columns.map((c) => ({ c, at: c.at(sample), here: c.here ? c.here(sample) : null }));
      for (let w = 0; w * 32 < size; w++) {
        const bytes = new Set<number>();
        let lowest = Infinity;
        for (const { c, at, here } of lanes)
          for (let t = w * 32; t < Math.min(size, w * 32 + 32); t++) {
            if (here && here(t) === 0) continue;
            const a = at(t);
            if (a === INVALID) continue;
            if (a === LANE_UNKNOWN) return false;
            const start = a * c.g.elementBytes + (c.g.member?.offset ?? 0);
            const width = c.g.member?.bytes ?? c.g.elementBytes;
            for (let b = start; b < start + width; b++) bytes.add(b);
            if (start < lowest) lowest = start;
          }
        if (bytes.size === 0) continue;
        const sectors = new Set<number>();
        for (const b of bytes) sectors.add(Math.floor((b - lowest) / SECTOR));
        if (sectors.size >= UNCOALESCED_RATIO * Math.max(1, bytes.size / SECTOR)) return false;
      }
    }
  }
  return true;
}

/** Neighbours a lane reads one after another are the same pattern moved by a few elements (`p[4 * i + 1]` beside `p[4 * i]`). */
const MAX_SHIFT = 16;

/** Whether `b`'s offsets are `a`'s moved by one small amount, the same for every lane and sample. */
function shiftedCopy(a: AccessEvent, b: AccessEvent, shape: Dim3): boolean {
  const size = shape.x * shape.y * shape.z;
  const at = threadValues(a.offset, shape);
  const bt = threadValues(b.offset, shape);
  for (const sample of laneSamples([a.offset, b.offset], shape)) {
    const x = at(sample);
    const y = bt(sample);
    let shift: number | null = null;
    for (let t = 0; t < size; t++) {
      const u = x(t);
      const v = y(t);
      if (typeof u !== 'number' || typeof v !== 'number') return false;
      if (shift === null) shift = v - u;
      else if (v - u !== shift) return false;
    }
    if (shift === null || shift === 0 || Math.abs(shift) > MAX_SHIFT) return false;
  }
  return true;
}

/** Accesses of one lane to the same array, in the same function, the same way (both loads or both stores). */
function sameStream(a: AccessEvent, b: AccessEvent): boolean {
  return (
    a.array === b.array &&
    a.space === b.space &&
    a.store === b.store &&
    a.elementBytes === b.elementBytes &&
    a.file === b.file &&
    a.calls.length === b.calls.length &&
    a.calls.every((c, k) => c.file === b.calls[k].file && c.at[0] === b.calls[k].at[0])
  );
}
