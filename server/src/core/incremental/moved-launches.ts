/**
 * A function's launches and opt-ins, kept from an earlier version, moved to where the function
 * stands now. What a key keeps is the same text in both versions (the function, the bodies it
 * calls, the text outside the bodies), so every offset of the document in it moves with the body
 * it is in (function-keys.ts `movedOffsets`); offsets in the unit's other files stay.
 */
import type { Expr, MacroOrigin, Range, TemplateArg } from '../ir/expr';
import type { FunctionLaunches, LaunchObservation, OptInObservation } from '../facts/launch-sites';
import type { FnRef, Val } from '../values/domain';

type Move = (offset: number) => number;

/** `launches` of the document `path`, moved by `move`. */
export function movedLaunches(launches: FunctionLaunches, path: string, move: Move): FunctionLaunches {
  return {
    observations: launches.observations.map((o) => movedObservation(o, path, move)),
    optIns: launches.optIns.map((o): OptInObservation => (o.file === path ? { ...o, at: range(o.at, move) } : o)),
  };
}

function movedObservation(o: LaunchObservation, path: string, move: Move): LaunchObservation {
  // The launch and its expressions are in the file it is written in, its kernel's written arguments
  // where the kernel was named; where it is reported (the launch, or the document's call of a
  // wrapper) is in the document.
  const here = o.launchFile === path;
  const expr = (e: Expr | null) => (e && here ? movedExpr(e, path, move) : e);
  const val = (v: Val) => movedVal(v, path, move, here);
  const moved: LaunchObservation = {
    ...o,
    at: range(o.at, move),
    nameAt: range(o.nameAt, move),
    launchAt: here ? range(o.launchAt, move) : o.launchAt,
    // Its identity (the call sites down to the launch) keeps the places it was read at: it only tells
    // the function's launches apart.
  };
  // The values and expressions are read only where the launch's facts or target are made again (the
  // layer keeps them by the observation this one is moved from): moved when first read.
  movedWhenRead(moved, 'kernel', () => val(o.kernel));
  movedWhenRead(moved, 'kernelExpr', () => expr(o.kernelExpr));
  movedWhenRead(moved, 'grid', () => val(o.grid));
  movedWhenRead(moved, 'block', () => val(o.block));
  movedWhenRead(moved, 'smem', () => o.smem && val(o.smem));
  movedWhenRead(moved, 'exprs', () => ({
    grid: expr(o.exprs.grid),
    block: expr(o.exprs.block),
    smem: expr(o.exprs.smem),
    stream: expr(o.exprs.stream),
  }));
  return moved;
}

/** `field` of `o` made by `make` when first read, then kept as a plain field (a copy with `...` reads it). */
function movedWhenRead<K extends keyof LaunchObservation>(
  o: LaunchObservation,
  field: K,
  make: () => LaunchObservation[K],
): void {
  Object.defineProperty(o, field, {
    configurable: true,
    enumerable: true,
    get: () => {
      const value = make();
      Object.defineProperty(o, field, { value, writable: true, enumerable: true, configurable: true });
      return value;
    },
  });
}

function range(r: Range, move: Move): Range {
  return [move(r[0]), move(r[1])];
}

/** A copy of an expression with its places (and those of the macros it expands, when the document defines them) moved. */
function movedExpr(e: Expr, path: string, move: Move): Expr {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === 'at') out.at = range(v as Range, move);
    else if (k === 'from') {
      const from = v as MacroOrigin;
      out.from = from.file === path ? { ...from, defAt: move(from.defAt) } : from;
    } else if (Array.isArray(v))
      out[k] = v.map((x) => (isExpr(x) ? movedExpr(x, path, move) : movedArg(x, path, move)));
    else if (isExpr(v)) out[k] = movedExpr(v, path, move);
    else out[k] = v;
  }
  return out as Expr;
}

function isExpr(v: unknown): v is Expr {
  return typeof v === 'object' && v !== null && 'k' in v && 'at' in v;
}

/** An item of an expression's list that is not an expression: a template argument, a designator. */
function movedArg(x: unknown, path: string, move: Move): unknown {
  if (typeof x === 'object' && x !== null && 'expr' in x)
    return { expr: movedExpr((x as { expr: Expr }).expr, path, move) };
  return x;
}

/**
 * `v` moved: all of it where the launch is in the document (`here`); elsewhere only the written
 * arguments of a kernel the document named (a header's wrapper launches what a call here passes).
 */
function movedVal(v: Val, path: string, move: Move, here: boolean): Val {
  switch (v.k) {
    case 'dim3':
      return {
        k: 'dim3',
        x: movedVal(v.x, path, move, here),
        y: movedVal(v.y, path, move, here),
        z: movedVal(v.z, path, move, here),
      };
    case 'agg':
      return {
        ...v,
        fields: new Map([...v.fields].map(([name, f]) => [name, movedVal(f, path, move, here)] as const)),
      };
    case 'fn':
      return { k: 'fn', refs: v.refs.map((r) => movedRef(r, path, move, here)) };
    default:
      return v;
  }
}

function movedRef(r: FnRef, path: string, move: Move, here: boolean): FnRef {
  // A lambda is named by where it is written.
  const lambda = here ? /^\[lambda@(\d+)\]$/.exec(r.name) : null;
  const writtenHere = (r.writtenIn ?? (here ? path : undefined)) === path;
  return {
    ...r,
    name: lambda ? `[lambda@${move(Number(lambda[1]))}]` : r.name,
    templateArgs:
      r.templateArgs?.map((t) => ('value' in t ? { value: movedVal(t.value, path, move, here) } : t)) ?? r.templateArgs,
    written: writtenHere
      ? (r.written?.map((t: TemplateArg) => ('expr' in t ? { expr: movedExpr(t.expr, path, move) } : t)) ?? r.written)
      : r.written,
  };
}
