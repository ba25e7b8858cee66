/**
 * Every kernel launch of a document, read from the value analysis of its functions: chevrons,
 * `cudaLaunchKernel`, `cudaLaunchCooperativeKernel`, `cudaLaunchKernelEx` (its config's fields as
 * they are at the call), the driver API's `cuLaunchKernel`, and calls of the project's own launch
 * wrappers. A function is a wrapper of a launch when the launch's kernel, block or dynamic shared
 * memory derive from its parameters (or template parameters, or the object a method runs on): each
 * call is then a launch of what it passes, reported at the call, with the call's values. A call of
 * a function the unit declares but does not define is joined, as a linker joins it, to its
 * definition in another unit (a `Linker` says which), and read there with the call's values.
 */
import type { Expr, Range } from '../ir/expr';
import { baseName } from '../ir/expr';
import type { FunctionIR } from '../ir/function-ir';
import type { LaunchVia } from '../types';
import { fieldOf } from '../values/evaluate';
import {
  join,
  num,
  paramsOf,
  sameFunctionRefs,
  SELF_BIT,
  templateBit,
  top,
  TOP,
  type FnRef,
  type Val,
} from '../values/domain';
import type { Observer } from '../values/evaluate';
import {
  functionKey,
  isConstructor,
  perInstantiation,
  type FunctionScope,
  type ProgramFunction,
  type TemplateBinding,
  type UnitProgram,
} from '../program/program';

/** A launch as the analysis saw it, before it is written up as a `Launch`. */
export interface LaunchObservation {
  via: LaunchVia;
  /** Where it is reported: the launch, or the document's call of the wrapper that reaches it. */
  at: Range;
  /** The callee as written there (the kernel, the API, or the wrapper). */
  nameAt: Range;
  /** The file the launch itself is written in, and its range there. */
  launchFile: string;
  launchAt: Range;
  kernel: Val;
  /** The kernel expression at the launch (what it is called as there). */
  kernelExpr: Expr | null;
  grid: Val;
  block: Val;
  /** Dynamic shared memory; null when the launch does not give it (0). */
  smem: Val | null;
  /** The kernel arguments' values (chevrons; empty where the launch passes them otherwise). */
  args: Val[];
  /** How many arguments the launch passes, where it writes each (no pack expansion): which overloads it can call. */
  argCount?: number;
  exprs: { grid: Expr | null; block: Expr | null; smem: Expr | null; stream: Expr | null };
  /** The wrapper the document calls, or the macro whose expansion holds the launch; null for a launch written here. */
  through: { kind: 'macro' | 'wrapper'; name: string; definedIn?: string } | null;
  /**
   * Read in another translation unit, the one of this file (the wrapper's definition is there, the
   * unit only declares it): the launch's expressions, constants and kernel are that unit's.
   */
  unit?: string;
  /** The function of the document it is in. */
  function: string;
  /** Which parameters of the function analysed it derives from (see paramsOf). */
  params: number;
  /** Identity: the call sites and the launch, from the function analysed down. */
  path: string;
  /** Through a wrapper: the call tells more of the launch than the wrapper alone (else it is not reported at the call). */
  informative?: boolean;
  /** In a function template: its block is the instances' the unit calls, this many calls (template-instances.ts). */
  instances?: number;
}

/** Lambda bodies a function's text is searched through for a launch (lambdas in lambdas included). */
const MAX_LAMBDA_BODIES = 256;

const API_SHAPES: Readonly<
  Record<string, { via: LaunchVia; kernel: number; grid: number; block: number; smem: number; stream: number }>
> = {
  cudaLaunchKernel: { via: 'cudaLaunchKernel', kernel: 0, grid: 1, block: 2, smem: 4, stream: 5 },
  cudaLaunchCooperativeKernel: { via: 'cudaLaunchCooperativeKernel', kernel: 0, grid: 1, block: 2, smem: 4, stream: 5 },
};

/** Launch API names (their calls are launches, not wrappers to follow). */
export const LAUNCH_APIS: ReadonlySet<string> = new Set([
  'cudaLaunchKernel',
  'cudaLaunchCooperativeKernel',
  'cudaLaunchKernelEx',
  'cudaLaunchKernelExC',
  'cuLaunchKernel',
]);

