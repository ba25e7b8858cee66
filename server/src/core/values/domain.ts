/**
 * The abstract values of the host-side value analysis: what a variable can hold at a point, over
 * every path that reaches it. A few numbers (one is a constant; two to eight are the values an
 * if-chain or a ternary leaves, each of them possible), a `dim3` or another aggregate field by
 * field, a function (a kernel named or passed), or unknown. Unknown remembers which parameters of
 * the function it derives from, so that a call that binds them can tell more.
 */
import type { TemplateArg } from '../ir/expr';

/** More distinct values than a hover shows in a row each: the value is unknown. */
export const MAX_VALUES = 8;

export interface FnRef {
  /** As written (`ns::k`), or a lambda's `[lambda@offset]`. */
  name: string;
  /** The variable it was read from first (`fp` in `auto fp = k; fp<<<...>>>`), if any. */
  through?: string;
  templateArgs: ReadonlyArray<{ type: string } | { value: Val }> | null;
  /** The written template arguments, for messages (`k<float, 128>`). */
  written: TemplateArg[] | null;
  /**
   * The file whose text `written` is placed in: a kernel named in one file and launched in another
   * (through a wrapper of a header) is quoted from where it was named.
   */
  writtenIn?: string;
}

export type Val =
  /**
   * Unknown. `params`: the parameters (bit k for parameter k) it derives from; `why`: for a note;
   * `name`: the name it is the value of, when it is one the unit does not declare (a kernel handle).
   */
  | { k: 'top'; params: number; why?: string; name?: string }
  | { k: 'num'; values: readonly number[]; integer: boolean }
  | { k: 'dim3'; x: Val; y: Val; z: Val }
  | { k: 'agg'; type: string | null; fields: ReadonlyMap<string, Val> }
  | { k: 'fn'; refs: readonly FnRef[] }
  /** Nothing yet (no path reaches here). */
  | { k: 'bottom' };

export const TOP: Val = { k: 'top', params: 0 };

/** The bit an unknown carries when it derives from parameter `k` of the function analysed. */
export function paramBit(k: number): number {
  return k < 20 ? 1 << k : 0;
}

/** The bit of template parameter `k`. */
export function templateBit(k: number): number {
  return k < 9 ? 1 << (20 + k) : 0;
}

/** The bit of the object a method runs on (`this`'s members). */
export const SELF_BIT = 1 << 29;
/** The bit of a parameter of the class template a method belongs to (what `C<args>::f` binds). */
export const CLASS_TEMPLATE_BIT = 1 << 30;
export const BOTTOM: Val = { k: 'bottom' };

export function top(why?: string, params = 0): Val {
  return why === undefined && params === 0 ? TOP : { k: 'top', params, ...(why ? { why } : {}) };
}

export function num(value: number, integer = Number.isInteger(value)): Val {
  return { k: 'num', values: [value], integer };
}

export function nums(values: readonly number[], integer: boolean): Val {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  if (sorted.length === 0) return BOTTOM;
  if (sorted.length > MAX_VALUES || sorted.some((v) => !Number.isFinite(v))) return TOP;
  return { k: 'num', values: sorted, integer };
}

/** The one number `v` is, or null. */
export function single(v: Val): number | null {
  return v.k === 'num' && v.values.length === 1 ? v.values[0] : null;
}

/** The parameters an unknown derives from (0 for a known value). */
export function paramsOf(v: Val): number {
  switch (v.k) {
    case 'top':
      return v.params;
    case 'dim3':
      return paramsOf(v.x) | paramsOf(v.y) | paramsOf(v.z);
    case 'agg': {
      let p = 0;
      for (const f of v.fields.values()) p |= paramsOf(f);
      return p;
    }
    default:
      return 0;
  }
}

/** A dim3 of one number, or of each component of an aggregate. */
export function asDim3(v: Val): Val {
  if (v.k === 'dim3' || v.k === 'top' || v.k === 'bottom') return v;
  if (v.k === 'num') return { k: 'dim3', x: v, y: num(1), z: num(1) };
  if (v.k === 'agg' && v.fields.has('x'))
    return { k: 'dim3', x: v.fields.get('x')!, y: v.fields.get('y') ?? num(1), z: v.fields.get('z') ?? num(1) };
  return top();
}

