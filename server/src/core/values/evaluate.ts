/**
 * Expressions of the function IR evaluated over the value domain (domain.ts), with the locals'
 * values at that point: arithmetic as C does it on every value a variable may hold, `dim3` and
 * other aggregates field by field, functions as values, and the effects of assignments,
 * increments and calls on the locals. What the function does not fix is unknown, and says why.
 */
import { forEachExpr, type Expr, type TemplateArg } from '../ir/expr';
import type { FunctionIR } from '../ir/function-ir';
import { sizeofType } from '../text/const-eval';
import { asDim3, BOTTOM, join, num, nums, paramsOf, top, TOP, type FnRef, type Val } from './domain';

/** The locals' values at a point (by local id), and `this`'s members in a method. */
export interface Env {
  vals: Map<number, Val>;
  self: Val | null;
}

export function copyEnv(env: Env): Env {
  // In the same order; `new Map(map)` costs twice as much, and every block's transfer starts from a copy.
  const vals = new Map<number, Val>();
  env.vals.forEach((v, k) => vals.set(k, v));
  return { vals, self: env.self };
}

/** What the evaluator asks of the program beyond the function. */
export interface Resolver {
  /** A name no local of the function declares: a constant, an enumerator, a function, a template parameter. */
  name(name: string, templateArgs: TemplateArg[] | null, evaluate: (e: Expr) => Val): Val | null;
  /**
   * What a call returns, following the callee where the program has it, and each parameter's value
   * as the callee leaves it (a reference parameter written through); null when it is not followed.
   */
  call(callee: Val, args: Val[], argExprs: readonly Expr[], at: Expr): CallOutcome | null;
  /** The callee takes its parameter `index` by a reference it may write through. */
  writesThrough(callee: Val, index: number): boolean;
  /** `sizeof` of a type the program names (a template parameter bound to a type, a typedef). */
  sizeofType(type: string): number | null;
  /** An object of a class the program defines, made by its constructor from these arguments; null when not followed. */
  construct(type: string, args: Val[]): Val | null;
  /** The value a template parameter of this name is bound to in the code evaluated, or null where none is. */
  templateParameter?(name: string): Val | null;
  /** The file the code evaluated is written in, where the resolver knows it. */
  readonly file?: string;
  /**
   * `name` is a macro some build of the unit defines, and the unit declares nothing else of that
   * name: where it stands unexpanded (a build without the macro), the code does not compile.
   */
  namesNothing?(name: string): boolean;
}

export interface CallOutcome {
  value: Val;
  /**
   * By parameter, for those the callee takes by a reference it may write through: its value where
   * the callee returns (null: not followed, as for a declaration or a constructor).
   */
  paramsOut: ReadonlyArray<Val | undefined> | null;
}

/** Sees what the final pass over a function evaluates: launches and calls with the values at that point. */
export interface Observer {
  /** `args`: the kernel arguments' values, in order. */
  launch?(e: Extract<Expr, { k: 'launch' }>, callee: Val, config: Val[], env: Env, args: Val[]): void;
  /** A declaration, with the locals' values just before it (an array's extents read there). */
  decl?(local: number, env: Env): void;
  /** `pointees[k]`: for an argument `&x` (or `&x.f`), what `x` (`x.f`) held before the call. */
  call?(
    e: Extract<Expr, { k: 'call' }>,
    callee: Val,
    args: Val[],
    env: Env,
    pointees: ReadonlyArray<Val | undefined>,
  ): void;
}

const RUNTIME_BUILTINS: ReadonlySet<string> = new Set(['threadIdx', 'blockIdx', 'blockDim', 'gridDim']);
const DIM3_TYPES = /^(?:const\s+)?(?:::)?dim3$|^(?:const\s+)?(?:::)?uint3$/;
/** The fields of `cudaLaunchConfig_t` in declaration order (CUDA runtime API), for `{grid, block, smem, stream}`. */
const LAUNCH_CONFIG_FIELDS: readonly string[] = [
  'gridDim',
  'blockDim',
  'dynamicSmemBytes',
  'stream',
  'attrs',
  'numAttrs',
];
const PURE_MATH: ReadonlyMap<string, (v: number[]) => number | null> = new Map<string, (v: number[]) => number | null>([
  ['min', (v) => (v.length === 2 ? Math.min(v[0], v[1]) : null)],
  ['max', (v) => (v.length === 2 ? Math.max(v[0], v[1]) : null)],
  ['umin', (v) => (v.length === 2 ? Math.min(v[0], v[1]) : null)],
  ['umax', (v) => (v.length === 2 ? Math.max(v[0], v[1]) : null)],
  ['abs', (v) => (v.length === 1 ? Math.abs(v[0]) : null)],
]);