/** `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`, as the analysis saw it. */
export interface OptInObservation {
  kernel: string;
  bytes: Val | null;
  text: string;
  /** The file of the function it is written in, and its range there. */
  file: string;
  at: Range;
}

/** What one function of the document launches, and the opt-ins its reading reaches (see launchesOf). */
export interface FunctionLaunches {
  observations: LaunchObservation[];
  optIns: OptInObservation[];
}

/**
 * Another translation unit's definition of a function this unit declares but does not define: that
 * unit's collector, the function there, and the file the unit is read for.
 */
export interface LinkedDefinition {
  collector: LaunchCollector;
  pf: ProgramFunction;
  unit: string;
}

/**
 * Where a linker finds the definition of a function the unit declares (its declarations here, of
 * one function with external linkage and no body in the unit), or null when none or several.
 */
export type Linker = (declared: readonly ProgramFunction[]) => LinkedDefinition | null;

export class LaunchCollector {
  /** Per function: whether it launches, itself or through what it calls (by name: a cheap gate). */
  private readonly launching = new Map<string, boolean>();
  private readonly standalone = new Map<string, LaunchObservation[]>();
  /** Per function read alone: the opt-ins written in it. */
  private readonly ownOptIns = new Map<string, OptInObservation[]>();
  /** Per function read alone: the functions its reading read alone in turn (the wrappers it calls). */
  private readonly reads = new Map<string, Set<string>>();
  /** The functions the reading under way reads alone. */
  private reading: Set<string> | null = null;
  /** The function whose reading alone is under way. */
  private readingKey: string | null = null;
  /** Functions whose reading alone asked the linker about a call (what they launch depends on other units). */
  private readonly linking = new Set<string>();

  /** `linker`: where calls of functions the unit declares only are defined; without one they are not followed. */
  constructor(
    private readonly program: UnitProgram,
    private readonly linker: Linker | null = null,
  ) {}

  /** Whether what the function launches was read through another unit's definition (or looked for one). */
  readsOtherUnits(pf: ProgramFunction): boolean {
    const seen = new Set([functionKey(pf)]);
    for (const k of seen) {
      if (this.linking.has(k)) return true;
      for (const r of this.reads.get(k) ?? []) seen.add(r);
    }
    return false;
  }

  /**
   * What a function with a body launches, written there and through the wrappers it calls, or null
   * when it launches nothing. Its opt-ins are those of every function its reading reads: its own,
   * and the wrappers' it calls, whichever function of the document read a wrapper first.
   */
  launchesOf(pf: ProgramFunction): FunctionLaunches | null {
    if (!pf.fn.bodyAt || !this.launches(pf, 0)) return null;
    const observations = this.collectStandalone(pf).filter((o) => o.through?.kind !== 'wrapper' || o.informative);
    return { observations: mergeSamePlace(observations), optIns: this.optInsRead(functionKey(pf)) };
  }

  /** What every function of the file `path` launches (another file of the unit: a header's includer). */
  launchesIn(path: string): LaunchObservation[] {
    const out: LaunchObservation[] = [];
    for (const fn of this.program.outline(path).functions)
      out.push(...(this.launchesOf({ file: path, fn })?.observations ?? []));
    return mergeSamePlace(out);
  }

  /** The opt-ins of the function `key` names and of every function its reading read. */
  private optInsRead(key: string): OptInObservation[] {
    const seen = new Set([key]);
    const out: OptInObservation[] = [];
    for (const k of seen) {
      out.push(...(this.ownOptIns.get(k) ?? []));
      for (const r of this.reads.get(k) ?? []) seen.add(r);
    }
    return out;
  }

  /** What the function launches with its parameters unknown (bits marking which), as the document sees it. */
  private collectStandalone(pf: ProgramFunction): LaunchObservation[] {
    const key = functionKey(pf);
    this.reading?.add(key);
    let kept = this.standalone.get(key);
    if (!kept) {
      const outer = this.reading;
      const outerKey = this.readingKey;
      this.reading = new Set();
      this.readingKey = key;
      this.reads.set(key, this.reading);
      const bindings = new Map<string, TemplateBinding>();
      (pf.fn.templateParams ?? []).forEach((p, k) => {
        const why = perInstantiation(p.name, pf.fn.name);
        bindings.set(
          p.name,
          p.kind === 'type'
            ? { k: 'type-arg', type: p.name, open: { why, bits: templateBit(k) } }
            : top(why, templateBit(k)),
        );
      });
      const self = pf.fn.className && !isConstructor(pf.fn) ? selfOf(this.program, pf) : null;
      try {
        kept = this.collect(pf, { args: [], bindings, self }, 0);
      } finally {
        this.reading = outer;
        this.readingKey = outerKey;
      }
      this.standalone.set(key, kept);
    }
    return kept;
  }