export function join(a: Val, b: Val): Val {
  if (a === b || b.k === 'bottom') return a;
  if (a.k === 'bottom') return b;
  if (a.k === 'top' && b.k === 'top' && a.name && a.name === b.name)
    return a.params === b.params ? a : { ...a, params: a.params | b.params };
  if (a.k === 'top' || b.k === 'top') return top(whyOf(a) ?? whyOf(b), paramsOf(a) | paramsOf(b));
  if (a.k === 'num' && b.k === 'num') return nums([...a.values, ...b.values], a.integer && b.integer);
  if (a.k === 'dim3' || b.k === 'dim3') {
    const x = asDim3(a);
    const y = asDim3(b);
    if (x.k !== 'dim3' || y.k !== 'dim3') return top(undefined, paramsOf(a) | paramsOf(b));
    return { k: 'dim3', x: join(x.x, y.x), y: join(x.y, y.y), z: join(x.z, y.z) };
  }
  if (a.k === 'agg' && b.k === 'agg') {
    const fields = new Map<string, Val>();
    for (const [name, v] of a.fields) fields.set(name, join(v, b.fields.get(name) ?? TOP));
    for (const [name, v] of b.fields) if (!a.fields.has(name)) fields.set(name, join(v, TOP));
    return { k: 'agg', type: a.type === b.type ? a.type : null, fields };
  }
  if (a.k === 'fn' && b.k === 'fn') {
    const refs = [...a.refs];
    for (const r of b.refs) if (!refs.some((x) => sameRef(x, r))) refs.push(r);
    if (refs.length <= 4) return { k: 'fn', refs };
    // Many instances: each function stays named, its instance unknown among them.
    const functions = sameFunctionRefs(refs);
    return functions.length > 4 ? TOP : { k: 'fn', refs: functions };
  }
  return top(undefined, paramsOf(a) | paramsOf(b));
}

function whyOf(v: Val): string | undefined {
  return v.k === 'top' ? v.why : undefined;
}

/**
 * References that name one function (`k<32>` and `k<64>` from a launch reached two ways) as one
 * reference: the function is known, its instance only where they agree (each template argument
 * joined in its place: a type the references disagree on is unknown).
 */
export function sameFunctionRefs(refs: readonly FnRef[]): FnRef[] {
  const out: FnRef[] = [];
  for (const r of refs) {
    const k = out.findIndex((x) => x.name === r.name);
    if (k < 0) out.push(r);
    else if (!sameRef(out[k], r)) out[k] = mergeRefs(out[k], r);
  }
  return out;
}

function mergeRefs(a: FnRef, b: FnRef): FnRef {
  const x = a.templateArgs;
  const y = b.templateArgs;
  const templateArgs =
    x && y && x.length === y.length
      ? x.map((t, k): { type: string } | { value: Val } => {
          const u = y[k];
          if ('type' in t) return 'type' in u && u.type === t.type ? t : { value: TOP };
          return 'value' in u ? { value: join(t.value, u.value) } : { value: TOP };
        })
      : null;
  const sameWritten =
    a.writtenIn === b.writtenIn && JSON.stringify(a.written ?? null) === JSON.stringify(b.written ?? null);
  return {
    name: a.name,
    ...(a.through !== undefined && a.through === b.through ? { through: a.through } : {}),
    templateArgs,
    written: sameWritten ? a.written : null,
    ...(sameWritten && a.writtenIn !== undefined ? { writtenIn: a.writtenIn } : {}),
  };
}

export function sameRef(a: FnRef, b: FnRef): boolean {
  if (a.name !== b.name) return false;
  const x = a.templateArgs;
  const y = b.templateArgs;
  if (!x || !y) return x === y;
  return (
    x.length === y.length &&
    x.every((t, k) => {
      const u = y[k];
      if ('type' in t) return 'type' in u && t.type === u.type;
      return 'value' in u && equal(t.value, u.value);
    })
  );
}

export function equal(a: Val, b: Val): boolean {
  if (a === b) return true;
  if (a.k !== b.k) return false;
  switch (a.k) {
    case 'top':
      // The name is what a launch reads as its kernel (an undeclared `k`): losing it is a change.
      return a.params === (b as typeof a).params && a.name === (b as typeof a).name;
    case 'bottom':
      return true;
    case 'num': {
      const y = b as typeof a;
      return (
        a.integer === y.integer && a.values.length === y.values.length && a.values.every((v, k) => v === y.values[k])
      );
    }
    case 'dim3': {
      const y = b as typeof a;
      return equal(a.x, y.x) && equal(a.y, y.y) && equal(a.z, y.z);
    }
    case 'agg': {
      const y = b as typeof a;
      if (a.fields.size !== y.fields.size) return false;
      for (const [n, v] of a.fields) {
        const w = y.fields.get(n);
        if (!w || !equal(v, w)) return false;
      }
      return true;
    }
    case 'fn': {
      const y = b as typeof a;
      return a.refs.length === y.refs.length && a.refs.every((r, k) => sameRef(r, y.refs[k]));
    }
  }
}

/** A short key of a value (memo keys of calls analysed with their arguments). */
export function valKey(v: Val): string {
  switch (v.k) {
    case 'top':
      return v.params ? `?${v.params}` : '?';
    case 'bottom':
      return '_';
    case 'num':
      return `${v.integer ? '' : 'f'}${v.values.join('|')}`;
    case 'dim3':
      return `(${valKey(v.x)},${valKey(v.y)},${valKey(v.z)})`;
    case 'agg':
      return `{${[...v.fields].map(([n, f]) => `${n}:${valKey(f)}`).join(',')}}`;
    case 'fn':
      return `fn[${v.refs.map((r) => `${r.name}<${(r.templateArgs ?? []).map((t) => ('type' in t ? t.type : valKey(t.value))).join(',')}>`).join('|')}]`;
  }
}