/**
 * `e` reads, unexpanded, a macro's name that names nothing the unit declares: the configuration of
 * the unit's macros it was expanded in is a build in which this code does not compile.
 */
export function readsUndeclaredMacro(e: Expr, resolver: Pick<Resolver, 'namesNothing'>): boolean {
  const namesNothing = resolver.namesNothing;
  if (!namesNothing) return false;
  let found = false;
  forEachExpr(e, (x) => {
    if (found) return false;
    if (x.k === 'name' && x.local === null && x.templateArgs === null && !RUNTIME_BUILTINS.has(x.name))
      found = namesNothing.call(resolver, x.name);
    return !found;
  });
  return found;
}

export class Evaluator {
  observer: Observer | null = null;

  constructor(
    private readonly ir: FunctionIR,
    private readonly resolver: Resolver,
  ) {}

  /** Runs `e` for its value, applying its effects to `env`. */
  eval(e: Expr, env: Env): Val {
    switch (e.k) {
      case 'num':
        return num(e.value, e.integer);
      case 'str':
        return TOP;
      case 'name':
        return this.name(e, env);
      case 'this':
        return env.self ?? TOP;
      case 'unary':
        return this.unary(e, env);
      case 'update': {
        const old = this.eval(e.arg, env);
        const next = arith(e.op === '++' ? '+' : '-', old, num(1));
        this.store(e.arg, next, env);
        return e.prefix ? next : old;
      }
      case 'binary':
        return this.binary(e.op, e.left, e.right, env);
      case 'assign': {
        // A braced list takes the shape of what it is assigned to (`block_ = {b, 1, 1}` of a dim3).
        const value =
          e.value.k === 'init' && e.value.type === null
            ? this.init(shapeName(this.eval(e.target, copyEnv(env))), e.value.items, e.value.designators, env)
            : this.eval(e.value, env);
        const next = e.op === '=' ? value : arith(e.op.slice(0, -1), this.eval(e.target, env), value);
        this.store(e.target, next, env);
        return next;
      }
      case 'cond': {
        const c = this.eval(e.cond, env);
        const truth = truthOf(c);
        if (truth === true) return this.eval(e.then, env);
        if (truth === false) return this.eval(e.else, env);
        return join(this.eval(e.then, env), this.eval(e.else, env));
      }
      case 'call':
        return this.call(e, env);
      case 'launch': {
        const callee = this.eval(e.callee, env);
        // `<<<grid, {32, 8, 1}>>>`: a braced list there makes the dim3 the parameter is.
        const config = e.config.map((c, k) =>
          k < 2 && c.k === 'init' && !c.type ? this.init('dim3', c.items, c.designators, env) : this.eval(c, env),
        );
        const args = e.args.map((a) => this.eval(a, env));
        this.observer?.launch?.(e, callee, config, env, args);
        return TOP;
      }
      case 'field': {
        const object = this.eval(e.object, env);
        // `f.operator()` (`f.template operator()<16, 256>` for a lambda with a template head) is `f`
        // itself, called with those template arguments.
        if (e.field === 'operator()' && !e.arrow && object.k === 'fn') {
          const written = e.templateArgs;
          if (!written) return object;
          const templateArgs = written.map((t) => ('type' in t ? { type: t.type } : { value: this.eval(t.expr, env) }));
          return { k: 'fn', refs: object.refs.map((r) => ({ ...r, templateArgs, written })) };
        }
        return fieldOf(object, e.field);
      }
      case 'index':
        this.eval(e.object, env);
        this.eval(e.index, env);
        return TOP;
      case 'cast': {
        const v = this.eval(e.arg, env);
        return castTo(e.type, v);
      }
      case 'sizeof': {
        if (e.type !== null) return known(this.sizeOf(e.type));
        if (e.arg?.k === 'name') {
          const local = e.arg.local !== null ? this.ir.locals[e.arg.local] : null;
          return known(local ? (local.dims ? null : this.sizeOf(local.type)) : this.sizeOf(e.arg.name));
        }
        return TOP;
      }
      case 'init':
        return this.init(e.type, e.items, e.designators, env);
      case 'comma': {
        let last: Val = TOP;
        for (const x of e.items) last = this.eval(x, env);
        return last;
      }
      case 'lambda':
        return { k: 'fn', refs: [{ name: `[lambda@${e.at[0]}]`, templateArgs: null, written: null }] };
      case 'asm':
        for (const o of e.outputs) this.store(o, top('set by inline assembly'), env);
        for (const i of e.inputs) this.eval(i, env);
        return TOP;
      case 'alternatives': {
        // A configuration that leaves a macro's name unexpanded where that name declares nothing is a
        // build that does not compile (darknet's `BLOCK`, defined under `#ifdef GPU`, which every build
        // of its .cu files sets): it lends no value. Where every configuration is such, all are kept.
        const compiling = e.options.filter((o) => !readsUndeclaredMacro(o, this.resolver));
        let v: Val = BOTTOM;
        for (const o of compiling.length > 0 ? compiling : e.options) v = join(v, this.eval(o, env));
        return v;
      }
      case 'unknown':
        return TOP;
    }
  }

