/**
 * `barrier-divergence`: a barrier that part of the block (or, for `__syncwarp(mask)`, part of the
 * lanes its mask names) does not reach. The uniformity walk records each barrier with the varying
 * conditions in force where it stands (control dependence: an early `return` or `break` of some
 * threads counts, and so do a caller's conditions); here they are evaluated on every thread of the
 * block for the shapes in use. Proven when the thread indices split the block for every value of
 * the unknowns; data-dependent when the split follows per-lane data or values the kernel reads.
 */
import type { Dim3 } from '../types';
import { INVALID, LANE_UNKNOWN } from '../uniformity/lane-evaluation';
import type { BarrierEvent } from '../uniformity/memory-events';
import { conjunction, laneSamples, threadValues, type LaneSample, type RuleShapes } from './lane-samples';
import { formatDim } from './branch-verdicts';

export interface BarrierVerdict {
  /** `proven`: the thread indices split the block (or the mask's lanes) whatever the unknowns; `data`: it depends on data or on values the kernel reads. */
  basis: 'proven' | 'data';
  shape: Dim3;
  /** Threads of the block that reach it and threads in all, where the indices alone decide (block barriers). */
  reach: { arrive: number; total: number } | null;
  /** `__syncwarp`: lanes that reach it outside the mask, or lanes in the mask that never come. */
  maskProblem?: 'outside' | 'missing';
  /** The unknowns' values of the example (`n = 16`). */
  example: string | null;
  /**
   * A block barrier that only threads which have left the kernel miss (an early `return`, a loop
   * they left with nothing after it but the end): a barrier only exited threads hold up is released
   * (PTX ISA, `exit`), so it does not hang, though CUDA C++ leaves it undefined.
   */
  departedOnly?: boolean;
  /**
   * Some of the threads that miss it meet a barrier in the other arm of a branch instead (the rest,
   * if any, have left): `bar.sync` counts arrivals at barrier 0 whichever instruction, so the block
   * does not hang while each path meets as many barriers. `and-departed`: others have left the kernel.
   */
  pairedArm?: 'only' | 'and-departed';
}

type Outcome = 'agree' | 'split' | 'data' | 'left';

const RANK = { none: 0, data: 1, proven: 2 } as const;

/** The barrier's verdict over the shapes (null: every thread of the block, or every lane named, reaches it). */
export function barrierVerdict(ev: BarrierEvent, shapes: RuleShapes): BarrierVerdict | null {
  const guard = conjunction(ev.guards);
  const mask = ev.scope === 'warp' ? maskOf(ev) : null;
  if (ev.scope === 'warp' && mask === undefined) return null;
  if (!guard && ev.scope === 'block') return null;
  let chosen: BarrierVerdict | null = null;
  let chosenRank = -1;
  // Without a launch's shape: the split of the shapes that split it, if not all do.
  let some: BarrierVerdict | null = null;
  for (const shape of shapes.shapes) {
    const v =
      ev.scope === 'block'
        ? blockVerdict(guard!, shape, conjunction(ev.departed ?? []), ev.paired ?? [])
        : warpVerdict(guard, mask ?? null, shape, conjunction(ev.exited ?? []));
    const rank = v ? RANK[v.basis] : RANK.none;
    some ??= v;
    // A launch's shape that splits it is enough; without one, every common shape must, and where
    // some do, whether all arrive depends on the block's shape, a value the kernel reads.
    const better = chosenRank < 0 || (shapes.known ? rank > chosenRank : rank < chosenRank);
    if (better) {
      chosen = v;
      chosenRank = rank;
    }
  }
  if (!chosen && some && !shapes.known)
    return { ...some, basis: 'data', reach: null, example: `blocks of ${formatDim(some.shape)} threads` };
  return chosen;
}

/** `__syncwarp`'s mask when it is a constant (null: the full warp); undefined when it is not known. */
function maskOf(ev: BarrierEvent): number | null | undefined {
  if (!ev.mask) return null;
  return ev.mask.op === 'const' ? ev.mask.value >>> 0 : undefined;
}

