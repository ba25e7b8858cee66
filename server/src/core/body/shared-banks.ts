/**
 * `bank-conflict`: a shared-memory access whose lanes fall on the same 4-byte bank at different
 * words. Shared memory has 32 banks of 4-byte words; a warp's request is served in one pass per
 * distinct word on its busiest bank (lanes on one word share it: a broadcast). Accesses of 8 and
 * 16 bytes are served a half and a quarter warp at a time. The element offset is evaluated lane by
 * lane for the block shapes in use and every sample of the unknowns (a loop counter's known steps
 * included); the verdict must hold for all of them. For an array of two or more dimensions, the
 * padding of its rows that removes the conflict is found the same way.
 */
import type { Dim3 } from '../types';
import { INVALID, LANE_UNKNOWN } from '../uniformity/lane-evaluation';
import type { AccessEvent } from '../uniformity/memory-events';
import { binary, constant, symFacts, type Sym } from '../uniformity/symbolic-values';
import { conjunction, laneSamples, threadValues, type RuleShapes } from './lane-samples';

export interface BankVerdict {
  shape: Dim3;
  /** The most passes a request needs (n-way), and the fewest over the samples (a loop's steps). */
  ways: number;
  fewest: number;
  /** Rows of `from` elements padded to `to` remove the conflict (arrays of two or more dimensions). */
  padding: { from: number; to: number } | null;
}

const BANKS = 32;

export function bankVerdict(ev: AccessEvent, shapes: RuleShapes): BankVerdict | null {
  let chosen: Omit<BankVerdict, 'padding'> | null = null;
  for (const shape of shapes.shapes) {
    const v = shapeVerdict(ev, shape, ev.offset);
    if (shapes.known) {
      if (v && (!chosen || v.ways > chosen.ways)) chosen = v;
    } else {
      if (!v) return null;
      if (!chosen || v.ways < chosen.ways) chosen = v;
    }
  }
  if (!chosen) return null;
  return { ...chosen, padding: paddingFor(ev, shapes) };
}

function shapeVerdict(ev: AccessEvent, shape: Dim3, offset: Sym): Omit<BankVerdict, 'padding'> | null {
  const ways = waysOver(ev, shape, offset);
  if (!ways || ways.fewest <= 1) return null;
  return { shape, ways: ways.most, fewest: ways.fewest };
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
): { most: number; fewest: number } | null {
  // An address that never reads per-lane data cannot turn out unknown in a later sample.
  const stops = above < Infinity && !symFacts(offset).opaqueLane;
  const size = shape.x * shape.y * shape.z;
  const guard = conjunction(ev.guards);
  const pitch = ev.elementBytes;
  const bytes = ev.member?.bytes ?? pitch;
  const within = ev.member?.offset ?? 0;
  const address = threadValues(offset, shape);
  const here = guard ? threadValues(guard, shape) : null;
  const samples = laneSamples(guard ? [offset, guard] : [offset], shape);
  const lanesPerPass = bytes <= 4 ? 32 : Math.max(1, Math.floor(128 / bytes));
  let most = 0;
  let fewest = Infinity;
  // The words one pass touches, reused from pass to pass; and per bank, how many distinct words fall on it.
  const words: number[] = [];
  const perBank = new Int32Array(BANKS);
  for (const sample of samples) {
    const at = address(sample);
    const active = here ? here(sample) : null;
    let worst = 0;
    for (let from = 0; from < size; from += lanesPerPass) {
      // Lanes of one pass never span two warps (passes divide a warp).
      words.length = 0;
      let lanes = 0;
      for (let t = from; t < Math.min(size, from + lanesPerPass); t++) {
        if (active && active(t) === 0) continue;
        const a = at(t);
        if (a === INVALID) continue;
        if (a === LANE_UNKNOWN) return null;
        const start = a * pitch + within;
        lanes++;
        for (let w = Math.floor(start / 4); w <= Math.floor((start + bytes - 1) / 4); w++) words.push(w);
      }
      if (lanes < 2) continue;
      worst = Math.max(worst, busiestBank(words, perBank));
      if (stops && worst > above) return { most: worst, fewest: worst };
    }
    if (worst === 0) continue;
    if (worst > most) most = worst;
    if (worst < fewest) fewest = worst;
  }
  return most === 0 ? null : { most, fewest };
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

/** The fewest elements added to each row that leave every request conflict-free, for every shape and sample. */
function paddingFor(ev: AccessEvent, shapes: RuleShapes): BankVerdict['padding'] {
  const { dims, indices } = ev;
  if (!dims || !indices || dims.length < 2) return null;
  const last = dims.length - 1;
  for (let pad = 1; pad <= 32; pad++) {
    let offset = indices[0];
    for (let i = 1; i < indices.length; i++)
      offset = binary('+', binary('*', offset, constant(i === last ? dims[i] + pad : dims[i])), indices[i]);
    if (shapes.shapes.every((shape) => (waysOver(ev, shape, offset, 1)?.most ?? 1) <= 1))
      return { from: dims[last], to: dims[last] + pad };
  }
  return null;
}