  private collect(
    pf: ProgramFunction,
    call: {
      args: ReadonlyArray<Val | undefined>;
      bindings: ReadonlyMap<string, TemplateBinding>;
      self: Val | null;
      passed?: number;
    },
    depth: number,
  ): LaunchObservation[] {
    const out: LaunchObservation[] = [];
    const ir = this.program.functionIR(pf);
    if (!ir) return out;
    const lambdasSeen = new Set<number>();
    let outerScope: FunctionScope | null = null;
    this.program.analyzeCall(pf, call, depth, (scope, d) => {
      outerScope = scope;
      return this.observer(pf, ir, scope, d, out, lambdasSeen);
    });
    // Lambdas the function never calls (passed on to something else): read alone, with their captures unknown.
    if (depth === 0 && outerScope)
      for (const at of ir.lambdas)
        if (!lambdasSeen.has(at[0])) this.visitLambda(pf, at, [], outerScope, depth, out, lambdasSeen);
    return out;
  }

  /** A lambda written in `pf`, read with these arguments in `scope` (its captures there), and the lambdas in it it does not call. */
  private visitLambda(
    pf: ProgramFunction,
    at: Range,
    args: ReadonlyArray<Val | undefined>,
    scope: FunctionScope,
    d: number,
    out: LaunchObservation[],
    seen: Set<number>,
  ): void {
    const lir = this.program.lambdaIR(pf.file, at);
    if (!lir || d >= 4) return;
    seen.add(at[0]);
    this.program.analyzeLambda(pf.file, at, { args, scope }, d + 1, this.observer(pf, lir, scope, d + 1, out, seen));
    for (const inner of lir.lambdas) if (!seen.has(inner[0])) this.visitLambda(pf, inner, [], scope, d + 1, out, seen);
  }