/** `departed`: the guards whose failing threads have left the kernel (their conjunction), or null. */
function blockVerdict(
  guard: NonNullable<ReturnType<typeof conjunction>>,
  shape: Dim3,
  departed: ReturnType<typeof conjunction>,
  paired: NonNullable<BarrierEvent['paired']> = [],
): BarrierVerdict | null {
  const size = shape.x * shape.y * shape.z;
  const values = threadValues(guard, shape);
  const staying = departed ? threadValues(departed, shape) : null;
  const pairing = paired.map((p) => ({ guard: threadValues(p.guard, shape), meets: threadValues(p.meets, shape) }));
  const samples = laneSamples(
    [guard, ...(departed ? [departed] : []), ...paired.flatMap((p) => [p.guard, p.meets])],
    shape,
  );
  let met = false;
  let gone = false;
  let splits = 0;
  let lefts = 0;
  let data = false;
  let reach: BarrierVerdict['reach'] = null;
  let example: string | null = null;
  for (const sample of samples) {
    const at = values(sample);
    const stays = staying ? staying(sample) : null;
    const pairs = pairing.map((p) => ({ guard: p.guard(sample), meets: p.meets(sample) }));
    // A thread that fails a paired guard and surely meets the barrier on its side (a condition on
    // its data there may not hold).
    const meetsElsewhere = (t: number) =>
      pairs.some((p) => {
        const m = p.meets(t);
        return p.guard(t) === 0 && typeof m === 'number' && m !== 0;
      });
    let elsewhere = 0;
    let arrive = 0;
    let away = 0;
    let left = 0;
    let unknown = 0;
    for (let t = 0; t < size; t++) {
      const v = at(t);
      if (v === INVALID) continue;
      if (v === LANE_UNKNOWN) unknown++;
      else if (v !== 0) arrive++;
      else {
        // A thread that fails a departing guard has exited: not waited for, not waiting elsewhere
        // (where that is not known, it counts as away, as every missing thread did before).
        if (stays?.(t) === 0) left++;
        else if (meetsElsewhere(t)) elsewhere++;
        else away++;
      }
    }
    const outcome: Outcome =
      unknown > 0 ? 'data' : arrive > 0 && away > 0 ? 'split' : arrive > 0 && left + elsewhere > 0 ? 'left' : 'agree';
    if (outcome === 'left' && elsewhere > 0) met = true;
    if (outcome === 'left' && left > 0) gone = true;
    if (outcome === 'data') data = true;
    if (outcome === 'split' || outcome === 'left') {
      if (outcome === 'split') splits++;
      else lefts++;
      reach ??= { arrive, total: size };
      example ??= exampleOf(sample);
    }
  }
  if (!data && splits === 0 && lefts === 0) return null;
  if (!data && splits === 0) {
    const basis = lefts === samples.length ? 'proven' : 'data';
    return {
      basis,
      shape,
      reach,
      example: basis === 'data' ? example : null,
      departedOnly: true,
      ...(met ? { pairedArm: gone ? ('and-departed' as const) : ('only' as const) } : {}),
    };
  }
  if (!data && splits + lefts === samples.length) return { basis: 'proven', shape, reach, example: null };
  return { basis: 'data', shape, reach: data ? null : reach, example };
}

/** `alive`: what the lanes that have not left the kernel meet (the others are not waited for). */
function warpVerdict(
  guard: ReturnType<typeof conjunction>,
  mask: number | null,
  shape: Dim3,
  alive: ReturnType<typeof conjunction>,
): BarrierVerdict | null {
  const size = shape.x * shape.y * shape.z;
  const full = mask === null ? 0xffffffff : mask;
  const values = guard ? threadValues(guard, shape) : null;
  const living = alive ? threadValues(alive, shape) : null;
  const samples = guard ? laneSamples(alive ? [guard, alive] : [guard], shape) : [null];
  let bad = 0;
  let data = false;
  let problem: BarrierVerdict['maskProblem'];
  let example: string | null = null;
  for (const sample of samples) {
    const at = values && sample ? values(sample) : null;
    const here = living && sample ? living(sample) : null;
    let sampleBad = false;
    for (let w = 0; w * 32 < size && !sampleBad; w++) {
      let reached = 0;
      let present = 0;
      let unknown = false;
      for (let l = 0; l < 32 && w * 32 + l < size; l++) {
        const v = at ? at(w * 32 + l) : 1;
        // An exited lane is not waited for: neither there nor missing.
        if (v === INVALID || here?.(w * 32 + l) === 0) continue;
        present |= 1 << l;
        if (v === LANE_UNKNOWN) unknown = true;
        else if (v !== 0) reached |= 1 << l;
      }
      if (unknown) {
        data = true;
        continue;
      }
      if (reached === 0) continue;
      if ((reached & ~full) !== 0) problem ??= 'outside';
      else if ((full & present & ~reached) !== 0) problem ??= 'missing';
      else continue;
      sampleBad = true;
    }
    if (sampleBad) {
      bad++;
      if (sample) example ??= exampleOf(sample);
    }
  }
  if (!data && bad === 0) return null;
  const basis = !data && bad === samples.length ? 'proven' : 'data';
  return {
    basis,
    shape,
    reach: null,
    ...(problem ? { maskProblem: problem } : {}),
    example: basis === 'data' ? example : null,
  };
}

function exampleOf(sample: LaneSample): string | null {
  return sample.sampled.length > 0 ? sample.sampled.map((s) => `${s.name} = ${s.value}`).join(', ') : null;
}

export function describeReach(v: BarrierVerdict): string {
  if (!v.reach) return '';
  return `${v.reach.arrive} of the ${v.reach.total} threads of a ${formatDim(v.shape)}-thread block reach it`;
}
