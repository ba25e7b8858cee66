/**
 * The value analysis of one function: the values its locals hold at every point, over every path
 * (ir/dataflow.ts), each parameter bound to what a call passes or unknown. A branch whose condition
 * the values decide takes one arm. The final pass hands each launch and call, with the values at
 * that point, to an observer.
 */
import type { Expr } from '../ir/expr';
import type { Block, Exit, FunctionIR, Stmt } from '../ir/function-ir';
import { allSuccessors, solveForward, type Analysis } from '../ir/dataflow';
import { castTo, copyEnv, emptyFor, Evaluator, truthOf, type Env, type Observer, type Resolver } from './evaluate';
import { BOTTOM, equal, join, nums, paramBit, top, TOP, type Val } from './domain';

export interface FunctionValuesInput {
  ir: FunctionIR;
  resolver: Resolver;
  /** The parameters' values (missing ones are unknown, marked as coming from that parameter). */
  params?: ReadonlyArray<Val | undefined>;
  /** `this`'s members in a method (their values as the object holds them), or null. */
  self?: Val | null;
}

export interface FunctionValues {
  /** What the function returns, over every return. */
  returns: Val;
  /** The object a method (a constructor) leaves, over every way out; null for a function. */
  self: Val | null;
  /**
   * Each parameter's value over every way out: what a caller's variable bound to a reference
   * parameter holds after the call (`void config(dim3& block) { block.x = 512; }`).
   */
  paramsOut: Val[];
  /** The state at the start of each block (undefined: not reached). */
  in: Array<Env | undefined>;
}

export function analyzeFunctionValues(input: FunctionValuesInput, observer?: Observer): FunctionValues {
  const { ir, resolver } = input;
  const evaluator = new Evaluator(ir, resolver);
  const entry: Env = { vals: new Map(), self: input.self ?? null };
  ir.params.forEach((id, k) => {
    const given = convert(ir.locals[id].type, input.params?.[k]);
    entry.vals.set(id, given ?? top(`\`${ir.locals[id].name}\` is a parameter`, paramBit(k)));
  });
  let returns: Val = BOTTOM;
  let self: Val | null = null;
  const paramsOut: Val[] = ir.params.map(() => BOTTOM);
  const analysis: Analysis<Env> = {
    entry,
    join: joinEnv,
    equal: equalEnv,
    widen: widenEnv,
    transfer: (block, state) => {
      const env = copyEnv(state);
      for (const s of block.stmts) step(evaluator, ir, s, env);
      exitEffects(evaluator, block.exit, env);
      return env;
    },
    successors: (exit, env) => feasible(evaluator, exit, env),
    edge: (exit, to, env) => refined(evaluator, ir, exit, to, env),
  };
  const solution = solveForward(ir, analysis);
  // The final pass: every reached block once more, with its fixed-point state, for returns and the observer.
  // A block only a branch on a known condition keeps out (`if (K < 10)` of a macro's K) is still code the
  // compiler reads: the observer sees it too, with nothing known of the locals there.
  evaluator.observer = observer ?? null;
  const written = observer ? structurallyReachable(ir) : null;
  for (const block of ir.blocks) {
    const state =
      solution.in[block.id] ?? (written?.has(block.id) ? { vals: new Map(), self: input.self ?? null } : undefined);
    if (!state) continue;
    const env = copyEnv(state);
    for (const s of block.stmts) step(evaluator, ir, s, env);
    if (block.exit.k === 'return')
      returns = join(returns, block.exit.value ? evaluator.eval(block.exit.value, env) : TOP);
    else exitEffects(evaluator, block.exit, env);
    if (block.exit.k === 'return' || block.id === ir.exit) {
      if (env.self) self = self ? join(self, env.self) : env.self;
      ir.params.forEach((id, k) => (paramsOut[k] = join(paramsOut[k], env.vals.get(id) ?? TOP)));
    }
  }
  evaluator.observer = null;
  return {
    returns: returns.k === 'bottom' ? TOP : returns,
    self,
    paramsOut: paramsOut.map((v) => (v.k === 'bottom' ? TOP : v)),
    in: solution.in,
  };
}