  /** What the analysis of `pf` (or a lambda in it) hands each launch and call to. */
  private observer(
    pf: ProgramFunction,
    ir: FunctionIR,
    scope: FunctionScope,
    d: number,
    out: LaunchObservation[],
    lambdasSeen: Set<number>,
  ): Observer {
    // Lambdas handed out of view by this reading of the body: once each here, and again where the
    // body is read again (a lambda that hands one on, called with another kernel each time).
    const handedOut = new Set<number>();
    // A function read with every arm of its undecided `#if`s (program.ts, buildWithChoices): the arms the
    // view leaves out lend their values, but their launches and calls are another build's code.
    const leftOut = (at: Range) => this.program.outOfView(pf.file, at[0]);
    return {
      launch: (e, callee, config, _env, args) => {
        if (leftOut(e.at)) return;
        const o = this.observation(
          pf,
          'chevrons',
          e.at,
          e.id,
          e.callee.at,
          callee,
          e.callee,
          config[0] ?? TOP,
          config[1] ?? TOP,
          config[2] ?? null,
          {
            grid: e.config[0] ?? null,
            block: e.config[1] ?? null,
            smem: e.config[2] ?? null,
            stream: e.config[3] ?? null,
          },
          args,
        );
        // `args...` (a pack) or a piece the IR does not model may stand for any number of arguments.
        const counted = e.args.every((a) => a.k !== 'unknown') ? { argCount: e.args.length } : {};
        out.push(e.from ? { ...o, ...counted, through: { kind: 'macro', name: e.from.name } } : { ...o, ...counted });
      },
      call: (e, callee, args, env, pointees) => {
        if (leftOut(e.at)) return;
        const name = e.callee.k === 'name' ? baseName(e.callee.name) : null;
        if (name === 'cudaFuncSetAttribute' && d === 0) this.optIn(pf, e, args);
        if (name && LAUNCH_APIS.has(name)) {
          const o = this.apiLaunch(pf, name, e, args, pointees);
          if (o) out.push(e.from ? { ...o, through: { kind: 'macro', name: e.from.name } } : o);
          return;
        }
        // A lambda of this function, read with these arguments and what it captures now: the locals
        // here, over what the code around captured.
        const runLambda = (at: Range, lambdaArgs: Val[], templateArgs: FnRef['templateArgs'] = null) => {
          const captures = new Map<string, Val>(scope.captures ?? []);
          for (const [id, v] of env.vals) if (ir.locals[id]) captures.set(ir.locals[id].name, v);
          const bindings = lambdaBindings(this.program.lambdaIR(pf.file, at), templateArgs, scope.bindings);
          this.visitLambda(pf, at, lambdaArgs, { ...scope, captures, bindings }, d, out, lambdasSeen);
        };
        // One called here.
        const called = lambdaOf(callee, ir);
        if (called !== undefined) {
          if (called && d < 3) runLambda(called, args, callee.k === 'fn' ? callee.refs[0].templateArgs : null);
          return;
        }
        if (d >= 3) return;
        const target = this.program.callTargetOf(callee, args, scope);
        // One handed to a function is taken to run here: the idiom hands it over to be called, not
        // kept. Whether the function's body is out of view (PyTorch's `AT_DISPATCH_...(t, "op", [&]
        // { ... })`, a macro of a header the workspace lacks) or in view (gsplat's
        // `dispatch::dispatch(params..., [&]<typename T>() { ... })`, which calls it through
        // `std::visit` and packs), a call of it there names a lambda of another function, which is
        // not followed: it is read here, with what it captures.
        for (const a of args) {
          const at = lambdaOf(a, ir);
          if (at && !handedOut.has(at[0])) {
            handedOut.add(at[0]);
            runLambda(at, []);
          }
        }
        if (!target) {
          this.linkedCall(pf, e, callee, args, scope, d, out);
          return;
        }
        if (!this.launches(target.pf, 0)) return;
        const standalone = this.collectStandalone(target.pf);
        const wrapped = new Map(standalone.filter((o) => o.params !== 0).map((o) => [o.path, o] as const));
        if (wrapped.size === 0) return;
        const bound = this.collect(
          target.pf,
          { args, bindings: target.bindings, self: target.self, passed: args.length },
          d + 1,
        );
        for (const o of bound) {
          const alone = wrapped.get(o.path);
          if (!alone) continue;
          out.push({
            ...o,
            // Reported at the document's call where what it passes tells more than the wrapper alone
            // does (what the wrapper's own calls tell is the wrapper's, already said there).
            informative: tellsMore(o, alone),
            at: e.at,
            nameAt: e.callee.at,
            through: { kind: 'wrapper', name: calleeName(e.callee) },
            function: pf.fn.name,
            params: o.params,
            path: `${e.at[0]}>${o.path}`,
          });
        }
      },
    };
  }

  /**
   * A call of a function the unit declares but does not define (external linkage: not `static`, not
   * in an anonymous namespace, not `inline`), joined to its definition in another unit as the linker
   * would: the launches that definition makes with the call's values (the parameters it leaves out
   * take the declaration's defaults, read here), reported at the call.
   */
  private linkedCall(
    pf: ProgramFunction,
    e: Extract<Expr, { k: 'call' }>,
    callee: Val,
    args: Val[],
    scope: FunctionScope,
    d: number,
    out: LaunchObservation[],
  ): void {
    if (!this.linker || callee.k !== 'fn' || callee.refs.length !== 1 || d >= 3) return;
    const ref = callee.refs[0];
    const declared = this.program.resolveCall(ref, args, scope).filter((c) => !c.fn.global);
    if (declared.length === 0 || declared.some((c) => c.fn.bodyAt || c.fn.internal || c.fn.inline)) return;
    if (this.readingKey) this.linking.add(this.readingKey);
    const linked = this.linker(declared);
    if (!linked || !linked.collector.launches(linked.pf, 0)) return;
    const declaration = declared[0];
    const full = this.program.argumentsWithDefaults(declaration, args);
    // The template arguments as this unit binds them, by position to the definition's parameters.
    const written = this.program.bindTemplate(declaration, ref, scope);
    const bindings = new Map<string, TemplateBinding>();
    (linked.pf.fn.templateParams ?? []).forEach((p, k) => {
      const b = written.get(declaration.fn.templateParams?.[k]?.name ?? '');
      if (b) bindings.set(p.name, b);
    });
    for (const { bound, alone } of linked.collector.boundLaunches(linked.pf, full, bindings, d + 1))
      out.push({
        ...bound,
        informative: tellsMore(bound, alone),
        at: e.at,
        nameAt: e.callee.at,
        through: { kind: 'wrapper', name: calleeName(e.callee), definedIn: linked.pf.file },
        function: pf.fn.name,
        unit: bound.unit ?? linked.unit,
        path: `${e.at[0]}>${linked.pf.file}>${bound.path}`,
      });
  }

