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