/** A value passed to a parameter of `type`: `256` passed as a `dim3` is (256, 1, 1). */
function convert(type: string, v: Val | undefined): Val | undefined {
  if (!v) return v;
  if (/^(const\s+)?(::)?dim3\s*&?$/.test(type.trim()) && v.k === 'num')
    return {
      k: 'dim3',
      x: v,
      y: { k: 'num', values: [1], integer: true },
      z: { k: 'num', values: [1], integer: true },
    };
  if (v.k === 'num') return castTo(type, v);
  return v;
}

/** The blocks some path of the graph reaches from the entry, whatever the conditions. */
function structurallyReachable(ir: FunctionIR): Set<number> {
  const seen = new Set<number>([0]);
  const queue = [0];
  while (queue.length)
    for (const to of allSuccessors(ir.blocks[queue.pop()!].exit)) {
      if (seen.has(to)) continue;
      seen.add(to);
      queue.push(to);
    }
  return seen;
}

function step(evaluator: Evaluator, ir: FunctionIR, s: Stmt, env: Env): void {
  if (s.k === 'expr') {
    evaluator.eval(s.expr, env);
    return;
  }
  const local = ir.locals[s.local];
  evaluator.observer?.decl?.(s.local, env);
  let value: Val;
  if (!s.init)
    value = local.dims
      ? TOP
      : emptyFor(local.type) === TOP
        ? top(`\`${local.name}\` is not initialised`)
        : emptyFor(local.type);
  else if (s.init.k === 'init' && s.init.type === null)
    value = evaluator.init(local.type, s.init.items, s.init.designators, env);
  else value = evaluator.eval(s.init, env);
  // `dim3 b = 256;` and `int n = 2.5;` convert as the declared type says.
  if (/^(const\s+)?(::)?dim3$/.test(local.type.trim()) && value.k === 'num')
    value = {
      k: 'dim3',
      x: value,
      y: { k: 'num', values: [1], integer: true },
      z: { k: 'num', values: [1], integer: true },
    };
  else if (value.k === 'num') value = castTo(local.type, value);
  env.vals.set(s.local, local.reference ? TOP : value);
}

function exitEffects(evaluator: Evaluator, exit: Exit, env: Env): void {
  if (exit.k === 'branch') evaluator.eval(exit.cond, env);
  else if (exit.k === 'switch') evaluator.eval(exit.value, env);
}

/** The edges the exit can take: a condition the values decide takes one. */
function feasible(evaluator: Evaluator, exit: Exit, env: Env): number[] {
  if (exit.k === 'branch') {
    const truth = truthOf(evaluator.eval(exit.cond, copyEnv(env)));
    if (truth === true) return [exit.then];
    if (truth === false) return [exit.else];
  }
  if (exit.k === 'switch') {
    const v = evaluator.eval(exit.value, copyEnv(env));
    if (v.k === 'num') {
      const out = new Set<number>();
      const caseValues = exit.cases.map((c) => (c.value ? evaluator.eval(c.value, copyEnv(env)) : null));
      let matchedAll = true;
      for (const x of v.values) {
        const hit = exit.cases.findIndex((c, k) => {
          const cv = caseValues[k];
          return cv?.k === 'num' && cv.values.length === 1 && cv.values[0] === x;
        });
        if (hit >= 0) out.add(exit.cases[hit].to);
        else if (caseValues.some((cv) => cv === null || cv.k !== 'num' || cv.values.length !== 1)) matchedAll = false;
        else {
          const d = exit.cases.find((c) => c.value === null);
          if (d) out.add(d.to);
        }
      }
      if (matchedAll) return [...out];
    }
  }
  return allSuccessors(exit);
}