  /**
   * The launches of a function of this unit that derive from its parameters, read with these
   * arguments (another unit's call: see linkedCall), each with its reading alone.
   */
  boundLaunches(
    pf: ProgramFunction,
    args: ReadonlyArray<Val | undefined>,
    bindings: ReadonlyMap<string, TemplateBinding>,
    depth: number,
  ): Array<{ bound: LaunchObservation; alone: LaunchObservation }> {
    const wrapped = new Map(
      this.collectStandalone(pf)
        .filter((o) => o.params !== 0)
        .map((o) => [o.path, o] as const),
    );
    if (wrapped.size === 0) return [];
    const out: Array<{ bound: LaunchObservation; alone: LaunchObservation }> = [];
    for (const bound of this.collect(pf, { args, bindings, self: null, passed: args.length }, depth)) {
      const alone = wrapped.get(bound.path);
      if (alone) out.push({ bound, alone });
    }
    return out;
  }

  private optIn(pf: ProgramFunction, e: Extract<Expr, { k: 'call' }>, args: Val[]): void {
    const attribute = e.args[1];
    if (
      !attribute ||
      !(attribute.k === 'name' && baseName(attribute.name) === 'cudaFuncAttributeMaxDynamicSharedMemorySize')
    )
      return;
    const kernel = args[0]?.k === 'fn' && args[0].refs.length === 1 ? args[0].refs[0].name : null;
    const key = functionKey(pf);
    const own = this.ownOptIns.get(key) ?? [];
    if (!kernel || own.some((o) => o.at[0] === e.at[0])) return;
    const bytes = e.args[2];
    const text = bytes
      ? (this.program.file(pf.file)?.view ?? '').slice(bytes.at[0], bytes.at[1]).replace(/\s+/g, ' ').trim()
      : '';
    own.push({ kernel, bytes: args[2] ?? null, text, file: pf.file, at: e.at });
    this.ownOptIns.set(key, own);
  }

  private apiLaunch(
    pf: ProgramFunction,
    name: string,
    e: Extract<Expr, { k: 'call' }>,
    args: Val[],
    pointees: ReadonlyArray<Val | undefined>,
  ): LaunchObservation | null {
    const shape = API_SHAPES[name];
    if (shape) {
      if (e.args.length <= shape.block) return null;
      return this.observation(
        pf,
        shape.via,
        e.at,
        e.id,
        e.callee.at,
        args[shape.kernel],
        e.args[shape.kernel],
        args[shape.grid],
        args[shape.block],
        args[shape.smem] ?? null,
        {
          grid: e.args[shape.grid] ?? null,
          block: e.args[shape.block] ?? null,
          smem: e.args[shape.smem] ?? null,
          stream: e.args[shape.stream] ?? null,
        },
      );
    }
    if (name === 'cuLaunchKernel') {
      if (e.args.length < 9) return null;
      const dims = (k: number): Val => ({ k: 'dim3', x: args[k], y: args[k + 1], z: args[k + 2] });
      return this.observation(
        pf,
        'cuLaunchKernel',
        e.at,
        e.id,
        e.callee.at,
        args[0],
        e.args[0],
        dims(1),
        dims(4),
        args[7],
        {
          grid: null,
          block: null,
          smem: e.args[7] ?? null,
          stream: e.args[8] ?? null,
        },
      );
    }
    // cudaLaunchKernelEx(&config, kernel, args...): the config's fields as they are here.
    if (e.args.length < 2) return null;
    const config = pointees[0] ?? (args[0].k === 'agg' ? args[0] : TOP);
    return this.observation(
      pf,
      'cudaLaunchKernelEx',
      e.at,
      e.id,
      e.callee.at,
      args[1],
      e.args[1],
      fieldOf(config, 'gridDim'),
      fieldOf(config, 'blockDim'),
      fieldOf(config, 'dynamicSmemBytes'),
      {
        grid: null,
        block: null,
        smem: null,
        stream: null,
      },
    );
  }