  private sizeOf(type: string): number | null {
    return sizeofType(type) ?? this.resolver.sizeofType(type);
  }

  private name(e: Extract<Expr, { k: 'name' }>, env: Env): Val {
    if (e.local !== null) {
      const local = this.ir.locals[e.local];
      // An expression of another function's body read alone (an array size): its locals are not here.
      if (!local) return top(`\`${e.name}\` is a local of the function`);
      // A reference parameter holds what the call bound it to (its writes go through `store`); a
      // local reference aliases an object whose later writes are not followed.
      if (local.reference && !local.param) return top(`\`${local.name}\` is a reference`);
      if (local.dims) return TOP;
      const held =
        env.vals.get(e.local) ??
        top(local.param ? `\`${local.name}\` is a parameter` : `\`${local.name}\` is not set here`);
      // A function read from a variable remembers the first variable it came through.
      if (held.k === 'fn' && held.refs.some((r) => !r.through))
        return { k: 'fn', refs: held.refs.map((r) => (r.through ? r : { ...r, through: local.name })) };
      return held;
    }
    if (RUNTIME_BUILTINS.has(e.name)) return top(`\`${e.name}\` is known only at run time`);
    // CUDA's `warpSize`, unless a template parameter of that name hides it (`template <int warpSize>`).
    if (e.name === 'warpSize') return this.resolver.templateParameter?.(e.name) ?? num(32);
    // A member of the class a method belongs to.
    if (env.self?.k === 'agg' && !e.name.includes('::') && env.self.fields.has(e.name))
      return env.self.fields.get(e.name)!;
    const v = this.resolver.name(e.name, e.templateArgs, (x) => this.eval(x, env));
    if (v) return v;
    // A name the unit does not declare, written with template arguments, is a function template's
    // (`k<128, false>`): a function, though where it is defined is not in view.
    if (e.templateArgs)
      return {
        k: 'fn',
        refs: [
          {
            name: e.name.replace(/^::/, ''),
            templateArgs: e.templateArgs.map((t) =>
              'type' in t ? { type: t.type } : { value: this.eval(t.expr, env) },
            ),
            written: e.templateArgs,
            ...(this.resolver.file !== undefined ? { writtenIn: this.resolver.file } : {}),
          },
        ],
      };
    return { k: 'top', params: 0, why: `\`${e.name}\` is not a compile-time constant here`, name: e.name };
  }

  private unary(e: Extract<Expr, { k: 'unary' }>, env: Env): Val {
    if (e.op === '&') {
      // The address of a function is the function; of a local, a way to change it.
      const v = this.eval(e.arg, env);
      if (v.k === 'fn') return v;
      this.escape(e.arg, env, 'its address is taken');
      return TOP;
    }
    if (e.op === '*') {
      const v = this.eval(e.arg, env);
      return v.k === 'fn' ? v : TOP;
    }
    const v = this.eval(e.arg, env);
    if (v.k !== 'num') return top(undefined, paramsOf(v));
    switch (e.op) {
      case '-':
        return nums(
          v.values.map((x) => -x),
          v.integer,
        );
      case '+':
        return v;
      case '!':
        return nums(
          v.values.map((x) => (x === 0 ? 1 : 0)),
          true,
        );
      case '~':
        return v.integer
          ? nums(
              v.values.map((x) => ~x),
              true,
            )
          : TOP;
    }
    return TOP;
  }