/**
 * The state on the edge to `to`: where the exit compares a local with constants, the local holds
 * what the edge says it does. `switch (threads) { case 512: ... }` launches with 512 in that case;
 * so does the then-arm of `if (threads == 512)` (and the else-arm of `!=`).
 */
function refined(evaluator: Evaluator, ir: FunctionIR, exit: Exit, to: number, env: Env): Env {
  let target: number | null = null;
  let values: number[] | null = null;
  const constant = (e: Expr): number | null => {
    const v = evaluator.eval(e, copyEnv(env));
    return v.k === 'num' && v.values.length === 1 ? v.values[0] : null;
  };
  if (exit.k === 'switch') {
    target = localNamed(exit.value);
    const hits = exit.cases.filter((c) => c.to === to);
    // The default arm (or the way past a switch without one) is reached by the values no case names.
    if (target === null || hits.length === 0 || hits.some((c) => c.value === null)) return env;
    const vs = hits.map((c) => constant(c.value!));
    if (vs.some((v) => v === null)) return env;
    values = vs as number[];
  } else if (exit.k === 'branch' && exit.then !== exit.else && exit.cond.k === 'binary') {
    const { op, left, right } = exit.cond;
    if (!((op === '==' && to === exit.then) || (op === '!=' && to === exit.else))) return env;
    const [name, other] = localNamed(left) !== null ? [left, right] : [right, left];
    target = localNamed(name);
    const v = target === null ? null : constant(other);
    if (v === null) return env;
    values = [v];
  }
  if (target === null || values === null) return env;
  const local = ir.locals[target];
  if (local.reference || local.dims) return env;
  const held = env.vals.get(target);
  let next: Val;
  if (held === undefined || held.k === 'top') next = castTo(local.type, nums(values, true));
  else if (held.k === 'num') {
    const kept = held.values.filter((x) => values!.includes(x));
    // None kept: the edge is not taken with what the local holds (`feasible` says so); left as it is.
    if (kept.length === 0 || kept.length === held.values.length) return env;
    next = nums(kept, held.integer);
  } else return env;
  const out = copyEnv(env);
  out.vals.set(target, next);
  return out;
}

/** The local `e` names, if it is one. */
function localNamed(e: Expr): number | null {
  return e.k === 'name' && e.local !== null ? e.local : null;
}

export function joinEnv(a: Env, b: Env): Env {
  const vals = new Map(a.vals);
  for (const [k, v] of b.vals) vals.set(k, join(vals.get(k) ?? BOTTOM, v));
  // A local one path declared and the other did not: what the other holds is nothing yet.
  const self = a.self && b.self ? join(a.self, b.self) : (a.self ?? b.self);
  return { vals, self };
}

export function equalEnv(a: Env, b: Env): boolean {
  if (a.vals.size !== b.vals.size) return false;
  for (const [k, v] of a.vals) {
    const w = b.vals.get(k);
    if (!w || !equal(v, w)) return false;
  }
  if (!!a.self !== !!b.self) return false;
  return !a.self || equal(a.self, b.self!);
}

/** Whatever still changes at a loop head becomes unknown (a value the loop steps, a flag it sets). */
export function widenEnv(previous: Env, next: Env): Env {
  const vals = new Map(next.vals);
  for (const [k, v] of next.vals) {
    const before = previous.vals.get(k);
    if (before && !equal(before, v)) vals.set(k, widenVal(v));
  }
  const self = previous.self && next.self && !equal(previous.self, next.self) ? widenVal(next.self) : next.self;
  return { vals, self };
}

function widenVal(v: Val): Val {
  if (v.k === 'dim3') return { k: 'dim3', x: widenVal(v.x), y: widenVal(v.y), z: widenVal(v.z) };
  return top('changed in a loop', v.k === 'top' ? v.params : 0);
}

export type { Block };