  private observation(
    pf: ProgramFunction,
    via: LaunchVia,
    at: Range,
    id: number,
    nameAt: Range,
    kernel: Val,
    kernelExpr: Expr | null,
    grid: Val,
    block: Val,
    smem: Val | null,
    exprs: LaunchObservation['exprs'],
    args: Val[] = [],
  ): LaunchObservation {
    return {
      via,
      at,
      nameAt,
      launchFile: pf.file,
      launchAt: at,
      kernel,
      kernelExpr,
      grid,
      block,
      smem,
      args,
      exprs,
      through: null,
      function: pf.fn.name,
      params: paramsOf(kernel) | paramsOf(block) | (smem ? paramsOf(smem) : 0),
      // Two functions one macro use writes stand at the same place: the function's own identity too.
      path: `${functionKey(pf)}:${at[0]}#${id}`,
    };
  }

  /** Whether a function launches (written in it, or in a function it calls, by name), memoised. */
  launches(pf: ProgramFunction, depth: number): boolean {
    const key = functionKey(pf);
    const kept = this.launching.get(key);
    if (kept !== undefined) return kept;
    if (depth > 4) return false;
    this.launching.set(key, false); // recursion
    const ir = this.program.functionIR(pf);
    let result = false;
    if (ir) {
      const callees = new Set<string>();
      // The function's body and every lambda in it, lambdas in lambdas included.
      const bodies: FunctionIR[] = [ir];
      for (let k = 0; k < bodies.length && bodies.length <= MAX_LAMBDA_BODIES; k++)
        for (const at of bodies[k].lambdas) {
          const lir = this.program.lambdaIR(pf.file, at);
          if (lir) bodies.push(lir);
        }
      for (const e of bodies.flatMap((b) => [...allExprs(b)])) {
        if (e.k === 'launch') result = true;
        else if (e.k === 'call' && e.callee.k === 'name') {
          const n = baseName(e.callee.name);
          // An opt-in to more dynamic shared memory is read where it is written, as a launch is.
          if (LAUNCH_APIS.has(n) || n === 'cudaFuncSetAttribute') result = true;
          else callees.add(n);
        } else if (e.k === 'call' && (e.callee.k === 'call' || e.callee.k === 'init')) callees.add('operator()');
        if (result) break;
      }
      if (!result)
        for (const n of callees) {
          const named = this.program.functionsNamed(n).filter((f) => !f.fn.global);
          if (named.some((f) => f.fn.bodyAt && this.launches(f, depth + 1))) result = true;
          else if (
            this.linker &&
            named.length > 0 &&
            named.every((f) => !f.fn.bodyAt && !f.fn.internal && !f.fn.inline)
          ) {
            this.linking.add(key);
            result = named.some((f) => {
              const linked = this.linker?.([f]);
              return linked ? linked.collector.launches(linked.pf, 0) : false;
            });
          }
          if (named.some((f) => this.linking.has(functionKey(f)))) this.linking.add(key);
          if (result) break;
        }
    }
    this.launching.set(key, result);
    return result;
  }
}

/**
 * One observation per launch: a launch in a lambda called several times (or reached by several
 * paths) is one launch, whose values are any of those seen.
 */
function mergeSamePlace(observations: readonly LaunchObservation[]): LaunchObservation[] {
  const byPath = new Map<string, LaunchObservation>();
  for (const o of observations) {
    const key = `${o.at[0]}:${o.path}`;
    const kept = byPath.get(key);
    if (!kept) byPath.set(key, o);
    else
      byPath.set(key, {
        ...kept,
        kernel: join(kept.kernel, o.kernel),
        grid: join(kept.grid, o.grid),
        block: join(kept.block, o.block),
        smem: kept.smem && o.smem ? join(kept.smem, o.smem) : (kept.smem ?? o.smem),
        args: kept.args.length === o.args.length ? kept.args.map((a, k) => join(a, o.args[k])) : [],
        params: kept.params | o.params,
      });
  }
  return [...byPath.values()];
}

/**
 * The lambda of `ir` a value is (its place), null for a lambda written elsewhere, undefined for a
 * value that is no lambda.
 */
function lambdaOf(v: Val, ir: FunctionIR): Range | null | undefined {
  const m = v.k === 'fn' && v.refs.length === 1 ? /^\[lambda@(\d+)\]$/.exec(v.refs[0].name) : null;
  if (!m) return undefined;
  return ir.lambdas.find((r) => r[0] === Number(m[1])) ?? null;
}