  private binary(op: string, l: Expr, r: Expr, env: Env): Val {
    if (op === '&&' || op === '||') {
      const a = truthOf(this.eval(l, env));
      if (op === '&&' && a === false) return num(0);
      if (op === '||' && a === true) return num(1);
      const b = truthOf(this.eval(r, env));
      if (a !== 'unknown' && b !== 'unknown') return num(op === '&&' ? +(a && b) : +(a || b));
      if (op === '&&' && b === false) return num(0);
      if (op === '||' && b === true) return num(1);
      return nums([0, 1], true);
    }
    return arith(op, this.eval(l, env), this.eval(r, env));
  }

  private call(e: Extract<Expr, { k: 'call' }>, env: Env): Val {
    const callee = e.callee;
    const calleeName = callee.k === 'name' ? callee.name.replace(/^::/, '') : null;
    // `dim3(256, 1)`: a constructor.
    if (calleeName === 'dim3' || calleeName === 'uint3') return this.init('dim3', e.args, null, env);
    // `make_uint3(x, y, z)` (the toolkit's vector_functions.h): its three components, as `dim3` takes them.
    if ((calleeName === 'make_uint3' || calleeName === 'make_int3') && e.args.length === 3)
      return this.init('dim3', e.args, null, env);
    // `&x`, `&x.cfg`: what the object pointed at holds before the call (a field's read has no effect).
    const pointees = e.args.map((a) =>
      a.k !== 'unary' || a.op !== '&'
        ? undefined
        : a.arg.k === 'name' && a.arg.local !== null
          ? env.vals.get(a.arg.local)
          : a.arg.k === 'field' && !a.arg.arrow && a.arg.object.k === 'name' && a.arg.object.local !== null
            ? this.eval(a.arg, env)
            : undefined,
    );
    const args = e.args.map((a) => this.eval(a, env));
    if (calleeName) {
      const math = PURE_MATH.get(calleeName.replace(/^std::/, ''));
      if (math) return elementwise(args, math);
    }
    const fn = callee.k === 'name' || callee.k === 'field' ? this.eval(callee, env) : this.eval(callee, env);
    this.observer?.call?.(e, fn, args, env, pointees);
    const outcome = this.resolver.call(fn, args, e.args, e);
    // What the callee may change: locals whose address it is given, or that it takes by reference.
    // A reference the followed callee writes through holds what it leaves there on every way out.
    e.args.forEach((a, k) => {
      if (a.k === 'unary' && a.op === '&' && args[k].k !== 'fn') return; // escaped already
      if (a.k === 'name' && a.local !== null && this.resolver.writesThrough(fn, k))
        this.store(a, outcome?.paramsOut?.[k] ?? top(`\`${a.name}\` is set by the call of \`${calleeOf(e)}\``), env);
    });
    // A method called on a local object may change it.
    if (callee.k === 'field' && callee.object.k === 'name' && callee.object.local !== null && !callee.arrow) {
      const held = env.vals.get(callee.object.local);
      if (held && held.k === 'agg') env.vals.set(callee.object.local, top(`changed by \`${calleeOf(e)}\``));
    }
    return (
      outcome?.value ??
      top(
        `\`${calleeOf(e)}(...)\` is known only at run time`,
        args.reduce((p, a) => p | paramsOf(a), 0),
      )
    );
  }

  /** `T{a, b}`, `T(a, b)`, `{.f = v}`: a dim3 or an aggregate. */
  init(type: string | null, items: readonly Expr[], designators: ReadonlyArray<string | null> | null, env: Env): Val {
    const values = items.map((x) => this.eval(x, env));
    // `const T q = {...}` initialises a T: the qualifiers are not part of the class's name.
    const t = (type ?? '')
      .replace(/\s*&$/, '')
      .replace(/^(?:(?:const|constexpr|volatile|static)\s+)+/, '')
      .trim();
    if (DIM3_TYPES.test(t)) {
      if (values.length === 1 && (values[0].k === 'dim3' || values[0].k === 'agg')) return asDim3(values[0]);
      // A component is a number: anything else there is not a dim3 this code makes.
      const scalar = (v: Val | undefined) => (v === undefined ? num(1) : v.k === 'num' || v.k === 'top' ? v : TOP);
      return { k: 'dim3', x: scalar(values[0]), y: scalar(values[1]), z: scalar(values[2]) };
    }
    const fields = new Map<string, Val>();
    const positional = /\bcudaLaunchConfig_t\b/.test(t) ? LAUNCH_CONFIG_FIELDS : null;
    values.forEach((v, k) => {
      const name = designators?.[k] ?? positional?.[k] ?? null;
      if (name) fields.set(name, v);
    });
    // Aggregate initialisation value-initialises the members it does not name: no dynamic shared memory.
    if (positional && !fields.has('dynamicSmemBytes')) fields.set('dynamicSmemBytes', num(0));
    if (type && !positional) {
      const made = this.resolver.construct(t, values);
      if (made) return made;
    }
    if (values.length === 1 && !designators && !positional && type) return values[0];
    return { k: 'agg', type, fields };
  }

