/**
 * What the thread-uniformity walk records besides branches, for the memory and barrier rules
 * (body/barriers.ts, body/global-access.ts, body/shared-banks.ts): each barrier with the varying
 * conditions it is reached under, and each load or store of global or shared memory with its
 * element offset as a symbolic value of the thread. Plain data: the rules evaluate it lane by lane.
 */
import type { Range } from '../ir/expr';
import { sizeofType } from '../text/const-eval';
import type { Sym } from './symbolic-values';

export type MemorySpace = 'global' | 'shared';

/** A call that leads to an event in another function, outermost first: where a finding can stand in the caller's file. */
export interface CallPlace {
  file: string;
  at: Range;
}

interface EventBase {
  file: string;
  at: Range;
  /** Every varying condition in force where it runs (early exits included), the callers' first. */
  guards: Sym[];
  /** The calls it is reached through, outermost first (empty: in the kernel itself). */
  calls: CallPlace[];
}

/** Where a guard is written: its branch's condition, `negated` where the lanes took the else edge. */
export interface GuardSource {
  file: string;
  at: Range;
  negated: boolean;
}

export interface BarrierEvent extends EventBase {
  event: 'barrier';
  /** Where each of `guards` is written, in the same order; null for one that is no branch's condition (an operand's). */
  guardSources?: ReadonlyArray<GuardSource | null>;
  /** `block`: the whole block meets (`__syncthreads`, `bar.sync`, a block group's `sync()`); `warp`: `__syncwarp`. */
  scope: 'block' | 'warp';
  /** `__syncwarp`'s mask (null: the full warp, or not given). */
  mask: Sym | null;
  /** `__syncwarp`: guards whose other lanes have left the kernel (`if (c) return;`), which it does not wait for. */
  exited?: Sym[];
  /**
   * A block barrier in a kernel: guards whose other threads meet no block barrier before the kernel
   * ends. Threads that fail only these have exited when the rest wait, and do not hold it up.
   */
  departed?: Sym[];
  /**
   * A block barrier: guards whose other threads may meet a block barrier of their own before the
   * arms join, each with the condition under which a thread there does. `bar.sync` counts the
   * threads arriving at barrier 0 whichever instruction they execute, so those threads release it.
   */
  paired?: Array<{ guard: Sym; meets: Sym }>;
}

export interface AccessEvent extends EventBase {
  event: 'access';
  space: MemorySpace;
  store: boolean;
  /** The element offset from the start of the array or pointer, per thread. */
  offset: Sym;
  elementBytes: number;
  /**
   * Bytes one step of `offset` moves where that is not the element (`reinterpret_cast<float4*>(&a[4 * i])[0]`:
   * the address counts the floats of `a`, each access is 16 bytes wide); absent: `elementBytes`.
   */
  offsetUnit?: number;
  elementType: string;
  /** The array or pointer as written (`tile`, `in`, `params.out`). */
  array: string;
  /**
   * It may run more than once per thread: it is in a loop, here or at a call that reaches it (false:
   * once per thread that reaches it, at most).
   */
  repeats: boolean;
  /** A member of the element (`a[i].w`): the access touches only its bytes. */
  member?: MemberPlace;
  /** An array's declared dimensions (elements) and the index into each, outermost first: padding advice. */
  dims?: number[];
  indices?: Sym[];
}

export type MemoryEvent = BarrierEvent | AccessEvent;

/** Where a member lies in its element, in bytes. */
export interface MemberPlace {
  name: string;
  offset: number;
  bytes: number;
}

/** A type's size, alignment and members' places (a record's or a CUDA vector type's). */
export interface TypeLayout {
  bytes: number;
  align: number;
  members: Map<string, MemberPlace> | null;
}

const VECTOR = /^(u?char|u?short|u?int|u?long|u?longlong|float|double)([1-4])$/;
const COMPONENT: Record<string, number> = { char: 1, short: 2, int: 4, long: 8, longlong: 8, float: 4, double: 8 };
const PAIRS = /^(?:__half2|half2|__nv_bfloat162|nv_bfloat162)$/;

/** The layout of a built-in scalar or CUDA vector type (`float4`: 16 bytes, `w` at 12), or null. */
export function builtinLayout(type: string): TypeLayout | null {
  const t = type
    .replace(/\b(?:const|volatile|struct)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(?:std|cuda)::/, '');
  const v = VECTOR.exec(t);
  const pair = PAIRS.test(t);
  if (v || pair) {
    const component = pair ? 2 : COMPONENT[v![1].replace(/^u/, '')];
    const n = pair ? 2 : Number(v![2]);
    const members = new Map<string, MemberPlace>();
    ['x', 'y', 'z', 'w']
      .slice(0, n)
      .forEach((name, k) => members.set(name, { name, offset: k * component, bytes: component }));
    return { bytes: component * n, align: n === 3 ? component : Math.min(component * n, 16), members };
  }
  const bytes = elementBytesOf(t);
  return bytes ? { bytes, align: bytes, members: null } : null;
}

/** A record's layout from its fields' (C rules: each at its alignment, the size rounded to the largest). */
export function recordLayout(fields: ReadonlyArray<{ name: string; layout: TypeLayout }>): TypeLayout | null {
  if (fields.length === 0) return null;
  const members = new Map<string, MemberPlace>();
  let offset = 0;
  let align = 1;
  for (const { name, layout } of fields) {
    offset = Math.ceil(offset / layout.align) * layout.align;
    members.set(name, { name, offset, bytes: layout.bytes });
    offset += layout.bytes;
    align = Math.max(align, layout.align);
  }
  return { bytes: Math.ceil(offset / align) * align, align, members };
}

/** What a pointer or array is known to point at: its memory and its element size. */
export interface PointerInfo {
  space: MemorySpace;
  elementType: string;
  elementBytes: number;
  /** Bytes one step of the pointer's value counts, where a cast to a wider element left it counting the narrower one. */
  unit?: number;
}

/** The type a pointer type points at (`const float* __restrict__` → `float`), or null when it is not one pointer. */
export function pointeeType(type: string): string | null {
  const t = type
    .replace(/\b(?:const|volatile|__restrict__|__restrict|restrict|__global__|__device__|struct|class)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const m = /^([\w:<>, ]+?)\s*\*$/.exec(t);
  return m ? m[1].trim() : null;
}

/** A type's size in bytes when it is a built-in scalar or vector type. */
export function elementBytesOf(type: string): number | null {
  const t = type
    .replace(/\b(?:const|volatile|struct)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (/\*/.test(t)) return null;
  return sizeofType(t) ?? sizeofType(t.replace(/^(?:std|cuda)::/, ''));
}