/**
 * The template parameters of a lambda with a template head, bound to what its call names
 * (`f.template operator()<16, 256>()`), over the enclosing function's; a parameter the call
 * leaves to deduction stays unbound.
 */
function lambdaBindings(
  lir: FunctionIR | null,
  templateArgs: FnRef['templateArgs'],
  outer: ReadonlyMap<string, TemplateBinding>,
): ReadonlyMap<string, TemplateBinding> {
  const names = lir?.templateParams;
  if (!names || !templateArgs) return outer;
  const bindings = new Map(outer);
  names.forEach((name, i) => {
    const t = templateArgs[i];
    if (!name || !t) return;
    bindings.set(name, 'type' in t ? { k: 'type-arg', type: t.type } : t.value);
  });
  return bindings;
}

/** The launch as a call binds it knows a kernel, a block or a shared memory size the wrapper alone does not. */
function tellsMore(bound: LaunchObservation, alone: LaunchObservation): boolean {
  return (
    knownParts(bound.kernel) > knownParts(alone.kernel) ||
    knownParts(bound.block) > knownParts(alone.block) ||
    (bound.smem !== null && alone.smem !== null && knownParts(bound.smem) > knownParts(alone.smem))
  );
}

/** How many parts of a value are known (a whole dim3, a function, a number). */
function knownParts(v: Val): number {
  switch (v.k) {
    case 'num':
      return 1;
    case 'fn':
      // Which kernel, not its template arguments: the instance a wrapper's own launch shows a range over.
      return 1;
    case 'dim3':
      // A block of unknown size, however many of its components are known, tells no threads.
      return knownParts(v.x) && knownParts(v.y) && knownParts(v.z) ? 1 : 0;
    case 'top':
      return v.name ? 1 : 0;
    default:
      return 0;
  }
}

function calleeName(e: Expr): string {
  if (e.k === 'name') return e.name;
  if (e.k === 'field') return e.field;
  if (e.k === 'call') return calleeName(e.callee);
  if (e.k === 'init' && e.type) return e.type;
  return 'call';
}

/** `this`'s members in a method analysed alone: unknown, marked as the object's. */
function selfOf(program: UnitProgram, pf: ProgramFunction): Val {
  return program.emptyObject(pf.fn.className!, { file: pf.file, scope: pf.fn.scope, bindings: new Map() }, SELF_BIT);
}

function* allExprs(ir: FunctionIR): Generator<Expr> {
  const stack: Expr[] = [];
  for (const b of ir.blocks) {
    for (const s of b.stmts) {
      if (s.k === 'decl') {
        if (s.init) stack.push(s.init);
      } else stack.push(s.expr);
    }
    const x = b.exit;
    if (x.k === 'branch') stack.push(x.cond);
    else if (x.k === 'switch') stack.push(x.value);
    else if (x.k === 'return' && x.value) stack.push(x.value);
  }
  while (stack.length) {
    const e = stack.pop()!;
    yield e;
    switch (e.k) {
      case 'unary':
      case 'update':
      case 'cast':
        stack.push(e.arg);
        break;
      case 'binary':
        stack.push(e.left, e.right);
        break;
      case 'assign':
        stack.push(e.target, e.value);
        break;
      case 'cond':
        stack.push(e.cond, e.then, e.else);
        break;
      case 'call':
        stack.push(e.callee, ...e.args);
        break;
      case 'launch':
        stack.push(e.callee, ...e.config, ...e.args);
        break;
      case 'field':
        stack.push(e.object);
        break;
      case 'index':
        stack.push(e.object, e.index);
        break;
      case 'init':
      case 'comma':
        stack.push(...e.items);
        break;
      case 'alternatives':
        stack.push(...e.options);
        break;
    }
  }
}

/**
 * The kernels a launch's kernel value names: each function (its instances merged: the kernel is
 * known where its template arguments are not), or the name of an unknown handle.
 */
export function kernelRefs(o: LaunchObservation): FnRef[] {
  if (o.kernel.k === 'fn') return sameFunctionRefs(o.kernel.refs);
  if (o.kernel.k === 'top' && o.kernel.name) return [{ name: o.kernel.name, templateArgs: null, written: null }];
  return [];
}

export { num };