  /** Writes `value` where `target` names: a local, a field of one, a member of `this`; elsewhere it is not followed. */
  store(target: Expr, value: Val, env: Env): void {
    if (target.k === 'name' && target.local !== null && this.ir.locals[target.local]) {
      env.vals.set(target.local, value);
      return;
    }
    if (target.k === 'name' && env.self?.k === 'agg' && env.self.fields.has(target.name)) {
      env.self = withField(env.self, target.name, value);
      return;
    }
    if (target.k === 'field') {
      const path: string[] = [target.field];
      let base: Expr = target.object;
      while (base.k === 'field') {
        path.unshift(base.field);
        base = base.object;
      }
      if (base.k === 'name' && base.local !== null) {
        const held = env.vals.get(base.local) ?? emptyFor(this.ir.locals[base.local].type);
        env.vals.set(base.local, setPath(held, path, value));
      } else if (base.k === 'this' && env.self) env.self = setPath(env.self, path, value);
      // `cfg.blockDim = b` in a method: a field of the object's own member `cfg`.
      else if (base.k === 'name' && env.self?.k === 'agg' && env.self.fields.has(base.name))
        env.self = setPath(env.self, [base.name, ...path], value);
      return;
    }
    if (target.k === 'unary' && target.op === '*') this.escape(target.arg, env, 'it is written through a pointer');
  }

  private escape(e: Expr, env: Env, why: string): void {
    if (e.k === 'name' && e.local !== null) env.vals.set(e.local, top(`\`${e.name}\`'s value is not followed: ${why}`));
    else if (e.k === 'field') this.escape(e.object, env, why);
  }
}

/** The type a braced list assigned to a value of this shape initialises. */
function shapeName(v: Val): string | null {
  if (v.k === 'dim3') return 'dim3';
  if (v.k === 'agg') return v.type;
  return null;
}

function calleeOf(e: Extract<Expr, { k: 'call' }>): string {
  const c = e.callee;
  return c.k === 'name' ? c.name : c.k === 'field' ? c.field : 'call';
}

/** What a declared-but-not-initialised local of `type` holds: a dim3 is (1, 1, 1), other aggregates their fields as set. */
export function emptyFor(type: string): Val {
  if (DIM3_TYPES.test(type.trim())) return { k: 'dim3', x: num(1), y: num(1), z: num(1) };
  if (/\bcudaLaunchConfig_t\b/.test(type)) return { k: 'agg', type: 'cudaLaunchConfig_t', fields: new Map() };
  return TOP;
}

function withField(agg: Extract<Val, { k: 'agg' }>, name: string, value: Val): Val {
  const fields = new Map(agg.fields);
  fields.set(name, value);
  return { k: 'agg', type: agg.type, fields };
}

function setPath(held: Val, path: readonly string[], value: Val): Val {
  const [head, ...rest] = path;
  const inner = (v: Val) => (rest.length === 0 ? value : setPath(v, rest, value));
  if (held.k === 'dim3' && (head === 'x' || head === 'y' || head === 'z'))
    return { ...held, [head]: inner(held[head]) };
  if (held.k === 'agg') return withField(held, head, inner(held.fields.get(head) ?? TOP));
  if (held.k === 'top' || held.k === 'bottom') {
    // A field set on something unknown: the other fields stay unknown.
    if (rest.length === 0 && (head === 'x' || head === 'y' || head === 'z'))
      return { k: 'dim3', x: head === 'x' ? value : TOP, y: head === 'y' ? value : TOP, z: head === 'z' ? value : TOP };
    return { k: 'agg', type: null, fields: new Map([[head, inner(TOP)]]) };
  }
  return TOP;
}

export function fieldOf(v: Val, field: string): Val {
  if (v.k === 'dim3') return field === 'x' ? v.x : field === 'y' ? v.y : field === 'z' ? v.z : TOP;
  if (v.k === 'agg') return v.fields.get(field) ?? TOP;
  if (v.k === 'top') return top(v.why, v.params);
  return TOP;
}

function known(n: number | null): Val {
  return n === null ? TOP : num(n);
}

export function truthOf(v: Val): boolean | 'unknown' {
  if (v.k !== 'num') return v.k === 'fn' ? true : 'unknown';
  if (v.values.every((x) => x !== 0)) return true;
  if (v.values.every((x) => x === 0)) return false;
  return 'unknown';
}

/** At most this many pairs of values are combined; beyond, the result is unknown. */
const MAX_PAIRS = 64;

export function arith(op: string, a: Val, b: Val): Val {
  if (a.k === 'bottom' || b.k === 'bottom') return BOTTOM;
  if (a.k !== 'num' || b.k !== 'num')
    return top(a.k === 'top' ? a.why : b.k === 'top' ? b.why : undefined, paramsOf(a) | paramsOf(b));
  if (a.values.length * b.values.length > MAX_PAIRS) return TOP;
  const integer = a.integer && b.integer;
  const comparison = /^(==|!=|<|>|<=|>=)$/.test(op);
  const out: number[] = [];
  for (const x of a.values)
    for (const y of b.values) {
      const r = apply(op, x, y, integer);
      if (r === null) return TOP;
      out.push(r);
    }
  return nums(out, comparison || integer);
}

function apply(op: string, x: number, y: number, integer: boolean): number | null {
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      if (y === 0) return null;
      return integer ? Math.trunc(x / y) : x / y;
    case '%':
      return y === 0 || !integer ? null : x % y;
    case '<<':
      return integer && y >= 0 && y < 53 ? x * 2 ** y : null;
    case '>>':
      return integer && y >= 0 && y < 53 ? Math.floor(x / 2 ** y) : null;
    case '&':
      return integer && Math.abs(x) < 2 ** 31 && Math.abs(y) < 2 ** 31 ? x & y : null;
    case '|':
      return integer && Math.abs(x) < 2 ** 31 && Math.abs(y) < 2 ** 31 ? x | y : null;
    case '^':
      return integer && Math.abs(x) < 2 ** 31 && Math.abs(y) < 2 ** 31 ? x ^ y : null;
    case '==':
      return +(x === y);
    case '!=':
      return +(x !== y);
    case '<':
      return +(x < y);
    case '>':
      return +(x > y);
    case '<=':
      return +(x <= y);
    case '>=':
      return +(x >= y);
  }
  return null;
}

function elementwise(args: Val[], f: (v: number[]) => number | null): Val {
  if (args.some((a) => a.k !== 'num'))
    return top(
      undefined,
      args.reduce((p, a) => p | paramsOf(a), 0),
    );
  const sets = args.map((a) => (a as Extract<Val, { k: 'num' }>).values);
  let combos: number[][] = [[]];
  for (const s of sets) {
    combos = combos.flatMap((c) => s.map((v) => [...c, v]));
    if (combos.length > MAX_PAIRS) return TOP;
  }
  const out: number[] = [];
  for (const c of combos) {
    const r = f(c);
    if (r === null) return TOP;
    out.push(r);
  }
  return nums(
    out,
    args.every((a) => (a as Extract<Val, { k: 'num' }>).integer),
  );
}

/** A cast to `type`: to an integer type truncates, to a floating type is not an integer; pointers and others pass through. */
export function castTo(type: string, v: Val): Val {
  if (v.k !== 'num') return v;
  const t = type.replace(/\b(const|volatile)\b/g, '').trim();
  if (/\*|&/.test(t)) return v;
  // A class template's instance (`Scaled<8>`) is made from the number by a constructor: its value is not the number.
  if (/</.test(t))
    return top(`a \`${t}\` made from ${v.values.length === 1 ? v.values[0] : 'a number'} is not a number here`);
  if (/^(float|double|half|__half)$/.test(t)) return nums(v.values, false);
  if (
    /\b(int|unsigned|long|short|char|size_t|u?int\d+_t|bool|ptrdiff_t|int_t|index_t|idx_t)\b/.test(t) ||
    /^(unsigned|signed)$/.test(t)
  ) {
    if (t === 'bool')
      return nums(
        v.values.map((x) => (x !== 0 ? 1 : 0)),
        true,
      );
    const unsigned = /\bunsigned\b|^u|size_t/.test(t);
    return nums(
      v.values.map((x) => {
        const n = Math.trunc(x);
        return unsigned && n < 0 && n >= -(2 ** 31) && !/\blong\b|size_t|64/.test(t) ? n + 2 ** 32 : n;
      }),
      true,
    );
  }
  return v;
}

export type { FnRef };
