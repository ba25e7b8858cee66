/**
 * Thread uniformity over the function IR: for every value of a kernel (and of the device functions
 * and lambdas it calls), how it varies across the threads of a block, as a small symbolic
 * expression (`Sym`, see body/symbolic-values.ts) over the thread and block indices, constants,
 * uniform unknowns and per-lane data. Every branch whose condition varies is recorded with the
 * conditions it runs under, for the verdicts (body/branch-verdicts.ts).
 *
 * A forward data-flow analysis, as LLVM's uniformity analysis is one (GenericUniformityImpl.h):
 * - where the paths of a branch join, a variable they set differently is a choice between them:
 *   `select(cond, a, b)` at the join of a two-way branch (gated SSA's γ), else as varying as the
 *   values and the branch ("sync dependence");
 * - at a loop's head, a variable the body steps by a uniform amount is an induction variable (its
 *   start, step and bound kept, so that the verdicts can run the loop), anything else is joined;
 * - a value that leaves a loop its lanes leave at different iterations varies with them
 *   ("temporal divergence");
 * - memory: a load varies as its address does; a thread's own array holds what was stored in it; a
 *   `__shared__` variable is one value for the block after a barrier;
 * - calls: a function the unit defines is analysed with the arguments' values (its branches are
 *   the caller's too); a built-in by what CUDA documents (intrinsics.ts); anything else varies as
 *   its arguments do.
 * Template parameters come bound per instance; names resolve through the unit (program.ts).
 */
import type { Dim3 } from '../types';
import type { Expr, Range } from '../ir/expr';
import { baseName, childrenOf, forEachExpr } from '../ir/expr';
import type { Block, FunctionIR, Local } from '../ir/function-ir';
import { controlInfo, dominates, joinPoints, type ControlInfo, type LoopBlocks } from '../ir/control';
import {
  functionKey,
  isConstructor,
  isType,
  type FunctionScope,
  type ProgramFunction,
  type TemplateBinding,
  type UnitProgram,
  writableReference,
} from '../program/program';
import type { FnRef, Val } from '../values/domain';
import { readsUndeclaredMacro } from '../values/evaluate';
import {
  applyUnary,
  binary,
  constant,
  fixedSym,
  freeSym,
  isFixedValue,
  isLaneFunction,
  isThreadDependent,
  opaqueSym,
  symFacts,
  symKey,
  ZERO,
  type Axis,
  type DependenceKind,
  type Sym,
} from './symbolic-values';
import { dependenceKind } from './dependence-kind';
import { memoByObject, objectTable } from '../incremental/kept-tables';
import { groupFactory, groupOfType, intrinsicOf, type GroupInfo } from './intrinsics';
import {
  builtinLayout,
  elementBytesOf,
  pointeeType,
  recordLayout,
  type BarrierEvent,
  type GuardSource,
  type MemberPlace,
  type MemoryEvent,
  type PointerInfo,
  type TypeLayout,
} from './memory-events';
import { templateArgumentsOf } from '../program/outline';

/** A value and where its thread dependence came from (a statement of some file). */
export interface TV {
  sym: Sym;
  origin: { file: string; at: Range } | null;
  /** An aggregate's members, when they are known apart (`int2 p = make_int2(tx, ty)`). */
  fields?: ReadonlyMap<string, TV>;
}

export type SiteConstruct = 'if' | 'else-if' | 'switch' | 'loop' | 'ternary' | 'short-circuit';

/** A branch whose condition varies across the threads of a block. */
export interface UniformitySite {
  construct: SiteConstruct;
  file: string;
  at: Range;
  condAt: Range;
  /** The arms as written (then and else; a loop's body; a ternary's two values; `&&`'s right operand). */
  arms: Range[];
  cond: TV;
  /** Varying conditions in force where the branch runs, innermost last. */
  guards: Sym[];
  /** A switch's cases in order: their values (null: `default`). */
  cases?: Array<number[] | null>;
}

export interface KernelUniformity {
  sites: UniformitySite[];
  /** The kernel's own variables where it ends, by name (the innermost of a name shadowed), with their values. */
  variables: Map<string, TV>;
  /** threadIdx.y or .z is read (the default block shape is then two-dimensional). */
  multiDimensional: boolean;
  /** threadIdx.z is read: the kernel is written for blocks more than one deep. */
  threeDimensional?: boolean;
  /** The analysis ran out of its budget: what it found stands, more may be missing. */
  truncated: boolean;
  /** Barriers and global or shared memory accesses, with the conditions they run under (memory-events.ts). */
  events?: MemoryEvent[];
}

export interface UniformityInput {
  program: UnitProgram;
  fn: ProgramFunction;
  /** The instance's template arguments (absent ones are fixed unknowns). */
  bindings: ReadonlyMap<string, TemplateBinding>;
  /** The block shapes the kernel is launched with (empty: unknown). */
  shapes: readonly Dim3[];
  /** Sites are kept for this file only (the document's). */
  file: string;
  /** The kernel's parameters its launches all pass one integer constant (the others are unknowns). */
  args?: ReadonlyArray<{ index: number; value: number }>;
}

/** Calls are followed this deep (a kernel, its helpers, theirs). */
export const MAX_UNIFORMITY_CALL_DEPTH = 6;
/** Block transfers for one kernel, callees included: past it the analysis stops where it is. */
export const MAX_UNIFORMITY_STEPS = 60_000;
/** A join keeps `select(c, a, b)` up to this many nodes, else summarises the value by its kind. */
const MAX_SELECT_SIZE = 48;
/** An expression keeps its shape up to this many nodes (a long mask of `&&`s), else it is summarised by its kind. */
const MAX_EXPRESSION_SIZE = 600;
/** Varying conditions a branch's verdict takes into account. */
const MAX_GUARDS = 3;
/** Overloads or members a call may mean, each analysed and their results joined. */
const MAX_CANDIDATES = 4;
/** Branches a barrier's pairing follows on the other side of a guard before it gives up (each doubles the condition). */
const MAX_PAIRING_BRANCHES = 4;

/**
 * A function's control structure, and the join points of its branches, once per IR: a helper is
 * analysed again at each call the walk follows, and its IR is the program's, kept.
 */
const keptControlInfo = memoByObject('control structure per function IR', controlInfo);
const keptJoins = memoByObject(
  'join points per control structure',
  (_info: ControlInfo) => new Map<number, number[]>(),
);

const keptAnalyses = objectTable<UnitProgram, Map<string, KernelUniformity>>('kernel uniformity per program');

/**
 * The analysis of one kernel instance, kept while its unit's program lives: the divergence pass and
 * the memory rules read the same one.
 */
export function keptKernelUniformity(input: UniformityInput): KernelUniformity {
  let table = keptAnalyses.get(input.program);
  if (!table) keptAnalyses.set(input.program, (table = new Map()));
  const key = [
    functionKey(input.fn),
    input.file,
    input.shapes.map((d) => `${d.x}x${d.y}x${d.z}`).join(','),
    JSON.stringify([...input.bindings]),
    (input.args ?? []).map((a) => `${a.index}=${a.value}`).join(','),
  ].join('\u0000');
  let result = table.get(key);
  if (!result) table.set(key, (result = analyzeKernelUniformity(input)));
  return result;
}

export function analyzeKernelUniformity(input: UniformityInput): KernelUniformity {
  const session = new Session(input.program, input.shapes, input.file);
  const ir = input.program.functionIR(input.fn);
  if (!ir) return { sites: [], variables: new Map(), multiDimensional: false, truncated: false, events: [] };
  const scope: FunctionScope = { file: input.fn.file, scope: input.fn.fn.scope, bindings: input.bindings };
  const analysis = new FunctionAnalysis(session, {
    ir,
    scope,
    fn: input.fn,
    params: null,
    self: null,
    captures: null,
    depth: 0,
    key: functionKey(input.fn),
    ...(input.args?.length ? { args: input.args } : {}),
  });
  analysis.run();
  const variables = new Map<string, TV>();
  for (const local of ir.locals) {
    const v = analysis.exitState.get(`l${local.id}`);
    if (v && !local.param) variables.set(local.name, v);
  }
  return {
    sites: dedupe(analysis.record().filter((s) => s.file === input.file)),
    variables,
    multiDimensional: session.multiDimensional,
    ...(session.threeDimensional ? { threeDimensional: true } : {}),
    truncated: session.steps > MAX_UNIFORMITY_STEPS,
    // Events in this file, or reached through a call written in it (a header's helper).
    events: analysis
      .recordedEvents()
      .filter((x) => x.file === input.file || x.calls.some((c) => c.file === input.file)),
  };
}

function dedupe(sites: UniformitySite[]): UniformitySite[] {
  // A function called twice records its branches twice: one per place and construct (the last).
  const byKey = new Map<string, UniformitySite>();
  for (const s of sites) byKey.set(`${s.at[0]}:${s.at[1]}:${s.construct}`, s);
  return [...byKey.values()].sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1]);
}

/** What one kernel's analysis shares across the functions it follows. */
class Session {
  steps = 0;
  multiDimensional = false;
  threeDimensional = false;
  readonly invocations = new Map<string, FunctionAnalysis | null>();
  /** Unknowns that stand for names the unit declares nowhere. */
  readonly undeclared = new Set<Sym>();
  readonly stack: string[] = [];
  constructor(
    readonly program: UnitProgram,
    readonly shapes: readonly Dim3[],
    readonly file: string,
  ) {}

  get exhausted(): boolean {
    return this.steps > MAX_UNIFORMITY_STEPS;
  }

  private readonly canonicals = new Map<string, Extract<Sym, { op: 'free' | 'opaque' }>>();

  /** A callee's own unknown for one it is given (see Abstraction): uniform (fixed or not), or per-lane or per-warp data. */
  canonical(
    key: string,
    name: string,
    kind: 'fixed' | 'free' | 'laneVarying' | 'warpUniform',
  ): Extract<Sym, { op: 'free' | 'opaque' }> {
    let s = this.canonicals.get(key);
    if (!s) {
      s = (kind === 'fixed' ? fixedSym(name) : kind === 'free' ? freeSym(name) : opaqueSym(kind, name)) as Extract<
        Sym,
        { op: 'free' | 'opaque' }
      >;
      this.canonicals.set(key, s);
    }
    return s;
  }

  /** The kind of a value: the widest over the block shapes in use. */
  kindOf(sym: Sym): DependenceKind {
    if (!isThreadDependent(sym)) return 'uniform';
    if (this.shapes.length === 0) return dependenceKind(sym);
    let worst: DependenceKind = 'uniform';
    for (const shape of this.shapes) {
      const k = dependenceKind(sym, shape);
      if (RANK[k] > RANK[worst]) worst = k;
    }
    return worst;
  }
}

const RANK: Record<DependenceKind, number> = { uniform: 0, warpUniform: 1, globalIndex: 2, laneVarying: 2 };

interface Invocation {
  ir: FunctionIR;
  scope: FunctionScope;
  fn: ProgramFunction | null;
  /** Parameters' values (null: the function analysed alone, its parameters unknown). */
  params: ReadonlyArray<TV | undefined> | null;
  /** The object a member function runs on: its members' values. */
  self: ReadonlyMap<string, TV> | null;
  /** A lambda's captures by name, as they are where it is called. */
  captures: ReadonlyMap<string, TV> | null;
  depth: number;
  key: string;
  /** A kernel's parameters its launches fix (read in place of unknowns). */
  args?: ReadonlyArray<{ index: number; value: number }>;
  /** What each pointer parameter points at, as the caller knows it (memory-events.ts). */
  pointers?: ReadonlyArray<PointerInfo | null>;
}

type State = Map<string, TV>;

/** A state's copy, in the same order (every block's transfer starts from one: `new Map(map)` costs twice as much). */
function copyState(state: State): State {
  const copy: State = new Map();
  state.forEach((v, k) => copy.set(k, v));
  return copy;
}

const BUILTIN_VECTORS: ReadonlySet<string> = new Set(['threadIdx', 'blockIdx', 'blockDim', 'gridDim']);
const PRIMITIVE =
  /^(?:unsigned|signed|int|long|short|char|float|double|bool|size_t|ptrdiff_t|half|__half|__nv_bfloat16|(?:u?int|char)\d+_t|u?int\d*|\w+_t)$/;

/** One function analysed with its parameters' values: its sites, what it returns, what it leaves in its object and out-parameters. */
class FunctionAnalysis {
  /** Its branches and those of what it calls, one per place and construct (the last recorded). */
  private readonly siteTable = new Map<string, UniformitySite>();

  private addSite(site: UniformitySite): void {
    const key = `${site.file}:${site.at[0]}:${site.at[1]}:${site.construct}`;
    this.siteTable.delete(key);
    this.siteTable.set(key, site);
  }
  private readonly ir: FunctionIR;
  private readonly info: ControlInfo;
  /** Each block's place in reverse post-order (unreachable ones last). */
  private readonly rank: number[];
  private readonly joinCache: Map<number, number[]>;
  /** Names the unit resolves, by name: the same in every statement of the function. */
  private readonly names = new Map<string, TV>();
  /** Each loop's induction placeholders, by header: the loop's own condition bounds them. */
  private readonly placeholders = new Map<number, Set<Sym>>();
  private readonly file: string;
  private readonly inStates: Array<State | undefined>;
  private readonly outStates: Array<State | undefined>;
  /** Each branch block's condition (or switch value) in the last transfer. */
  private readonly conds: Array<TV | undefined>;
  private readonly fresh = new Map<string, Sym>();
  private readonly groups = new Map<number, GroupInfo>();
  private readonly lambdas = new Map<number, Range>();
  /** References bound to another local: what they read and write is that local. */
  private readonly aliases = new Map<number, string>();
  /** References bound to memory (`float& x = a[i]`): a load, whatever is stored through them. */
  private readonly memoryRefs = new Set<number>();
  /** Pointer parameters that point at the caller's own array or variable: their pointee is tracked. */
  private readonly privatePointers = new Set<number>();
  private readonly loopModes = new Map<string, 'sum'>();
  /** Each loop variable's head value now, and each loop's round (its head values changed that many times). */
  private readonly heads = new Map<string, TV>();
  private readonly rounds = new Map<number, number>();

  private readonly modified = new Map<number, Set<string>>();
  private joinsOf: Map<number, number[]> | null = null;
  private recording = false;
  private currentBlock = 0;
  private guardMemo = new Map<number, Sym[]>();
  /** Where each guard this walk made is written, for messages that quote the code (see BarrierEvent). */
  private readonly guardSources = new Map<Sym, GuardSource>();
  /**
   * Conditions an operand being evaluated runs under beside its block's (`c ? s[i] : 0`'s `s[i]`
   * runs only where `c` holds; `a && b`'s `b` where `a` does): C++ evaluates only the operand chosen.
   */
  private readonly operandGuards: Sym[] = [];
  result: TV = { sym: ZERO, origin: null };
  exitState: State = new Map();

  constructor(
    private readonly session: Session,
    private readonly inv: Invocation,
  ) {
    this.ir = inv.ir;
    this.file = inv.scope.file;
    this.info = keptControlInfo(this.ir);
    this.joinCache = keptJoins(this.info);
    const n = this.ir.blocks.length;
    this.rank = new Array<number>(n).fill(n);
    this.info.order.forEach((b, i) => (this.rank[b] = i));
    this.inStates = new Array(n);
    this.outStates = new Array(n);
    this.conds = new Array(n);
  }

  // --- the solver ---

  run(): void {
    this.inStates[0] = this.entryState();
    const rank = this.rank;
    const queued = new Set<number>([0]);
    const queue = [0];
    while (queue.length > 0 && !this.session.exhausted) {
      // The block of lowest rank first, the earliest queued among equals (as a stable sort would
      // put it): found in one pass, not sorted each time.
      let lowest = 0;
      for (let k = 1; k < queue.length; k++) if (rank[queue[k]] < rank[queue[lowest]]) lowest = k;
      const b = queue.splice(lowest, 1)[0];
      queued.delete(b);
      const state = b === 0 ? this.inStates[0]! : this.merge(b);
      if (!state) continue;
      this.inStates[b] = state;
      const out = this.transfer(this.ir.blocks[b], state);
      const before = this.outStates[b];
      const condBefore = this.conds[b];
      this.outStates[b] = out;
      void condBefore;
      if (before && sameState(before, out)) continue;
      for (const s of this.feasibleSuccessors(b))
        if (!queued.has(s)) {
          queued.add(s);
          queue.push(s);
        }
      // A branch's condition decides joins and loop exits elsewhere: those blocks see it again.
      for (const j of this.dependentsOfCondition(b))
        if (!queued.has(j) && this.outStates[j] !== undefined) {
          queued.add(j);
          queue.push(j);
        }
    }
    const exit = this.ir.exit;
    this.exitState = (exit >= 0 ? this.merge(exit) : undefined) ?? new Map();
    this.result = this.exitState.get('$ret') ?? { sym: this.freshFree('return', 'return value'), origin: null };
  }

  private recorded = false;

  /** The reporting pass (once): every reachable block again, in order, with the fixed point's states, its branches recorded. */
  record(): UniformitySite[] {
    if (this.recorded) return [...this.siteTable.values()];
    this.recorded = true;
    this.recording = true;
    try {
      for (const b of this.info.order) {
        const state = this.inStates[b];
        if (!state) continue;
        this.outStates[b] = this.transfer(this.ir.blocks[b], state);
      }
      this.noteDepartures();
    } finally {
      this.recording = false;
    }
    return [...this.siteTable.values()];
  }

  private dependentsOfCondition(b: number): number[] {
    if (this.info.succs[b].length < 2) return [];
    let joins = this.joinCache.get(b);
    if (!joins) {
      joins = joinPoints(this.info, b);
      this.joinCache.set(b, joins);
    }
    const out = [...joins];
    // The exits of the loops it is in (a varying exit makes the values leaving them vary).
    for (const loop of this.info.loops.values())
      if (loop.blocks.has(b)) for (const x of this.exitsOf(loop)) out.push(x);
    return out;
  }

  private exitsOf(loop: LoopBlocks): number[] {
    const out: number[] = [];
    for (const b of loop.blocks) for (const s of this.info.succs[b]) if (!loop.blocks.has(s)) out.push(s);
    return out;
  }

  private feasibleSuccessors(b: number): number[] {
    const exit = this.ir.blocks[b].exit;
    if (exit.k === 'branch') {
      const c = this.conds[b];
      if (c && c.sym.op === 'const') return [c.sym.value !== 0 ? exit.then : exit.else];
      return exit.then === exit.else ? [exit.then] : [exit.then, exit.else];
    }
    if (exit.k === 'switch') {
      const c = this.conds[b];
      if (c && c.sym.op === 'const') {
        const value = c.sym.value;
        const hit = exit.cases.find((k) => k.value && this.caseValue(k.value) === value);
        const fallback = exit.cases.find((k) => !k.value);
        if (hit) return [hit.to];
        if (fallback) return [fallback.to];
      }
      return [...new Set(exit.cases.map((k) => k.to))];
    }
    return this.info.succs[b];
  }

  private caseValue(e: Expr): number | null {
    const v = this.evalDetached(e);
    return v.sym.op === 'const' ? v.sym.value : null;
  }

  private feasiblePreds(b: number): number[] {
    return this.info.preds[b].filter((p) => this.outStates[p] !== undefined && this.feasibleSuccessors(p).includes(b));
  }

  /** The state where block `b` starts: its predecessors' states joined. */
  private merge(b: number): State | undefined {
    const preds = this.feasiblePreds(b);
    if (preds.length === 0) return undefined;
    const loop = this.info.loops.get(b);
    if (loop) return this.mergeLoopHead(b, loop, preds);
    const incoming = preds.map((p) => ({ p, state: this.leaving(p, b) }));
    if (incoming.length === 1) return incoming[0].state;
    return this.joinAt(b, incoming);
  }

  /**
   * The state on the edge p → b: values leaving a loop whose lanes leave at different iterations
   * vary with them ("temporal divergence"). Where the lanes of a warp leave together (a
   * warp-uniform exit: `i < roundDown(n, 32)`), a lane's index keeps its shape, and a value the
   * block shared differs only from warp to warp. A value no iteration changed (what a lane leaves
   * with is what came in: an outer loop's index passed to a call the loop makes, which the
   * syntax alone counts as written) is the same whichever iteration a lane leaves at.
   */
  private leaving(p: number, b: number): State {
    const state = this.outStates[p]!;
    let out: State | null = null;
    for (const loop of this.info.loops.values()) {
      if (!loop.blocks.has(p) || loop.blocks.has(b)) continue;
      const exitKind = this.divergentExitKind(loop);
      if (exitKind === 'uniform') continue;
      out ??= copyState(state);
      const entries = this.info.preds[loop.header]
        .filter((q) => !loop.blocks.has(q))
        .map((q) => this.outStates[q])
        .filter((s): s is State => s !== undefined);
      for (const key of this.modifiedIn(loop)) {
        const v = out.get(key);
        if (!v) continue;
        if (
          entries.length > 0 &&
          entries.every((s) => {
            const came = s.get(key);
            return !!came && (came.sym === v.sym || symKey(came.sym) === symKey(v.sym));
          })
        )
          continue;
        const kind = this.session.kindOf(v.sym);
        if (exitKind === 'warpUniform' && kind !== 'uniform') continue;
        out.set(key, { sym: this.opaque(`exit${loop.header}:${key}`, maxKind(kind, exitKind), key), origin: v.origin });
      }
    }
    return out ?? state;
  }

  /** The widest kind among the conditions of the branches that leave `loop`. */
  private divergentExitKind(loop: LoopBlocks): DependenceKind {
    let kind: DependenceKind = 'uniform';
    for (const b of loop.blocks) {
      if (this.info.succs[b].length < 2) continue;
      if (!this.info.succs[b].some((s) => !loop.blocks.has(s))) continue;
      const c = this.conds[b];
      if (c) kind = maxKind(kind, this.session.kindOf(c.sym));
    }
    return kind;
  }

  private modifiedIn(loop: LoopBlocks): Set<string> {
    let set = this.modified.get(loop.header);
    if (!set) {
      set = new Set();
      const byValue = (call: Extract<Expr, { k: 'call' }>, k: number) => this.passedByValue(call, k);
      for (const b of loop.blocks)
        for (const s of this.ir.blocks[b].stmts) collectWrites(s.k === 'decl' ? null : s.expr, set, this.ir, byValue);
      for (const b of loop.blocks) {
        const exit = this.ir.blocks[b].exit;
        if (exit.k === 'branch') collectWrites(exit.cond, set, this.ir, byValue);
        if (exit.k === 'switch') collectWrites(exit.value, set, this.ir, byValue);
      }
      // A call may write the loop's variables through references: those passed to calls count,
      // unless every function the call can reach takes that argument by value.
      this.modified.set(loop.header, set);
    }
    return set;
  }

  /**
   * Every function `call` can reach is in view and takes its argument `k` by value: a local passed
   * there by name is read, not written (PyTorch3D's `binmask.set(by, bx, e)` in two nested loops
   * made the outer loop's index per-lane data).
   */
  private passedByValue(call: Extract<Expr, { k: 'call' }>, k: number): boolean {
    const targets = this.targetsOf(call.callee, call.args.length, new Map(), call.at);
    return (
      targets.length > 0 &&
      targets.every(({ pf }) => {
        const p = pf.fn.params[k];
        return p !== undefined && !p.text.includes('...') && !writableReference(p.text);
      })
    );
  }

  /**
   * A loop's head: a variable the body does not change keeps its value; one stepped by a uniform
   * amount each iteration is an induction variable (a counter, or a lane's index plus a uniform
   * offset); anything else is joined by kind.
   */
  private mergeLoopHead(h: number, loop: LoopBlocks, preds: number[]): State {
    const entries = preds.filter((p) => !loop.blocks.has(p));
    const backs = preds.filter((p) => loop.blocks.has(p));
    const entryIncoming = entries.map((p) => ({ p, state: this.leaving(p, h) }));
    const entry =
      entryIncoming.length === 0
        ? new Map<string, TV>()
        : entryIncoming.length === 1
          ? entryIncoming[0].state
          : this.joinAt(h, entryIncoming);
    // The back edges' states count only when the body ran with the head values set now (an outer
    // loop may bring the head round again before the body has): they carry the round they saw.
    const genKey = `#round${h}`;
    const round = this.rounds.get(h) ?? 0;
    const fresh = backs.filter((p) => {
      const g = this.outStates[p]!.get(genKey);
      return g !== undefined && g.sym.op === 'const' && g.sym.value === round;
    });
    const state = new Map(entry);
    let changed = false;
    for (const key of this.modifiedIn(loop)) {
      const e = entry.get(key);
      if (!e) continue;
      const modeKey = `${h}:${key}`;
      let current = this.heads.get(modeKey);
      // A head value worked out while the start was uniform stands for a uniform value: once an
      // earlier or outer loop makes the start depend on the thread (it converges later), the head is
      // read again from the new start, and the body runs again with it (else a shuffle reduction
      // after a per-lane loop read as uniform).
      if (
        current &&
        isThreadDependent(e.sym) &&
        !isThreadDependent(current.sym) &&
        this.loopModes.get(modeKey) !== 'sum'
      ) {
        this.heads.delete(modeKey);
        current = undefined;
        changed = true;
      }
      if (backs.length === 0 || (fresh.length === 0 && current === undefined)) continue;
      if (fresh.length === 0) {
        state.set(key, current!);
        continue;
      }
      const backValues = fresh.map((p) => this.outStates[p]!.get(key)).filter((v): v is TV => !!v);
      const next = this.headValue(h, key, e, current, backValues);
      if (next === null) continue;
      if (!current || symKey(current.sym) !== symKey(next.sym)) changed = true;
      this.heads.set(modeKey, next);
      state.set(key, next);
    }
    if (changed) this.rounds.set(h, round + 1);
    state.set(genKey, { sym: constant(this.rounds.get(h) ?? 0), origin: null });
    return state;
  }

  /**
   * A loop variable's value at the head, from its start `e` and what the body leaves in it, read
   * against the head value the body ran with (`current`; none: the start): unchanged (null); a
   * counter stepped by a uniform amount; a lane's start plus a uniform offset that grows each
   * iteration; else as varying as anything the loop puts in it.
   */
  private headValue(h: number, key: string, e: TV, current: TV | undefined, backValues: TV[]): TV | null {
    const modeKey = `${h}:${key}`;
    const name = keyName(key, this.ir);
    const head = current?.sym ?? e.sym;
    if (this.loopModes.get(modeKey) !== 'sum') {
      if (!current && backValues.every((v) => symKey(v.sym) === symKey(e.sym))) return null;
      const p = this.freshFree(`head${h}:${key}`, name) as FreeSym;
      // The body ran with the start value: try a counter first (its step shows in the next round),
      // or for a thread-dependent start, the start plus a uniform offset: a variable computed from
      // another one the loop steps (`base = index * T`) then shows its own step against it.
      if (!current && isThreadDependent(e.sym))
        return { sym: binary('+', e.sym, this.freshFree(`offset${h}:${key}`, `${name} offset`)), origin: e.origin };
      if (!current) return { sym: p, origin: null };
      // The first round's guess (the start plus an offset the loop might step) came back as it went
      // in: nothing in the loop changes the variable (it was only passed to a call, which the syntax
      // counts as a write), so it holds its start.
      const guess = this.fresh.get(`offset${h}:${key}`);
      if (
        guess?.op === 'free' &&
        guess.loop === null &&
        current.sym.op === 'binary' &&
        current.sym.operator === '+' &&
        current.sym.right === guess &&
        backValues.every((v) => symKey(v.sym) === symKey(head))
      )
        return e;
      const step = commonStepOf(backValues, [head]) ?? linearStepOf(backValues, head);
      const uniformStep = step !== null && !isThreadDependent(step.amount) && !mentions(step.amount, p);
      if (step === null && backValues.every((v) => symKey(v.sym) === symKey(head))) return current;
      if (step?.amount.op === 'const' && step.amount.value === 0 && step.operator === '+') return current;
      if (uniformStep && !isThreadDependent(e.sym)) {
        if (!p.loop) p.loop = { role: 'counter', init: e.sym, cond: null, update: step };
        this.placeholdersOf(h).add(p);
        return { sym: p, origin: null };
      }
      if (uniformStep && (step.operator === '+' || step.operator === '-')) {
        const offset = this.freshFree(`offset${h}:${key}`, `${name} offset`) as FreeSym;
        if (!offset.loop)
          offset.loop = { role: 'offset', init: ZERO, cond: null, update: { operator: '+', amount: step.amount } };
        return { sym: binary(step.operator, e.sym, offset), origin: e.origin };
      }
      this.loopModes.set(modeKey, 'sum');
    }
    // As varying as anything the loop puts in it.
    return this.summarize(`head${h}`, key, [e, ...backValues], 'uniform');
  }

  /** Paths joining at `b`: one value where they agree, a choice by the branch they come from, else joined by kind. */
  private joinAt(b: number, incoming: Array<{ p: number; state: State }>): State {
    const keys = new Set<string>();
    for (const { state } of incoming) for (const k of state.keys()) keys.add(k);
    const out: State = new Map();
    const gate = this.gateOf(
      b,
      incoming.map((i) => i.p),
    );
    const controlKind = this.joinControlKind(b);
    for (const key of keys) {
      const values: Array<{ side: number; v: TV }> = [];
      incoming.forEach(({ state }, i) => {
        const v = state.get(key);
        if (v) values.push({ side: gate ? gate.sides[i] : -1, v });
      });
      if (values.length === 0) continue;
      const first = values[0].v;
      if (values.every((x) => sameTV(x.v, first))) {
        out.set(key, first);
        continue;
      }
      if (gate && values.length === incoming.length) {
        const thenValues = values.filter((x) => x.side === 0).map((x) => x.v);
        const elseValues = values.filter((x) => x.side === 1).map((x) => x.v);
        if (thenValues.length > 0 && elseValues.length > 0) {
          const a = thenValues.every((v) => sameTV(v, thenValues[0]))
            ? thenValues[0]
            : this.summarize(`join${b}t`, key, thenValues, controlKind);
          const c = elseValues.every((v) => sameTV(v, elseValues[0]))
            ? elseValues[0]
            : this.summarize(`join${b}e`, key, elseValues, controlKind);
          const select: Sym = { op: 'select', cond: gate.cond.sym, then: a.sym, else: c.sym };
          if (!symFacts(gate.cond.sym).opaqueLane && symSize(select) <= MAX_SELECT_SIZE) {
            out.set(key, { sym: select, origin: a.origin ?? c.origin ?? gate.cond.origin });
            continue;
          }
        }
      }
      out.set(
        key,
        this.summarize(
          `join${b}`,
          key,
          values.map((x) => x.v),
          gate ? maxKind(controlKind, this.session.kindOf(gate.cond.sym)) : controlKind,
        ),
      );
    }
    return out;
  }

  /**
   * The two-way branch whose paths `b` joins, when `b` is where they all meet (its immediate
   * post-dominator, dominated by it), and which side each predecessor comes from.
   */
  private gateOf(b: number, preds: number[]): { cond: TV; sides: number[] } | null {
    const d = this.info.idom[b];
    if (d < 0 || this.info.ipdom[d] !== b) return null;
    const exit = this.ir.blocks[d].exit;
    if (exit.k !== 'branch' || exit.then === exit.else) return null;
    const cond = this.conds[d];
    if (!cond) return null;
    const sides: number[] = [];
    for (const p of preds) {
      let side = -1;
      if (p === d) side = exit.then === b ? 0 : 1;
      else if (exit.then !== b && dominates(this.info.idom, exit.then, p)) side = 0;
      else if (exit.else !== b && dominates(this.info.idom, exit.else, p)) side = 1;
      if (side < 0) return null;
      sides.push(side);
    }
    return { cond, sides };
  }

  /** The widest kind of the conditions of the branches whose paths meet at `b`. */
  private joinControlKind(b: number): DependenceKind {
    if (!this.joinsOf) {
      this.joinsOf = new Map();
      for (const x of this.info.order)
        if (this.info.succs[x].length > 1)
          for (const j of this.joinCache.get(x) ?? joinPoints(this.info, x)) {
            const list = this.joinsOf.get(j);
            if (list) list.push(x);
            else this.joinsOf.set(j, [x]);
          }
    }
    let kind: DependenceKind = 'uniform';
    for (const x of this.joinsOf.get(b) ?? []) {
      const c = this.conds[x];
      if (c) kind = maxKind(kind, this.session.kindOf(c.sym));
    }
    return kind;
  }

  /** Several values of `key` at one place, as one: as varying as the widest of them and of `control`. */
  private summarize(place: string, key: string, values: TV[], control: DependenceKind): TV {
    let kind: DependenceKind = control;
    for (const v of values) kind = maxKind(kind, this.session.kindOf(v.sym));
    const origin = values.find((v) => v.origin && isThreadDependent(v.sym))?.origin ?? values[0]?.origin ?? null;
    if (kind === 'uniform') {
      const fixed = values.every((v) => isFixedValue(v.sym));
      return { sym: this.freshFree(`${place}:${key}${fixed ? '!' : ''}`, keyName(key, this.ir), fixed), origin: null };
    }
    return { sym: this.opaque(`${place}:${key}`, kind, keyName(key, this.ir)), origin };
  }

  // --- fresh values, one per place so that the fixed point is reached ---

  private freshFree(tag: string, name: string, fixed = false, perGrid = false): Sym {
    let s = this.fresh.get(tag);
    if (!s) {
      s = fixed ? fixedSym(name) : perGrid ? { ...(freeSym(name) as FreeSym), perGrid: true } : freeSym(name);
      this.fresh.set(tag, s);
    }
    return s;
  }

  /** A parameter's unknown value: a kernel's is the same in every block of a launch (global-access.ts reads it). */
  private parameterValue(id: number, name: string): Sym {
    const kernel = this.inv.params === null && this.inv.fn?.fn.global === true;
    return this.freshFree(`param${id}`, name, false, kernel);
  }

  private opaque(tag: string, kind: DependenceKind, what: string): Sym {
    const k = kind === 'warpUniform' ? 'warpUniform' : 'laneVarying';
    const full = `${tag}|${k}`;
    let s = this.fresh.get(full);
    if (!s) {
      s = opaqueSym(k, what);
      this.fresh.set(full, s);
    }
    return s;
  }

  /** A value as varying as `parts` (uniform: an unknown of its own, fixed when they all are). */
  private derived(tag: string, what: string, parts: TV[]): TV {
    let kind: DependenceKind = 'uniform';
    for (const p of parts) kind = maxKind(kind, this.session.kindOf(p.sym));
    if (kind === 'uniform') {
      const fixed = parts.length > 0 && parts.every((p) => isFixedValue(p.sym));
      return { sym: this.freshFree(`${tag}${fixed ? '!' : ''}`, what, fixed), origin: null };
    }
    return {
      sym: this.opaque(tag, kind, what),
      origin: parts.find((p) => p.origin && isThreadDependent(p.sym))?.origin ?? null,
    };
  }

  // --- blocks ---

  private entryState(): State {
    const state: State = new Map();
    const { ir, inv } = this;
    ir.params.forEach((id, k) => {
      const local = ir.locals[id];
      const given = inv.params?.[k];
      const group = groupOfType(local.type);
      if (group) this.groups.set(id, group);
      const fixed = inv.args?.find((a) => a.index === k);
      state.set(
        `l${id}`,
        given ??
          (fixed
            ? { sym: constant(fixed.value), origin: null }
            : { sym: this.parameterValue(id, local.name), origin: null }),
      );
      if (given?.fields) for (const [f, v] of given.fields) state.set(`l${id}.${f}`, v);
    });
    if (inv.self) for (const [f, v] of inv.self) state.set(`this.${f}`, v);
    for (const [pid, held] of this.passed) if (held) state.set(`l${pid}.*`, held);
    return state;
  }

  private transfer(block: Block, input: State): State {
    this.session.steps++;
    this.currentBlock = block.id;
    const state = copyState(input);
    for (const stmt of block.stmts) {
      if (stmt.k === 'decl') this.declare(this.ir.locals[stmt.local], stmt.init, state, stmt.at);
      else this.ev(stmt.expr, state, stmt.at);
    }
    const exit = block.exit;
    if (exit.k === 'branch') {
      const c = this.ev(exit.cond, state, exit.site?.condAt ?? exit.cond.at);
      this.conds[block.id] = c;
      if (this.recording && exit.site && isThreadDependent(c.sym)) {
        this.addSite({
          construct: exit.site.construct,
          file: this.file,
          at: exit.site.at,
          condAt: exit.site.condAt,
          arms: exit.site.arms,
          cond: c,
          guards: this.guardsOf(block.id, true),
        });
        // A loop's counter bounded by a uniform condition: the verdicts run the loop with it.
      }
      if (exit.site?.construct === 'loop' && !isThreadDependent(c.sym))
        this.noteLoopBound(c.sym, this.info.loopOf[block.id]);
    } else if (exit.k === 'switch') {
      const c = this.ev(exit.value, state, exit.value.at);
      this.conds[block.id] = c;
      if (this.recording && exit.site && isThreadDependent(c.sym)) {
        const seen = new Map<number, number[] | null>();
        const cases: Array<number[] | null> = [];
        for (const k of exit.cases) {
          if (!k.value) {
            if (!seen.has(k.to)) cases.push(null);
            continue;
          }
          const v = this.caseValue(k.value);
          cases.push(v === null ? [] : [v]);
        }
        void seen;
        this.addSite({
          construct: 'switch',
          file: this.file,
          at: exit.site.at,
          condAt: exit.site.condAt,
          arms: exit.site.arms,
          cond: c,
          guards: this.guardsOf(block.id, true),
          cases,
        });
      }
    } else if (exit.k === 'return' && exit.value) {
      state.set('$ret', this.ev(exit.value, state, exit.at));
    }
    return state;
  }

  /** `for (s = 16; s > 0; s >>= 1)`: the counter `s`'s bound, for the verdicts' simulation of its values. */
  private noteLoopBound(cond: Sym, header: number): void {
    const own = this.placeholders.get(header);
    if (!own) return;
    for (const f of symFacts(cond).frees)
      if (own.has(f) && f.loop && f.loop.role === 'counter' && f.loop.cond === null) f.loop.cond = cond;
  }

  private placeholdersOf(h: number): Set<Sym> {
    let set = this.placeholders.get(h);
    if (!set) {
      set = new Set();
      this.placeholders.set(h, set);
    }
    return set;
  }

  /** The varying conditions block `b` runs under (its own branch's excluded), outermost first, with the caller's. */
  private guardsOf(b: number, forSite: boolean): Sym[] {
    const all = this.guardChain(b, new Set([b]));
    return forSite ? all.slice(-MAX_GUARDS) : all;
  }

  private guardChain(b: number, seen: Set<number>): Sym[] {
    const kept = this.guardMemo.get(b);
    if (kept && this.recording) return kept;
    const out: Sym[] = [];
    const controls = [...this.info.controls[b]].filter((c) => !seen.has(c.branch));
    controls.sort((x, y) => this.rank[x.branch] - this.rank[y.branch]);
    for (const { branch, via } of controls) {
      seen.add(branch);
      for (const g of this.guardChain(branch, seen)) if (!out.includes(g)) out.push(g);
      const exit = this.ir.blocks[branch].exit;
      const c = this.conds[branch];
      if (!c || exit.k !== 'branch' || exit.then === exit.else || !isThreadDependent(c.sym)) continue;
      // Only where every way here takes that edge: the lanes that took the other one may come here
      // too (`if (c) {...} else if (d) return;` continues for c's lanes and for !d's).
      if (this.info.preds[via].length !== 1 || !dominates(this.info.idom, via, b)) continue;
      // The condition as the lanes here have it: true on the then edge, false on the else edge.
      const g: Sym = via === exit.then ? c.sym : negation(c.sym);
      if (!this.guardSources.has(g))
        this.guardSources.set(g, { file: this.file, at: exit.cond.at, negated: via !== exit.then });
      if (!out.includes(g)) out.push(g);
    }
    if (this.recording) this.guardMemo.set(b, out);
    return out;
  }

  private declare(local: Local, init: Expr | null, state: State, at: Range): void {
    const key = `l${local.id}`;
    if (local.shared) {
      // Block-wide storage: every thread reads the same location.
      state.set(key, { sym: this.freshFree(`shared${local.id}`, local.name), origin: null });
      return;
    }
    const group = groupOfType(local.type) ?? (init ? this.groupOf(init, state) : null);
    if (group) this.groups.set(local.id, group);
    if (init?.k === 'lambda') {
      this.lambdas.set(local.id, init.at);
      state.set(key, { sym: this.freshFree(`lambda${local.id}`, local.name), origin: null });
      return;
    }
    if (local.reference && init) {
      if (init.k === 'name' && init.local !== null) {
        this.aliases.set(local.id, this.aliasTarget(`l${init.local}`));
        return;
      }
      if (init.k === 'index' || (init.k === 'unary' && init.op === '*') || (init.k === 'field' && init.arrow)) {
        this.memoryRefs.add(local.id);
        state.set(key, this.ev(init, state, at));
        return;
      }
    }
    if (local.dims) {
      // A thread's own array: its elements are what was stored in them (here, what it starts with).
      const v = init ? this.ev(init, state, at) : null;
      const items = v?.fields ? [...v.fields.values()] : v ? [v] : [];
      state.set(
        key,
        items.length
          ? this.joinValues(`array${local.id}`, key, items)
          : { sym: this.freshFree(`array${local.id}`, local.name), origin: null },
      );
      return;
    }
    let v: TV;
    if (!init) v = { sym: this.freshFree(`uninit${local.id}`, local.name), origin: null };
    else if (init.k === 'init' && init.type !== null && !PRIMITIVE.test(init.type) && this.isClass(init.type)) {
      v = this.construct(init.type, init.items, state, at) ?? this.ev(init, state, at);
    } else v = this.ev(init, state, at);
    // Where the thread dependence comes from: the whole declaration (`int t = threadIdx.x;`).
    this.assignKey(key, v, state, local.declAt);
    if (init) this.notePointer(local, init, v.sym);
  }

  private aliasTarget(key: string): string {
    const m = /^l(\d+)$/.exec(key);
    const inner = m ? this.aliases.get(Number(m[1])) : undefined;
    return inner ?? key;
  }

  /** Stores `v` in `key`, its members too; a thread-dependent value remembers where it was set. */
  private assignKey(key: string, v: TV, state: State, at: Range): void {
    const stored: TV = { sym: v.sym, origin: isThreadDependent(v.sym) ? { file: this.file, at } : null };
    // A whole value's members go with it; members it does not name are dropped.
    if (this.hasMembers.has(key)) {
      for (const k of [...state.keys()]) if (k.startsWith(`${key}.`) && !k.endsWith('.*')) state.delete(k);
      this.hasMembers.delete(key);
    }
    state.set(key, stored);
    if (v.fields) {
      for (const [f, fv] of v.fields) state.set(`${key}.${f}`, fv);
      this.hasMembers.add(key);
    }
  }

  /** Keys whose members were ever stored apart (flow-insensitive: only which keys to look for). */
  private readonly hasMembers = new Set<string>();

  private joinValues(tag: string, key: string, values: TV[]): TV {
    if (values.every((v) => sameTV(v, values[0]))) return values[0];
    return this.summarize(tag, key, values, 'uniform');
  }

  // --- expressions ---

  /** Evaluates without keeping any effect (a case label, a template argument). */
  private evalDetached(e: Expr, state?: State): TV {
    const saved = this.recording;
    this.recording = false;
    try {
      return this.ev(e, new Map(state ?? this.inStates[this.currentBlock] ?? []), e.at);
    } finally {
      this.recording = saved;
    }
  }

  private ev(e: Expr, state: State, stmtAt: Range): TV {
    switch (e.k) {
      case 'num':
        return { sym: constant(e.value), origin: null };
      case 'str':
      case 'lambda':
        return { sym: this.freshFree(`at${e.at[0]}:${e.k}`, e.k), origin: null };
      case 'this':
        return { sym: this.freshFree('this', 'this'), origin: null };
      case 'name':
        return this.nameValue(e, state);
      case 'field':
        return this.fieldValue(e, state, stmtAt);
      case 'index':
        return this.indexValue(e, state, stmtAt);
      case 'unary': {
        if (e.op === '*') return this.derefValue(e, state, stmtAt);
        if (e.op === '&') return this.addressOf(e.arg, state, stmtAt);
        const v = this.ev(e.arg, state, stmtAt);
        if (e.op === '+') return v;
        const sym: Sym =
          v.sym.op === 'const'
            ? constant(
                e.op === '-'
                  ? -v.sym.value
                  : e.op === '!'
                    ? v.sym.value === 0
                      ? 1
                      : 0
                    : e.op === '~'
                      ? ~v.sym.value
                      : v.sym.value,
              )
            : { op: 'unary', operator: e.op, arg: v.sym };
        return { sym, origin: v.origin };
      }
      case 'binary': {
        const l = this.ev(e.left, state, stmtAt);
        const shortCircuit = (e.op === '&&' || e.op === '||') && isThreadDependent(l.sym);
        if (shortCircuit && this.recording && hasEffects(e.right))
          this.recordSite('short-circuit', e.at, e.left.at, [e.right.at], l);
        const r = shortCircuit
          ? this.underOperandGuard(e.op === '&&' ? l.sym : negation(l.sym), () => this.ev(e.right, state, stmtAt))
          : this.ev(e.right, state, stmtAt);
        return this.capped(`bin${e.at[0]}`, { sym: binary(e.op, l.sym, r.sym), origin: firstOrigin(l, r) });
      }
      case 'cond': {
        const c = this.ev(e.cond, state, stmtAt);
        if (this.recording && isThreadDependent(c.sym))
          this.recordSite('ternary', e.at, e.cond.at, [e.then.at, e.else.at], c);
        const varying = isThreadDependent(c.sym);
        const a = varying
          ? this.underOperandGuard(c.sym, () => this.ev(e.then, state, stmtAt))
          : this.ev(e.then, state, stmtAt);
        const b = varying
          ? this.underOperandGuard(negation(c.sym), () => this.ev(e.else, state, stmtAt))
          : this.ev(e.else, state, stmtAt);
        if (c.sym.op === 'const') return c.sym.value !== 0 ? a : b;
        if (sameTV(a, b)) return a;
        return this.capped(`sel${e.at[0]}`, {
          sym: { op: 'select', cond: c.sym, then: a.sym, else: b.sym },
          origin: firstOrigin(c, a, b),
        });
      }
      case 'assign':
        return this.assign(e, state, stmtAt);
      case 'update': {
        const old = this.ev(e.arg, state, stmtAt);
        const next: TV = { sym: binary(e.op === '++' ? '+' : '-', old.sym, constant(1)), origin: old.origin };
        this.store(e.arg, next, state, stmtAt);
        return e.prefix ? next : old;
      }
      case 'cast':
        return this.ev(e.arg, state, stmtAt);
      case 'sizeof': {
        if (e.arg && !e.type) this.ev(e.arg, state, stmtAt);
        const bytes = this.sizeofOperand(e);
        if (bytes !== null) return { sym: constant(bytes), origin: null };
        return { sym: this.freshFree(`sizeof${e.at[0]}`, 'sizeof', true), origin: null };
      }
      case 'init': {
        const items = e.items.map((x) => this.ev(x, state, stmtAt));
        if (items.length === 1 && !e.designators && (e.type === null || PRIMITIVE.test(e.type))) return items[0];
        const names = this.memberNames(e.type, items.length, e.designators);
        const fields = new Map<string, TV>();
        items.forEach((v, i) => fields.set(names[i] ?? String(i), v));
        const whole = this.derived(`init${e.at[0]}`, e.type ?? 'aggregate', items);
        return { ...whole, fields };
      }
      case 'comma': {
        let last: TV = { sym: ZERO, origin: null };
        for (const x of e.items) last = this.ev(x, state, stmtAt);
        return last;
      }
      case 'call': {
        const result = this.callValue(e, state, stmtAt);
        // A pointer passed on may hold a local's address (`_block(tb, warp, res_as_int)`).
        if (this.escaped.size > 0 && e.args.some((a) => this.mayHoldAddress(a)))
          this.clobberEscaped(`call${e.at[0]}`, [], state, e.at);
        return result;
      }
      case 'launch':
        for (const x of [...e.config, ...e.args]) this.ev(x, state, stmtAt);
        return { sym: this.freshFree(`launch${e.at[0]}`, 'launch'), origin: null };
      case 'asm':
        return this.asmValue(e, state, stmtAt);
      case 'alternatives': {
        // Definitions the unit cannot choose between: the value is one of theirs, leaving out those of
        // builds in which the code does not compile (a macro's name left naming nothing; values/evaluate.ts).
        const resolver = this.session.program.resolver(this.inv.scope, MAX_UNIFORMITY_CALL_DEPTH);
        const compiling = e.options.filter((o) => !readsUndeclaredMacro(o, resolver));
        const options = compiling.length > 0 ? compiling : e.options;
        const values = options.map((o, i) => this.ev(o, i === 0 ? state : copyState(state), stmtAt));
        return this.joinValues(`alt${e.at[0]}`, `alt${e.at[0]}`, values);
      }
      case 'unknown':
        return { sym: this.freshFree(`unknown${e.at[0]}:${e.text}`, e.text || 'value'), origin: null };
    }
  }

  private underOperandGuard<T>(guard: Sym, evaluate: () => T): T {
    this.operandGuards.push(guard);
    try {
      return evaluate();
    } finally {
      this.operandGuards.pop();
    }
  }

  /** The varying conditions an event at the current place runs under: its block's, then its operand's. */
  private eventGuards(): Sym[] {
    const block = this.guardsOf(this.currentBlock, false);
    return this.operandGuards.length > 0 ? [...block, ...this.operandGuards] : block;
  }

  /** Whether the current place may run more than once per thread: it is in a loop. */
  private inLoop(): boolean {
    return (this.info.loopOf[this.currentBlock] ?? -1) >= 0;
  }

  private recordSite(construct: SiteConstruct, at: Range, condAt: Range, arms: Range[], cond: TV): void {
    this.addSite({
      construct,
      file: this.file,
      at,
      condAt,
      arms,
      cond,
      guards: this.guardsOf(this.currentBlock, true),
    });
  }

  /** A value past the size a join keeps is summarised by its kind (a long chain of selects in a loop). */
  private capped(tag: string, v: TV): TV {
    if (symSize(v.sym) <= MAX_EXPRESSION_SIZE) return v;
    return this.derived(tag, 'expression', [v]);
  }

  private nameValue(e: Extract<Expr, { k: 'name' }>, state: State): TV {
    if (e.local !== null) {
      const id = e.local;
      const alias = this.aliases.get(id);
      const key = alias ?? `l${id}`;
      const v = state.get(key);
      if (v) return v.fields || !this.hasMembers.has(key) ? v : { ...v, fields: fieldsOf(state, key) };
      return { sym: this.freshFree(`unset${id}`, this.ir.locals[id]?.name ?? 'local'), origin: null };
    }
    const name = e.name;
    // CUDA's `warpSize`, unless a template parameter of that name hides it (`template <int warpSize>`).
    if (name === 'warpSize' && !this.inv.scope.bindings.has(name)) return { sym: constant(32), origin: null };
    if (BUILTIN_VECTORS.has(name)) {
      // The whole vector (`dim3 t = threadIdx;`): its members apart.
      const op = name as 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim';
      const fields = new Map<string, TV>();
      for (const dim of ['x', 'y', 'z'] as Axis[]) fields.set(dim, { sym: { op, dim }, origin: null });
      return {
        sym:
          op === 'threadIdx'
            ? this.opaque(`vec:${name}`, 'laneVarying', name)
            : this.freshFree(`vec:${name}`, name, true),
        origin: null,
        fields,
      };
    }
    const captured = this.inv.captures?.get(name);
    if (captured) return state.get(`cap.${name}`) ?? captured;
    if (this.inv.self && !name.includes('::') && this.isMember(name))
      return this.staticOfSelf(name) ?? state.get(`this.${name}`) ?? this.memberOfSelf(name, state);
    return this.programName(name, e.templateArgs);
  }

  private programName(name: string, templateArgs: Extract<Expr, { k: 'name' }>['templateArgs']): TV {
    if (templateArgs) return this.resolveName(name, templateArgs);
    let v = this.names.get(name);
    if (!v) {
      v = this.resolveName(name, null);
      this.names.set(name, v);
    }
    return v;
  }

  private resolveName(name: string, templateArgs: Extract<Expr, { k: 'name' }>['templateArgs']): TV {
    const { program } = this.session;
    const scope = this.inv.scope;
    const bound = scope.bindings.get(name);
    if (bound)
      return isType(bound)
        ? { sym: this.freshFree(`type:${name}`, name, true), origin: null }
        : this.fromVal(name, bound);
    if (this.inv.fn?.fn.templateParams?.some((p) => p.name === name))
      return { sym: this.freshFree(`tparam:${name}`, name, true), origin: null };
    const v = program
      .resolver(scope, MAX_UNIFORMITY_CALL_DEPTH)
      .name(name, templateArgs ?? null, (x) => program.evaluateIn(x, scope));
    if (v) return this.fromVal(name, v);
    // Declared nowhere in the unit: a variable of another file, or a macro set when the kernel is
    // compiled at run time (`SORT_KEY`), which may stand for any expression of what is in scope.
    const sym = this.freshFree(`global:${name}`, name);
    this.session.undeclared.add(sym);
    return { sym, origin: null };
  }

  /** A host value (a constant, a template argument) as a uniform value. */
  private fromVal(name: string, v: Val): TV {
    if (v.k === 'num' && v.values.length === 1) return { sym: constant(v.values[0]), origin: null };
    // Compile-time values the unit cannot narrow to one (a constant of several configurations) are fixed unknowns.
    // A variable that is not const is data; any other declared constant is fixed at compile time.
    const fixed = v.k === 'num' || (v.k === 'top' && !/is not const/.test(v.why ?? ''));
    return { sym: this.freshFree(`val:${name}`, name, fixed), origin: null };
  }

  private isMember(name: string): boolean {
    const cls = this.inv.fn?.fn.className;
    if (!cls) return false;
    return this.session.program.recordsNamed(cls).some((r) => r.record.fields.some((f) => f.name === name));
  }

  /** A `static constexpr` member of the method's class, read by its name: the class's constant, not the object's. */
  private staticOfSelf(name: string): TV | null {
    const cls = this.inv.fn?.fn.className;
    if (!cls) return null;
    // A class template's member is its instance's: named with the parameters the method is read with.
    const params = this.session.program.recordsNamed(cls).find((r) => r.record.templateParams)?.record.templateParams;
    return this.staticMember(params ? `${cls}<${params.map((p) => p.name).join(', ')}>` : cls, name);
  }

  /**
   * `Class::name` where the class declares it `static constexpr` (or `static const`): its value,
   * else an unknown the compiler fixes, the same for every thread whatever object it is read through.
   */
  private staticMember(type: string, name: string): TV | null {
    // Asked at every read of a member name, each time round the walk: the answer is the class's.
    const key = `${type}\u0000${name}`;
    const kept = this.staticMembers.get(key);
    if (kept !== undefined) return kept;
    const cls = baseName(type.replace(/<[\s\S]*$/, ''));
    const records = this.session.program.recordsNamed(cls);
    let out: TV | null = null;
    if (records.some((r) => r.record.fields.some((f) => f.name === name && f.staticConstant))) {
      const c = this.session.program
        .resolver(this.inv.scope, MAX_UNIFORMITY_CALL_DEPTH)
        .name(`${type}::${name}`, null, () => ({ k: 'top', params: 0 }));
      out =
        c && c.k === 'num' && c.values.length === 1
          ? { sym: constant(c.values[0]), origin: null }
          : { sym: this.freshFree(`static:${cls}::${name}`, name, true), origin: null };
    }
    this.staticMembers.set(key, out);
    return out;
  }

  /** `staticMember`'s answers in this walk (its scope is fixed). */
  private readonly staticMembers = new Map<string, TV | null>();

  private memberOfSelf(field: string, state: State): TV {
    void state;
    return this.inv.self?.get(field) ?? { sym: this.freshFree(`self:${field}`, field), origin: null };
  }

  private fieldValue(e: Extract<Expr, { k: 'field' }>, state: State, stmtAt: Range): TV {
    const { object, field } = e;
    if (object.k === 'name' && object.local === null && BUILTIN_VECTORS.has(object.name) && /^[xyz]$/.test(field)) {
      const op = object.name as 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim';
      if (op === 'threadIdx' && field !== 'x') this.session.multiDimensional = true;
      if (op === 'threadIdx' && field === 'z') this.session.threeDimensional = true;
      return { sym: { op, dim: field as Axis }, origin: op === 'threadIdx' ? { file: this.file, at: e.at } : null };
    }
    // Cooperative groups: `block.thread_index().x`, `grid.block_index().y`.
    if (object.k === 'call' && object.callee.k === 'field' && /^[xyz]$/.test(field)) {
      const method = object.callee.field;
      const group = this.groupOf(object.callee.object);
      if (group) {
        this.ev(object.callee.object, state, stmtAt);
        const dim = field as Axis;
        if (method === 'thread_index' && group.kind === 'block') {
          if (dim !== 'x') this.session.multiDimensional = true;
          if (dim === 'z') this.session.threeDimensional = true;
          return { sym: { op: 'threadIdx', dim }, origin: { file: this.file, at: e.at } };
        }
        if ((method === 'group_index' || method === 'block_index') && group.kind !== 'tile')
          return { sym: { op: 'blockIdx', dim }, origin: null };
        if ((method === 'group_dim' || method === 'dim_threads') && group.kind === 'block')
          return { sym: { op: 'blockDim', dim }, origin: null };
        if (method === 'dim_blocks' && group.kind === 'grid') return { sym: { op: 'gridDim', dim }, origin: null };
      }
    }
    if (object.k === 'this')
      return this.staticOfSelf(field) ?? state.get(`this.${field}`) ?? this.memberOfSelf(field, state);
    const key = this.keyOf(object);
    if (key && !e.arrow) {
      const held = state.get(`${key}.${field}`);
      if (held) return held;
    }
    // A static member is one constant whatever the object: `p.size` is `Params::size`.
    const type = this.typeOf(object);
    if (type) {
      const c = this.session.program
        .resolver(this.inv.scope, MAX_UNIFORMITY_CALL_DEPTH)
        .name(`${type}::${field}`, null, () => ({ k: 'top', params: 0 }));
      if (c && c.k === 'num' && c.values.length === 1) return { sym: constant(c.values[0]), origin: null };
      const member = this.staticMember(this.instanceTypeOf(object) ?? type, field);
      if (member) return member;
    }
    const base = this.elementOf(e, state, stmtAt, false);
    if (base.fields?.has(field)) return base.fields.get(field)!;
    // Through a pointer: a load at the object's address; a member of a value: as varying as the
    // value, and one value wherever it is read while the value is the same (`param.n` read twice is
    // one unknown, as a parameter is).
    const tag =
      !e.arrow && base.sym.op === 'free' && !isThreadDependent(base.sym)
        ? `field:${symKey(base.sym)}:${field}`
        : `field${e.at[0]}:${field}`;
    // A member of a kernel's struct parameter is as alike in every block as the parameter. (Only
    // here: marking what is derived from such values in general makes more unknowns as a loop's
    // fixed point runs, and their ids, which some of the walk's orderings follow, move.)
    if (!e.arrow && base.sym.op === 'free' && base.sym.perGrid)
      return { sym: this.freshFree(tag, exprText(e), false, true), origin: null };
    return this.derived(tag, exprText(e), [base]);
  }

  /** The state key an lvalue names (a local, its member, `this`'s member), or null (memory). */
  private keyOf(e: Expr): string | null {
    if (e.k === 'name' && e.local !== null) return this.aliases.get(e.local) ?? `l${e.local}`;
    if (e.k === 'name' && this.inv.captures?.has(e.name)) return `cap.${e.name}`;
    if (e.k === 'name' && this.inv.self && this.isMember(e.name)) return `this.${e.name}`;
    if (e.k === 'field' && !e.arrow) {
      const inner = this.keyOf(e.object);
      return inner ? `${inner}.${e.field}` : null;
    }
    if (e.k === 'field' && e.object.k === 'this') return `this.${e.field}`;
    return null;
  }

  /** The class a local or member is of, as written without qualifiers (for its static members). */
  private typeOf(e: Expr): string | null {
    if (e.k === 'name' && e.local !== null) return this.resolveType(this.ir.locals[e.local]?.type ?? '');
    return null;
  }

  /** The class template instance a local is of, as written (`Loader<TILE, BLOCK>`), or null. */
  private instanceTypeOf(e: Expr): string | null {
    if (e.k !== 'name' || e.local === null) return null;
    const written = (this.ir.locals[e.local]?.type ?? '')
      .replace(/\b(?:const|volatile|constexpr|static|__restrict__|struct|class|typename)\b|[&*]/g, '')
      .trim();
    return /^[A-Za-z_][\w:]*\s*<[\s\S]*>$/.test(written) ? written : null;
  }

  /** A type as written, through the aliases the body declares (`AgentT` → `EvaluateSplitAgent`), without qualifiers. */
  private resolveType(type: string): string | null {
    let t = cleanType(type);
    for (let k = 0; t && k < 8; k++) {
      const aliased = this.ir.typeAliases?.get(t);
      if (!aliased) break;
      t = cleanType(aliased);
    }
    return t;
  }

  private isClass(type: string): boolean {
    const base = this.resolveType(type);
    return base !== null && this.session.program.recordsNamed(baseName(base)).length > 0;
  }

  private memberNames(type: string | null, count: number, designators: Array<string | null> | null): string[] {
    if (designators) return designators.map((d, i) => d ?? String(i));
    const t = type ? cleanType(type) : null;
    if (t && /^(?:u?(?:char|short|int|long|longlong)|float|double|half|bfloat16|dim)[1-4]$|^dim3$/.test(t))
      return ['x', 'y', 'z', 'w'].slice(0, count);
    if (t) {
      const records = this.session.program.recordsNamed(baseName(t));
      if (records.length) return records[0].record.fields.map((f) => f.name);
    }
    return [];
  }

  /** `member`: the member of the element read (`a[i].w`), recorded in place of the whole element. */
  private indexValue(
    e: Extract<Expr, { k: 'index' }>,
    state: State,
    stmtAt: Range,
    member: Extract<Expr, { k: 'field' }> | null = null,
  ): TV {
    const base = rootOf(e);
    const index = this.ev(e.index, state, stmtAt);
    // A thread's own array (or one passed to this function by its caller): what was stored in it.
    const own = this.privateStorage(base);
    if (own) {
      for (let x: Expr = e.object; x.k === 'index'; x = x.object) this.ev(x.index, state, stmtAt);
      const held = state.get(own);
      if (held) return held;
    }
    const parts = [index];
    for (let x: Expr = e.object; x.k === 'index'; x = x.object) parts.push(this.ev(x.index, state, stmtAt));
    parts.push(this.ev(base, state, stmtAt));
    if (this.recording)
      this.noteAccess(
        member ?? e,
        base,
        parts
          .slice(0, -1)
          .map((p) => p.sym)
          .reverse(),
        parts[parts.length - 1].sym,
        false,
        member?.field,
      );
    return this.load(`load${e.at[0]}`, exprText(e), parts, e.at);
  }

  private derefValue(
    e: Extract<Expr, { k: 'unary' }>,
    state: State,
    stmtAt: Range,
    member: Extract<Expr, { k: 'field' }> | null = null,
  ): TV {
    const own = this.privateStorage(e.arg);
    if (own) {
      const held = state.get(own);
      if (held) return held;
    }
    const p = this.ev(e.arg, state, stmtAt);
    if (this.recording) this.noteAccess(member ?? e, e.arg, [], p.sym, false, member?.field);
    return this.load(`deref${e.at[0]}`, exprText(e), [p], e.at);
  }

  /** The key of the thread-private storage an array expression names: a local array, or the pointee of a parameter pointing at one. */
  private privateStorage(base: Expr): string | null {
    if (base.k === 'name' && base.local !== null) {
      const local = this.ir.locals[base.local];
      if (!local) return null;
      if (local.dims && !local.shared) return `l${local.id}`;
      if (this.privatePointers.has(local.id)) return `l${local.id}.*`;
    }
    return null;
  }

  /**
   * Locals whose address is kept beyond a call's argument (`int64_t* p = reinterpret_cast<int64_t*>(&res)`):
   * a store through a pointer, or a call given one, may change them, fields and all.
   */
  private get escaped(): ReadonlySet<number> {
    if (this.escapedLocals) return this.escapedLocals;
    const out = new Set<number>();
    const scan = (e: Expr | null): void => {
      if (!e) return;
      forEachExpr(e, (x) => {
        if (x.k === 'call') {
          scan(x.callee);
          // `f(&x)` is the call's own business (read back by the call).
          for (const a of x.args) if (!(a.k === 'unary' && a.op === '&' && a.arg.k === 'name')) scan(a);
          return false;
        }
        if (x.k === 'unary' && x.op === '&' && x.arg.k === 'name' && x.arg.local !== null) {
          const local = this.ir.locals[x.arg.local];
          if (local && !local.dims && !local.shared && !local.reference) out.add(local.id);
        }
        return true;
      });
    };
    for (const b of this.ir.blocks) for (const st of b.stmts) scan(st.k === 'decl' ? st.init : st.expr);
    this.escapedLocals = out;
    return out;
  }
  private escapedLocals: Set<number> | null = null;

  /** An expression that may be a pointer to a local: a local pointer, or a cast of one. */
  private mayHoldAddress(e: Expr): boolean {
    let x = e;
    while (x.k === 'cast') x = x.arg;
    if (x.k !== 'name' || x.local === null) return false;
    const local = this.ir.locals[x.local];
    return !!local && (local.pointers ?? 0) > 0 && !local.dims;
  }

  /** Each escaped local (and each of its fields) now holds what was stored, or what a callee wrote: not known per lane. */
  private clobberEscaped(tag: string, stored: TV[], state: State, at: Range): void {
    for (const id of this.escaped) {
      const prefix = `l${id}`;
      for (const key of [...state.keys()]) {
        if (key !== prefix && !key.startsWith(`${prefix}.`)) continue;
        const old = state.get(key)!;
        state.set(
          key,
          stored.length > 0
            ? this.derived(`${tag}:${key}`, keyName(key, this.ir), [old, ...stored])
            : {
                sym: this.opaque(`${tag}:${key}`, 'laneVarying', keyName(key, this.ir)),
                origin: { file: this.file, at },
              },
        );
      }
    }
  }

  /** A load: as varying as its address (a uniform address gives every thread the same value). */
  private load(tag: string, what: string, address: TV[], at: Range): TV {
    const v = this.derived(tag, what, address);
    return isThreadDependent(v.sym) ? { sym: v.sym, origin: { file: this.file, at } } : v;
  }

  private addressOf(arg: Expr, state: State, stmtAt: Range): TV {
    if (arg.k === 'index') {
      const base = this.ev(rootOf(arg), state, stmtAt);
      let sym = base.sym;
      for (let x: Expr = arg; x.k === 'index'; x = x.object)
        sym = binary('+', sym, this.ev(x.index, state, stmtAt).sym);
      return { sym, origin: base.origin };
    }
    if (arg.k === 'name' && arg.local !== null)
      return { sym: this.freshFree(`addr${arg.local}`, `&${arg.name}`), origin: null };
    return this.derived(`addr${arg.at[0]}`, `&${exprText(arg)}`, [this.ev(arg, state, stmtAt)]);
  }

  private assign(e: Extract<Expr, { k: 'assign' }>, state: State, stmtAt: Range): TV {
    const value = this.ev(e.value, state, stmtAt);
    let v = value;
    if (e.op !== '=') {
      const old = this.ev(e.target, state, stmtAt);
      v = this.capped(`asg${e.at[0]}`, {
        sym: binary(e.op.slice(0, -1), old.sym, value.sym),
        origin: firstOrigin(value, old),
      });
    }
    this.store(e.target, v, state, stmtAt);
    if (e.op === '=' && e.target.k === 'name' && e.target.local !== null) {
      const local = this.ir.locals[e.target.local];
      if (local) this.notePointer(local, e.value, value.sym);
    }
    return v;
  }

  /** A store to an lvalue: a local (or its member) takes the value; a thread's own array joins it in; memory keeps nothing. */
  private store(target: Expr, v: TV, state: State, stmtAt: Range): void {
    const key = this.keyOf(target);
    if (key) {
      const m = /^l(\d+)$/.exec(key);
      if (m && this.memoryRefs.has(Number(m[1]))) return;
      this.assignKey(key, v, state, stmtAt);
      return;
    }
    // A member of a thread's own array's element (`low[i].x = v`) is stored as the element is: the
    // array holds one value for all its elements and their members.
    let element: Expr = target;
    while (element.k === 'field' && !element.arrow) element = element.object;
    const base =
      element.k === 'index' ? rootOf(element) : target.k === 'unary' && target.op === '*' ? target.arg : null;
    const own = base ? this.privateStorage(base) : null;
    if (own && element.k === 'index') {
      // An element stored at a varying index: the array's elements now differ between threads.
      let index: TV = { sym: ZERO, origin: null };
      for (let x: Expr = element; x.k === 'index'; x = x.object) {
        const i = this.ev(x.index, state, stmtAt);
        if (isThreadDependent(i.sym)) index = i;
      }
      const held = state.get(own);
      const parts = [v, ...(isThreadDependent(index.sym) ? [index] : [])];
      const stored = parts.length > 1 ? this.derived(`store${target.at[0]}`, keyName(own, this.ir), parts) : v;
      state.set(own, held ? this.joinValues(`store${target.at[0]}`, own, [held, stored]) : stored);
      return;
    }
    if (own) {
      state.set(own, v);
      return;
    }
    // A store through a pointer may land in a local whose address was kept.
    if (this.escaped.size > 0 && base && this.mayHoldAddress(base))
      this.clobberEscaped(`store${target.at[0]}`, [v], state, target.at);
    // Memory: the address is evaluated for what it reads.
    if (target.k === 'index') {
      const indices = [this.ev(target.index, state, stmtAt).sym];
      for (let x: Expr = target.object; x.k === 'index'; x = x.object)
        indices.push(this.ev(x.index, state, stmtAt).sym);
      if (this.recording) {
        const root = rootOf(target);
        this.noteAccess(target, root, indices.reverse(), this.ev(root, state, stmtAt).sym, true);
      }
    } else if (target.k === 'unary') {
      const p = this.ev(target.arg, state, stmtAt);
      if (this.recording && target.op === '*') this.noteAccess(target, target.arg, [], p.sym, true);
    } else if (target.k === 'field') this.elementOf(target, state, stmtAt, true);
  }

  /**
   * The object of a member access in memory (`a[i].w`, `(*p).w`, `p->w`): evaluated, and the
   * access recorded as one to the member's bytes of the element.
   */
  private elementOf(e: Extract<Expr, { k: 'field' }>, state: State, stmtAt: Range, store: boolean): TV {
    const { object } = e;
    if (object.k === 'index') {
      if (!store) return this.indexValue(object, state, stmtAt, e);
      const indices = [this.ev(object.index, state, stmtAt).sym];
      for (let x: Expr = object.object; x.k === 'index'; x = x.object)
        indices.push(this.ev(x.index, state, stmtAt).sym);
      const root = rootOf(object);
      const base = this.ev(root, state, stmtAt);
      if (this.recording && !this.privateStorage(root))
        this.noteAccess(e, root, indices.reverse(), base.sym, true, e.field);
      return base;
    }
    if (object.k === 'unary' && object.op === '*') {
      if (!store) return this.derefValue(object, state, stmtAt, e);
      const p = this.ev(object.arg, state, stmtAt);
      if (this.recording && !this.privateStorage(object.arg)) this.noteAccess(e, object.arg, [], p.sym, true, e.field);
      return p;
    }
    const p = this.ev(object, state, stmtAt);
    if (e.arrow && this.recording && !this.privateStorage(object))
      this.noteAccess(e, object, [], p.sym, store, e.field);
    return p;
  }

  /** The group an expression names; `state` is the point's, so a tile's size may be a local declared just before. */
  private groupOf(e: Expr, state?: State): GroupInfo | null {
    if (e.k === 'name' && e.local !== null) return this.groups.get(e.local) ?? null;
    if (e.k === 'call' && e.callee.k === 'name') {
      const kind = groupFactory(e.callee.name);
      if (!kind) return null;
      if (kind !== 'tile') return { kind, size: null };
      const t = e.callee.templateArgs?.[0];
      const sizeExpr = t && 'expr' in t ? t.expr : e.args[1];
      const size = sizeExpr ? this.evalDetached(sizeExpr, state) : null;
      if (size?.sym.op === 'const') return { kind, size: size.sym.value };
      // Fixed for the kernel but not computed here: the rank is still the linear index modulo it.
      if (size && !isThreadDependent(size.sym) && this.session.kindOf(size.sym) === 'uniform')
        return { kind, size: null, sizeSym: size.sym };
      return { kind, size: null };
    }
    return null;
  }

  // --- calls ---

  private callValue(e: Extract<Expr, { k: 'call' }>, state: State, stmtAt: Range): TV {
    const callee = e.callee;
    // Methods of cooperative groups.
    if (callee.k === 'field') {
      const group = this.groupOf(callee.object);
      if (group) return this.groupMethod(group, callee.field, e, state, stmtAt);
    }
    const name = callee.k === 'name' ? callee.name : null;
    if (name && callee.k === 'name' && callee.local === null) {
      const factory = groupFactory(name);
      if (factory) {
        for (const a of e.args) this.ev(a, state, stmtAt);
        return { sym: this.freshFree(`group${e.at[0]}`, name), origin: null };
      }
      if (baseName(name) === 'sync' && e.args[0] && this.groupOf(e.args[0])?.kind === 'block') {
        this.noteBarrier(e.at, 'block', null);
        this.barrier(state, e.at);
        return { sym: ZERO, origin: null };
      }
      if (baseName(name) === 'reduce' && e.args[0]) {
        const g = this.groupOf(e.args[0]);
        if (g)
          return this.collective(
            g,
            e.args.slice(1).map((a) => this.ev(a, state, stmtAt)),
            e,
          );
      }
    }
    const intrinsic = name && callee.k === 'name' && callee.local === null ? this.intrinsicIfUndefined(name) : null;
    const args = e.args.map((a) => this.ev(a, state, stmtAt));
    if (name && callee.k === 'name' && callee.local === null && baseName(name) === '__syncwarp')
      this.noteBarrier(e.at, 'warp', args[0]?.sym ?? null);
    // `__ldg(&a[i])` and the cache-hinted loads: a load at their argument.
    if (name && callee.k === 'name' && callee.local === null && /^__ld(?:g|cg|ca|cs|lu|cv)$/.test(baseName(name)))
      if (this.recording && e.args[0] && args[0]) this.noteAccess(e, e.args[0], [], args[0].sym, false);
    if (intrinsic) return this.intrinsicValue(intrinsic, e, args, state);

    // A lambda bound to a local, a function of the unit, a member through its object.
    const lambda = callee.k === 'name' && callee.local !== null ? this.lambdas.get(callee.local) : undefined;
    if (lambda) {
      const r = this.callLambda(lambda, e, args, state, stmtAt);
      if (r) return r;
    }
    const targets = this.targetsOf(callee, args.length, state, stmtAt);
    if (targets.length > 0) {
      const results = targets.map((t) => this.callFunction(t, e, args, state, stmtAt));
      const done = results.filter((r): r is TV => r !== null);
      if (done.length === results.length) return this.joinValues(`call${e.at[0]}`, `call${e.at[0]}`, done);
    }
    return this.unknownCall(e, name, args, state, stmtAt);
  }

  /** A CUDA built-in, unless the unit defines a function of that name itself. */
  private intrinsicIfUndefined(name: string): ReturnType<typeof intrinsicOf> {
    const defined = () => this.session.program.functionsNamed(baseName(name)).some((f) => f.fn.bodyAt !== null);
    const kind = intrinsicOf(name, false);
    if (!kind) return null;
    // CUDA's own names (`__syncthreads`, `atomicAdd`) are built in; a library's (`min`, `cub::LaneId`,
    // a vote by its name) are read from their bodies where the unit has them.
    if (name.replace(/^.*::/, '').startsWith('__') || kind === 'atomic') return kind;
    return defined() ? null : kind;
  }

  private intrinsicValue(
    kind: NonNullable<ReturnType<typeof intrinsicOf>>,
    e: Extract<Expr, { k: 'call' }>,
    args: TV[],
    state: State,
  ): TV {
    const what = exprText(e);
    switch (kind) {
      case 'block-barrier':
        this.noteBarrier(e.at, 'block', null);
        this.barrier(state, e.at);
        // `__syncthreads_count(p)` and the like: one value for the block.
        return { sym: this.freshFree(`barrier${e.at[0]}`, what), origin: null };
      case 'warp-vote':
        return args.some((a) => isThreadDependent(a.sym))
          ? {
              sym: this.opaque(`vote${e.at[0]}`, 'warpUniform', what),
              origin: firstOrigin(...args) ?? { file: this.file, at: e.at },
            }
          : { sym: this.freshFree(`vote${e.at[0]}`, what), origin: null };
      case 'warp-mask':
        return { sym: this.opaque(`mask${e.at[0]}`, 'warpUniform', what), origin: { file: this.file, at: e.at } };
      case 'shuffle-broadcast': {
        const sync = /_sync$/.test(calleeName(e));
        const value = args[sync ? 1 : 0];
        const src = args[sync ? 2 : 1];
        const width = args[sync ? 3 : 2];
        const w = width ? (width.sym.op === 'const' ? width.sym.value : null) : 32;
        return this.broadcast(value, src, w, e);
      }
      case 'shuffle-relative': {
        const value = args[/_sync$/.test(calleeName(e)) ? 1 : 0];
        if (!value || !isThreadDependent(value.sym)) return value ?? { sym: ZERO, origin: null };
        return { sym: this.opaque(`shfl${e.at[0]}`, 'laneVarying', what), origin: value.origin };
      }
      case 'match-any': {
        const value = args[1];
        return value && isThreadDependent(value.sym)
          ? { sym: this.opaque(`match${e.at[0]}`, 'laneVarying', what), origin: value.origin }
          : { sym: this.freshFree(`match${e.at[0]}`, what), origin: null };
      }
      case 'atomic':
        return { sym: this.opaque(`atomic${e.at[0]}`, 'laneVarying', what), origin: { file: this.file, at: e.at } };
      case 'pass-through':
        return args[0] ?? { sym: ZERO, origin: null };
      case 'min':
      case 'max':
        if (args.length === 2) return { sym: binary(kind, args[0].sym, args[1].sym), origin: firstOrigin(...args) };
        return this.derived(`call${e.at[0]}`, what, args);
      case 'lane-function': {
        const operator = calleeName(e).replace(/^.*::/, '');
        if (args.length !== 1 || !isLaneFunction(operator)) return this.derived(`call${e.at[0]}`, what, args);
        const [a] = args;
        return a.sym.op === 'const'
          ? { sym: constant(applyUnary(operator, a.sym.value)), origin: null }
          : { sym: { op: 'unary', operator, arg: a.sym }, origin: a.origin };
      }
      case 'lane-id':
        return { sym: { op: 'laneId' }, origin: { file: this.file, at: e.at } };
      case 'warp-id':
        return { sym: binary('/', linearIndex(), constant(32)), origin: { file: this.file, at: e.at } };
      case 'linear-tid':
        return { sym: linearIndex(), origin: { file: this.file, at: e.at } };
    }
  }

  /** Lane `src`'s value for the warp (each `width`-lane segment): warp-uniform when `src` is and the segment is the warp. */
  private broadcast(value: TV | undefined, src: TV | undefined, width: number | null, e: Expr): TV {
    if (!value || !isThreadDependent(value.sym)) return value ?? { sym: ZERO, origin: null };
    const srcKind = src ? this.session.kindOf(src.sym) : 'uniform';
    if ((srcKind === 'uniform' || srcKind === 'warpUniform') && width !== null && width >= 32)
      return { sym: this.opaque(`bcast${e.at[0]}`, 'warpUniform', exprText(e)), origin: value.origin };
    return { sym: this.opaque(`bcast${e.at[0]}`, 'laneVarying', exprText(e)), origin: value.origin };
  }

  /** A barrier: every thread of the block reads one value from a `__shared__` variable after it. */
  private barrier(state: State, at: Range): void {
    for (const local of this.ir.locals)
      if (local.shared && state.has(`l${local.id}`))
        state.set(`l${local.id}`, { sym: this.freshFree(`sync${at[0]}:${local.id}`, local.name), origin: null });
  }

  private groupMethod(
    group: GroupInfo,
    method: string,
    e: Extract<Expr, { k: 'call' }>,
    state: State,
    stmtAt: Range,
  ): TV {
    const args = e.args.map((a) => this.ev(a, state, stmtAt));
    const at = { file: this.file, at: e.at };
    const what = exprText(e);
    switch (method) {
      case 'thread_rank':
        if (group.kind === 'block') return { sym: linearIndex(), origin: at };
        if (group.kind === 'tile' && group.size)
          return { sym: binary('%', linearIndex(), constant(group.size)), origin: at };
        if (group.kind === 'tile' && group.sizeSym)
          return { sym: binary('%', linearIndex(), group.sizeSym), origin: at };
        if (group.kind === 'thread') return { sym: ZERO, origin: null };
        if (group.kind === 'grid')
          return { sym: binary('+', binary('*', flatBlockIndex(), blockSize()), linearIndex()), origin: at };
        return { sym: this.opaque(`rank${e.at[0]}`, 'laneVarying', what), origin: at };
      case 'meta_group_rank':
        if (group.kind === 'tile' && group.size)
          return { sym: binary('/', linearIndex(), constant(group.size)), origin: at };
        if (group.kind === 'tile' && group.sizeSym)
          return { sym: binary('/', linearIndex(), group.sizeSym), origin: at };
        return { sym: this.opaque(`meta${e.at[0]}`, 'warpUniform', what), origin: at };
      case 'size':
      case 'num_threads':
        if (group.kind === 'tile' && group.size) return { sym: constant(group.size), origin: null };
        if (group.kind === 'tile' && group.sizeSym) return { sym: group.sizeSym, origin: null };
        if (group.kind === 'block') return { sym: blockSize(), origin: null };
        if (group.kind === 'coalesced') return { sym: this.opaque(`size${e.at[0]}`, 'warpUniform', what), origin: at };
        return { sym: this.freshFree(`size${e.at[0]}`, what, true), origin: null };
      case 'meta_group_size':
        return { sym: this.freshFree(`msize${e.at[0]}`, what, true), origin: null };
      case 'sync':
        if (group.kind === 'block') this.noteBarrier(e.at, 'block', null);
        if (group.kind === 'block') this.barrier(state, e.at);
        return { sym: ZERO, origin: null };
      case 'shfl':
        return this.broadcast(args[0], args[1], group.kind === 'tile' ? group.size : null, e);
      case 'shfl_down':
      case 'shfl_up':
      case 'shfl_xor':
        return args[0] && isThreadDependent(args[0].sym)
          ? { sym: this.opaque(`shfl${e.at[0]}`, 'laneVarying', what), origin: args[0].origin }
          : (args[0] ?? { sym: ZERO, origin: null });
      case 'any':
      case 'all':
      case 'ballot':
      case 'match_all':
        return this.collective(group, args, e);
      default:
        return this.derived(`gm${e.at[0]}`, what, args);
    }
  }

  /** A group-wide vote or reduction: the same in the group's lanes (warp-uniform when the group is whole warps). */
  private collective(group: GroupInfo, args: TV[], e: Expr): TV {
    if (!args.some((a) => isThreadDependent(a.sym)))
      return { sym: this.freshFree(`coll${e.at[0]}`, exprText(e)), origin: null };
    const warpWide = group.kind === 'tile' && group.size !== null && group.size % 32 === 0;
    const blockWide = group.kind === 'block' || group.kind === 'grid';
    if (blockWide) return { sym: this.freshFree(`coll${e.at[0]}`, exprText(e)), origin: null };
    return {
      sym: this.opaque(`coll${e.at[0]}`, warpWide ? 'warpUniform' : 'laneVarying', exprText(e)),
      origin: firstOrigin(...args),
    };
  }

  /** The functions a call may run: the unit's definitions of the name (or the object's class's member). */
  private targetsOf(
    callee: Expr,
    argc: number,
    state: State,
    stmtAt: Range,
  ): Array<{ pf: ProgramFunction; bindings: Map<string, TemplateBinding>; object: Expr | null }> {
    const { program } = this.session;
    const scope = this.inv.scope;
    if (this.inv.depth >= MAX_UNIFORMITY_CALL_DEPTH || this.session.exhausted) return [];
    if (callee.k === 'field') {
      const type =
        this.typeOf(callee.object) ?? (callee.object.k === 'this' ? (this.inv.fn?.fn.className ?? null) : null);
      const method = callee.field;
      let found = program.functionsNamed(method).filter((f) => f.fn.bodyAt && f.fn.className !== null);
      if (type) found = found.filter((f) => f.fn.className === baseName(type));
      else if (found.length > MAX_CANDIDATES) return [];
      void state;
      void stmtAt;
      return found.slice(0, MAX_CANDIDATES).map((pf) => ({ pf, bindings: new Map(), object: callee.object }));
    }
    if (callee.k !== 'name' || callee.local !== null) return [];
    // A member function called from another member of its class, without `this->`.
    if (this.inv.fn?.fn.className && !callee.name.includes('::')) {
      const own = program
        .functionsNamed(callee.name)
        .filter((f) => f.fn.bodyAt && f.fn.className === this.inv.fn!.fn.className);
      if (own.length > 0)
        return own
          .slice(0, MAX_CANDIDATES)
          .map((pf) => ({ pf, bindings: new Map(), object: { k: 'this', at: callee.at } }));
    }
    const resolved = program
      .resolver(scope, MAX_UNIFORMITY_CALL_DEPTH)
      .name(callee.name, callee.templateArgs, (x) => program.evaluateIn(x, scope));
    if (!resolved || resolved.k !== 'fn') return [];
    const out: Array<{ pf: ProgramFunction; bindings: Map<string, TemplateBinding>; object: Expr | null }> = [];
    for (const ref of resolved.refs) {
      const candidates = program.resolveCallee(ref as FnRef, argc, scope).filter((c) => c.fn.bodyAt && !c.fn.global);
      if (candidates.length > MAX_CANDIDATES) return [];
      for (const pf of candidates)
        out.push({ pf, bindings: program.bindTemplate(pf, ref as FnRef, scope), object: null });
    }
    return out;
  }

  /** A callee's branches, barriers and accesses are the caller's, under the caller's conditions here. */
  private adoptCallee(analysis: FunctionAnalysis, at: Range): void {
    if (!this.recording) return;
    const sites = analysis.record();
    if (sites.length > 0) {
      const outer = this.guardsOf(this.currentBlock, false);
      for (const s of sites) this.addSite({ ...s, guards: [...outer, ...s.guards].slice(-MAX_GUARDS) });
    }
    this.adoptEvents(analysis.recordedEvents(), at);
  }

  private callFunction(
    target: { pf: ProgramFunction; bindings: Map<string, TemplateBinding>; object: Expr | null },
    e: Extract<Expr, { k: 'call' }>,
    args: TV[],
    state: State,
    stmtAt: Range,
    objectKeyGiven?: string,
  ): TV | null {
    const { pf, bindings, object } = target;
    const ir = this.session.program.functionIR(pf);
    if (!ir) return null;
    const id = functionKey(pf);
    if (this.session.stack.includes(id)) return null;
    // The object's members, as the callee's `this`.
    const objectKey = objectKeyGiven ?? (object ? (object.k === 'this' ? 'this' : this.keyOf(object)) : null);
    let self: Map<string, TV> | null = null;
    if (object) {
      self = new Map();
      const prefix = objectKey ? `${objectKey}.` : null;
      if (prefix)
        for (const [k, v] of state)
          if (k.startsWith(prefix) && !k.slice(prefix.length).includes('.')) self.set(k.slice(prefix.length), v);
      if (objectKey === 'this' && this.inv.self) for (const [k, v] of this.inv.self) if (!self.has(k)) self.set(k, v);
      const whole = object.k === 'this' || objectKeyGiven ? null : this.ev(object, state, stmtAt);
      if (whole && isThreadDependent(whole.sym)) {
        // A per-thread object whose members are not known apart: each as varying as the object.
        for (const f of this.session.program.recordsNamed(pf.fn.className ?? '')[0]?.record.fields ?? [])
          if (!self.has(f.name)) self.set(f.name, this.derived(`obj${e.at[0]}:${f.name}`, f.name, [whole]));
      }
    }
    // Uniform values are given to the callee as its own unknowns (one per parameter, fixed or not):
    // what it does with the thread indices does not depend on which uniform value it gets, and one
    // analysis serves every call that passes the same constants and thread-dependent values.
    const abstraction = new Abstraction(this.session, id);
    const params = ir.params.map((_pid, k) => abstraction.value(`p${k}`, args[k]));
    const selfGiven = self ? new Map([...self].map(([k, v]) => [k, abstraction.value(`this.${k}`, v)!])) : null;
    const passed: Array<[number, TV | undefined]> = [];
    e.args.forEach((a, k) => {
      const pid = ir.params[k];
      if (pid === undefined) return;
      const own = this.privateStorage(a) ?? (a.k === 'unary' && a.op === '&' ? this.keyOf(a.arg) : null);
      if (own) passed.push([pid, abstraction.value(`*${k}`, state.get(own))]);
    });
    const pointers = e.args.map((a, k) => this.pointerInfoOf(a, args[k]?.sym ?? null));
    const key = [
      id,
      [...bindings].map(([n, b]) => `${n}=${isType(b) ? b.type : JSON.stringify(b)}`).join(','),
      abstraction.key,
      passed.map(([pid]) => pid).join(','),
      pointers.map((p) => (p ? `${p.space}${p.elementBytes}${p.unit ? `/${p.unit}` : ''}` : '')).join(','),
    ].join('\u0000');
    let analysis = this.session.invocations.get(key);
    if (analysis === undefined) {
      this.session.stack.push(id);
      try {
        analysis = new FunctionAnalysis(this.session, {
          ir,
          scope: { file: pf.file, scope: pf.fn.scope, bindings },
          fn: pf,
          params,
          self: selfGiven,
          captures: null,
          depth: this.inv.depth + 1,
          key,
          pointers,
        });
        // Arguments that pass the caller's own storage: the callee reads and writes it as the caller's.
        for (const [pid, held] of passed) analysis.passPrivate(pid, held);
        analysis.run();
      } finally {
        this.session.stack.pop();
      }
      this.session.invocations.set(key, analysis);
    }
    if (!analysis) return null;
    this.adoptCallee(analysis, e.at);
    this.copyBack(analysis, ir, e, object, objectKey, state, stmtAt, abstraction);
    // The callee's result in the caller's values: a helper called on its own outputs again and again
    // (double-single arithmetic) would otherwise grow the expression by a factor at every call.
    const result = this.capped(`ret${e.at[0]}`, abstraction.back(analysis.result));
    // A result made of a name the unit does not declare (a macro defined when the kernel is
    // compiled, `return SORT_KEY;`) may be any expression of the arguments: as varying as they are.
    if (
      symFacts(result.sym).frees.some((f) => this.session.undeclared.has(f)) &&
      args.some((a) => isThreadDependent(a.sym))
    )
      return this.derived(`undeclared${e.at[0]}`, exprText(e), args);
    return result;
  }

  /** A pointer parameter pointing at the caller's own array or variable: its pointee starts as what that holds. */
  passPrivate(param: number, held: TV | undefined): void {
    this.privatePointers.add(param);
    this.passed.set(param, held);
  }

  private readonly passed = new Map<number, TV | undefined>();

  // --- memory and barrier events (memory-events.ts) ---

  private readonly eventTable = new Map<string, MemoryEvent>();
  /** What each pointer local points at (null: more than one thing, or an element size the value does not count in). */
  private readonly pointerInfos = new Map<number, PointerInfo | null>();
  private pointersReady = false;

  /** Its barriers and accesses and those of what it calls (after `record`). */
  recordedEvents(): MemoryEvent[] {
    this.record();
    return [...this.eventTable.values()];
  }

  /** Blocks of this function that meet a block barrier (in them, or in a function called there). */
  private readonly barrierBlocks = new Set<number>();
  /** Blocks of this function that read shared memory (in them, or in a function called there). */
  private readonly sharedReadBlocks = new Set<number>();
  /** Each block barrier of this walk (its own and its callees'), by its event key, and the block it is met in. */
  private readonly blockBarriers = new Map<string, number>();

  private addEvent(ev: MemoryEvent): string {
    const kind = ev.event === 'access' ? `${ev.store ? 'st' : 'ld'}` : `bar`;
    const key = `${kind}:${ev.file}:${ev.at[0]}:${ev.at[1]}:${ev.calls.map((c) => `${c.file}@${c.at[0]}`).join('>')}`;
    this.eventTable.set(key, ev);
    if (ev.event === 'access' && ev.space === 'shared' && !ev.store) this.sharedReadBlocks.add(this.currentBlock);
    return key;
  }

  /** A block barrier met in the current block: its departures are known once every block is walked. */
  private noteBlockBarrier(key: string): void {
    this.barrierBlocks.add(this.currentBlock);
    this.blockBarriers.set(key, this.currentBlock);
  }

  /**
   * After the reporting walk: each block barrier's guards whose other threads leave the kernel (in a
   * kernel), and those whose other threads meet a barrier of their own (in any function: a callee's
   * are kept as the caller adopts its events).
   */
  private noteDepartures(): void {
    const kernel = this.inv.depth === 0 && this.inv.fn?.fn.global === true;
    for (const [key, block] of this.blockBarriers) {
      const ev = this.eventTable.get(key);
      if (ev?.event !== 'barrier') continue;
      const departed = kernel ? this.departedGuards(block) : [];
      const paired = [...(ev.paired ?? []), ...this.pairedGuards(block)];
      if (departed.length || paired.length)
        this.eventTable.set(key, {
          ...ev,
          ...(departed.length ? { departed } : {}),
          ...(paired.length ? { paired } : {}),
        });
    }
  }

  /** A callee's events, under the conditions in force at the call here. */
  private adoptEvents(events: MemoryEvent[], at: Range): void {
    if (events.length === 0) return;
    const outer = this.eventGuards();
    const place = { file: this.file, at };
    const repeats = this.inLoop();
    for (const ev of events) {
      const key = this.addEvent({
        ...ev,
        guards: [...outer, ...ev.guards],
        calls: [place, ...ev.calls],
        ...(ev.event === 'access'
          ? { repeats: ev.repeats || repeats }
          : {
              guardSources: [...this.sourcesOf(outer), ...(ev.guardSources ?? ev.guards.map(() => null))],
            }),
      });
      if (ev.event === 'barrier' && ev.scope === 'block') this.noteBlockBarrier(key);
    }
  }

  private sourcesOf(guards: readonly Sym[]): Array<GuardSource | null> {
    return guards.map((g) => this.guardSources.get(g) ?? null);
  }

  private noteBarrier(at: Range, scope: BarrierEvent['scope'], mask: Sym | null): void {
    if (!this.recording) return;
    const guards = this.eventGuards();
    const exited = scope === 'warp' ? this.exitedGuards(this.currentBlock) : [];
    const key = this.addEvent({
      event: 'barrier',
      scope,
      mask,
      file: this.file,
      at,
      guards,
      guardSources: this.sourcesOf(guards),
      ...(exited.length ? { exited } : {}),
      calls: [],
    });
    if (scope === 'block') this.noteBlockBarrier(key);
  }

  /**
   * The conditions of `b`'s controlling branches (in a kernel) whose other threads meet no block
   * barrier and read no shared memory before the kernel ends (`if (c) return;`, a loop whose
   * leavers have nothing after it but the end): those threads leave without waiting on the others'
   * writes, and a barrier that only exited threads hold up is released (PTX ISA, `exit`). Threads
   * that go on to read shared memory without the barrier race with its writers: not departed. Read
   * after the walk: the blocks that meet a barrier or read shared memory are all known then.
   */
  private departedGuards(b: number): Sym[] {
    return this.guardsWhoseOtherSide(
      b,
      (other) => !this.reachable(other).some((x) => this.barrierBlocks.has(x) || this.sharedReadBlocks.has(x)),
    );
  }

  /**
   * The conditions of `b`'s controlling branches whose other threads may meet a block barrier of
   * their own before the branch's arms join (`if (c) { ...; __syncthreads(); } else if (np > 1) {
   * __syncthreads(); }`), each with the condition under which a thread on that side meets one:
   * branches on the way are kept as `?:` of their conditions, so a thread's own values decide.
   */
  private pairedGuards(b: number): Array<{ guard: Sym; meets: Sym }> {
    const out: Array<{ guard: Sym; meets: Sym }> = [];
    this.guardsWhoseOtherSide(b, (other, branch, guard) => {
      const meets = this.meetsBarrier(other, this.info.ipdom[branch], new Set(), 0);
      if (meets.op === 'const' && meets.value === 0) return false;
      out.push({ guard, meets });
      return true;
    });
    return out;
  }

  /** Whether a thread at block `x` meets a block barrier before `join`, as a condition (0: never). */
  private meetsBarrier(x: number, join: number, path: Set<number>, branches: number): Sym {
    if (x < 0 || x === join || x === this.ir.exit || path.has(x) || branches > MAX_PAIRING_BRANCHES) return constant(0);
    if (this.barrierBlocks.has(x)) return constant(1);
    const exit = this.ir.blocks[x].exit;
    const inner = new Set(path).add(x);
    if (exit.k === 'goto') return this.meetsBarrier(exit.to, join, inner, branches);
    if (exit.k !== 'branch') return constant(0);
    const c = this.conds[x]?.sym;
    if (!c) return constant(0);
    if (c.op === 'const') return this.meetsBarrier(c.value !== 0 ? exit.then : exit.else, join, inner, branches);
    // A loop is left in the end: what follows it is met (a barrier in its body may not be).
    if (this.info.loops.has(x)) return this.meetsBarrier(this.info.ipdom[x], join, inner, branches);
    const then = this.meetsBarrier(exit.then, join, inner, branches + 1);
    const other = this.meetsBarrier(exit.else, join, inner, branches + 1);
    if (then.op === 'const' && other.op === 'const' && then.value === other.value) return then;
    return { op: 'select', cond: c, then, else: other };
  }

  private reachable(from: number): number[] {
    const seen = new Set([from]);
    const stack = [from];
    while (stack.length) for (const s of this.info.succs[stack.pop()!]) if (!seen.has(s) && seen.add(s)) stack.push(s);
    return [...seen];
  }

  /**
   * The conditions of the branches `b` depends on, and those they depend on (as guardChain follows
   * them), as `b`'s threads have them, where the threads that took the other edge meet `leaves`.
   */
  private guardsWhoseOtherSide(b: number, leaves: (other: number, branch: number, guard: Sym) => boolean): Sym[] {
    const controls: Array<{ branch: number; via: number }> = [];
    const seen = new Set([b]);
    for (let k = -1; k < controls.length; k++)
      for (const c of this.info.controls[k < 0 ? b : controls[k].branch])
        if (!seen.has(c.branch) && seen.add(c.branch)) controls.push(c);
    const out: Sym[] = [];
    for (const { branch, via } of controls) {
      const exit = this.ir.blocks[branch].exit;
      const c = this.conds[branch];
      if (!c || exit.k !== 'branch' || exit.then === exit.else) continue;
      const guard = via === exit.then ? c.sym : negation(c.sym);
      if (leaves(via === exit.then ? exit.else : exit.then, branch, guard)) out.push(guard);
    }
    return out;
  }

  /**
   * The conditions of `b`'s own controlling branches (in a kernel, not a callee) whose other lanes
   * never meet `b`'s lanes again before the kernel ends: those lanes have exited (`if (c) return;`).
   */
  private exitedGuards(b: number): Sym[] {
    if (this.inv.depth !== 0 || this.inv.fn?.fn.global !== true) return [];
    const after = new Set(this.reachable(b));
    return this.guardsWhoseOtherSide(
      b,
      (other) => !this.reachable(other).some((x) => x !== this.ir.exit && after.has(x)),
    );
  }

  /** The pointer parameters' targets: a kernel's point at global memory; a callee's are what the caller passed. */
  private setUpPointers(): void {
    if (this.pointersReady) return;
    this.pointersReady = true;
    const kernel = this.inv.depth === 0 && this.inv.params === null && this.inv.fn?.fn.global === true;
    this.ir.params.forEach((pid, k) => {
      const local = this.ir.locals[pid];
      if (!local || local.reference) return;
      const pointee = local.pointers === 1 ? cleanPointee(local.type) : null;
      if (kernel) {
        // An element of unknown size (a template's `T` with no instance in view) still says where it
        // points: a cast to a known type (`reinterpret_cast<int4*>(p)`) reads it.
        const bytes = pointee ? this.bytesOf(pointee) : null;
        if (pointee) this.pointerInfos.set(pid, { space: 'global', elementType: pointee, elementBytes: bytes ?? 0 });
        return;
      }
      const given = this.inv.pointers?.[k];
      if (!given) return;
      const bytes = pointee ? this.bytesOf(pointee) : null;
      // A parameter of another element type than the caller's pointer counts in other units.
      if (pointee && bytes === given.elementBytes && !given.unit)
        this.pointerInfos.set(pid, { ...given, elementType: pointee, elementBytes: bytes });
    });
  }

  /**
   * `sizeof(T)` in this instance: the type's size through the template arguments (`T = __half` makes
   * `16 / sizeof(T)` a constant 8), or a local's declared type; null for arrays and unknown types.
   */
  private sizeofOperand(e: Extract<Expr, { k: 'sizeof' }>): number | null {
    let type = e.type;
    if (type === null && e.arg?.k === 'name') {
      if (e.arg.local !== null) {
        const local = this.ir.locals[e.arg.local];
        if (!local || local.dims) return null;
        type = local.type + '*'.repeat(local.pointers ?? 0);
      } else type = e.arg.name;
    }
    if (type === null) return null;
    if (/\*\s*$/.test(type.replace(/\b(?:const|volatile)\b/g, '').trim())) return 8;
    return this.bytesOf(type);
  }

  /**
   * `type` with the body's aliases and class templates' member types read through
   * (`typename Qk_vec<T, Dh>::Type` of `T = float, Dh = 128` is `float4`), the instance's arguments
   * put in; still a member type (`…>::Type`) where the program does not say which.
   */
  private expandType(type: string): string {
    let t = type;
    for (let k = 0; k < 8; k++) {
      const bare = t
        .replace(/\b(?:const|volatile|typename)\b/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
      const aliased =
        this.ir.typeAliases?.get(bare) ??
        (/^(?:::)?[A-Za-z_][\w:]*$/.test(bare) ? this.session.program.typeAlias(bare, this.inv.scope.scope) : null);
      if (aliased) {
        t = aliased;
        continue;
      }
      const m = /^((?:::)?[A-Za-z_][\w:]*)\s*(<.*>)\s*::\s*([A-Za-z_]\w*)$/.exec(bare);
      if (!m) return t;
      const args = templateArgumentsOf(m[2]).map((a) => this.argumentText(a));
      const member = this.session.program.memberType(baseName(m[1]), args, m[3]);
      if (!member) return t;
      t = member;
    }
    return t;
  }

  /** A template argument as this instance reads it: a bound parameter replaced by its type or value. */
  private argumentText(arg: string): string {
    const bound = this.inv.scope.bindings.get(arg);
    if (!bound) return arg;
    if (isType(bound)) return bound.type;
    return bound.k === 'num' && bound.values.length === 1 ? String(bound.values[0]) : arg;
  }

  /** A type's size, through the instance's template arguments and the body's aliases. */
  private bytesOf(written: string): number | null {
    const type = this.expandType(written);
    // A member of a class template the program does not resolve: not the class's own size.
    if (/>\s*::/.test(type)) return null;
    const direct = elementBytesOf(type);
    if (direct) return direct;
    const t = this.resolveType(type);
    if (!t) return null;
    const bound = this.inv.scope.bindings.get(t);
    if (bound && isType(bound)) return elementBytesOf(bound.type) ?? this.layoutOf(bound.type)?.bytes ?? null;
    return elementBytesOf(t) ?? this.layoutOf(type)?.bytes ?? null;
  }

  /**
   * A type's layout: a built-in or CUDA vector type's, or a record's whose fields all have known
   * layouts (one record of that name in the program, with no base class or alignment attribute),
   * its template parameters read as the arguments written (`Param<T1, T2>`).
   */
  private layoutOf(written: string, depth = 0): TypeLayout | null {
    if (depth > 4) return null;
    const type = this.expandType(written);
    if (/>\s*::/.test(type)) return null;
    const builtin = builtinLayout(type);
    if (builtin) return builtin;
    const t = this.resolveType(type);
    if (!t) return null;
    const bound = this.inv.scope.bindings.get(t);
    if (bound && isType(bound)) return bound.type === type ? null : this.layoutOf(bound.type, depth + 1);
    const records = this.session.program.recordsNamed(baseName(t));
    if (records.length !== 1) return null;
    const { record } = records[0];
    if (!record.plainLayout || record.fields.some((f) => !f.plain)) return null;
    const args = templateArgumentsOf(type);
    const params = record.templateParams ?? [];
    if (params.length !== args.length) return null;
    const fields: Array<{ name: string; layout: TypeLayout }> = [];
    for (const f of record.fields) {
      if (f.pointers) {
        fields.push({ name: f.name, layout: { bytes: 8, align: 8, members: null } });
        continue;
      }
      const layout = this.layoutOf(substituteParams(f.type, params, args), depth + 1);
      if (!layout) return null;
      fields.push({ name: f.name, layout });
    }
    return recordLayout(fields);
  }

  /**
   * The declared type of a member (`param.qkv_src`, `p->q`) and its pointer depth, the record's
   * template parameters read as the object's arguments; null where the object's type or the
   * record is not known in the program.
   */
  private memberDeclaration(e: Extract<Expr, { k: 'field' }>, depth = 0): { type: string; pointers: number } | null {
    if (depth > 4) return null;
    const object = e.object;
    let owner: { type: string; pointers: number } | null = null;
    if (object.k === 'name' && object.local !== null) {
      const local = this.ir.locals[object.local];
      if (!local || local.dims) return null;
      owner = { type: local.type, pointers: local.pointers ?? 0 };
    } else if (object.k === 'field') owner = this.memberDeclaration(object, depth + 1);
    if (!owner || owner.pointers !== (e.arrow ? 1 : 0)) return null;
    const t = this.resolveType(owner.type);
    if (!t) return null;
    const records = this.session.program.recordsNamed(baseName(t));
    if (records.length !== 1) return null;
    const { record } = records[0];
    const field = record.fields.find((f) => f.name === e.field);
    if (!field?.plain) return null;
    const args = templateArgumentsOf(owner.type);
    const params = record.templateParams ?? [];
    if (params.length !== args.length) return null;
    return { type: substituteParams(field.type, params, args), pointers: field.pointers ?? 0 };
  }

  /** A member chain starts at a parameter of the kernel (its pointers point at global memory). */
  private heldByKernel(e: Expr): boolean {
    const kernel = this.inv.depth === 0 && this.inv.params === null && this.inv.fn?.fn.global === true;
    let x = e;
    while (x.k === 'field') x = x.object;
    return kernel && x.k === 'name' && x.local !== null && this.ir.params.includes(x.local);
  }

  /**
   * What a pointer expression points at, read from how it is written: a pointer local or
   * parameter, a `__shared__` array, a cast, `p + i`, `&a[i]`. `moved`: its value counts in
   * other units than its element (a cast to another size of a value that varies by thread).
   */
  private pointerInfoOf(e: Expr, value: Sym | null = null): PointerInfo | null {
    this.setUpPointers();
    switch (e.k) {
      case 'name': {
        if (e.local === null) return null;
        const local = this.ir.locals[e.local];
        if (!local) return null;
        if (local.shared && local.dims && local.dims.length === 1) {
          const bytes = this.bytesOf(local.type);
          return bytes ? { space: 'shared', elementType: local.type, elementBytes: bytes } : null;
        }
        return this.pointerInfos.get(local.id) ?? null;
      }
      case 'cast': {
        const inner = this.pointerInfoOf(e.arg);
        const pointee = pointeeType(e.type);
        const bytes = pointee ? this.bytesOf(pointee) : null;
        if (!inner || !pointee || !bytes) return null;
        if (bytes !== inner.elementBytes && (value === null || isThreadDependent(value))) {
          // The value still counts the narrower element (`reinterpret_cast<float4*>(&a[4 * i])`): an
          // access through it is read in those units, a whole number of them wide.
          const unit = inner.unit ?? inner.elementBytes;
          if (value === null || unit <= 0 || bytes % unit !== 0) return null;
          return { space: inner.space, elementType: pointee, elementBytes: bytes, unit };
        }
        return { space: inner.space, elementType: pointee, elementBytes: bytes };
      }
      case 'binary': {
        // Arithmetic on a pointer that counts another element's units moves it by the wrong amount.
        const info = e.op === '+' || e.op === '-' ? this.pointerInfoOf(e.left, value) : null;
        return info?.unit ? null : info;
      }
      case 'field': {
        // A pointer a kernel parameter holds (`param.src`, `p->dst`): global memory, its element as declared.
        if (!this.heldByKernel(e)) return null;
        const m = this.memberDeclaration(e);
        const bytes = m && m.pointers === 1 ? this.bytesOf(m.type) : null;
        return m && bytes ? { space: 'global', elementType: m.type, elementBytes: bytes } : null;
      }
      case 'unary':
        if (e.op === '&' && e.arg.k === 'index' && e.arg.object.k === 'name') {
          const base = e.arg.object;
          const local = base.local !== null ? this.ir.locals[base.local] : null;
          if (local?.shared && local.dims?.length === 1) return this.pointerInfoOf(base, value);
          if (local && !local.dims) return this.pointerInfoOf(base, value);
        }
        return null;
      default:
        return null;
    }
  }

  /** A pointer local set from `init`: what it points at (flow-insensitive: two different targets make it unknown). */
  private notePointer(local: Local, init: Expr, value: Sym): void {
    const auto = /^auto$/.test(local.type.replace(/\b(?:const|__restrict__)\b/g, '').trim());
    if (local.dims || local.shared || (local.pointers !== 1 && !(auto && !local.pointers))) return;
    const info = this.pointerInfoOf(init, value);
    const pointee = auto ? null : cleanPointee(local.type);
    const bytes = pointee ? this.bytesOf(pointee) : info?.elementBytes;
    // A pointer kept in a local counting another element's units (a cast's) would be moved wrongly by
    // its own arithmetic: not followed.
    const mine: PointerInfo | null =
      info && !info.unit && bytes === info.elementBytes ? { ...info, elementType: pointee ?? info.elementType } : null;
    if (!this.pointerInfos.has(local.id)) this.pointerInfos.set(local.id, mine);
    else {
      const had = this.pointerInfos.get(local.id);
      if (!had || !mine || had.space !== mine.space || had.elementBytes !== mine.elementBytes)
        this.pointerInfos.set(local.id, null);
    }
  }

  /**
   * A load or store through `[]` or `*`: its element offset per thread, when it is global or
   * shared memory whose element the pointer's type gives. `indices`: the index values, outermost
   * first; `base`: the pointer's value (ignored for an array).
   */
  private noteAccess(e: Expr, root: Expr, indices: Sym[], base: Sym, store: boolean, member?: string): void {
    if (!this.recording) return;
    this.setUpPointers();
    let info: PointerInfo | null;
    let offset: Sym;
    let dims: number[] | undefined;
    const local = root.k === 'name' && root.local !== null ? this.ir.locals[root.local] : undefined;
    if (local?.dims) {
      if (!local.shared || indices.length !== local.dims.length) return;
      const bytes = this.bytesOf(local.type);
      if (!bytes) return;
      const sizes = local.dims.map((d, i) => {
        if (i === 0) return 0;
        const v = this.evalDetached(d);
        return v.sym.op === 'const' ? v.sym.value : null;
      });
      if (sizes.some((x) => x === null || (x as number) < 0)) return;
      dims = sizes as number[];
      info = { space: 'shared', elementType: local.type, elementBytes: bytes };
      offset = indices[0];
      for (let i = 1; i < indices.length; i++) offset = binary('+', binary('*', offset, constant(dims[i])), indices[i]);
      if (local.dims.length > 1) {
        const first = this.evalDetached(local.dims[0]);
        dims[0] = first.sym.op === 'const' ? first.sym.value : 0;
      } else dims = undefined;
    } else {
      if (indices.length > 1) return;
      info = this.pointerInfoOf(root, base);
      if (!info || info.elementBytes <= 0) return;
      const step = info.unit ? constant(info.elementBytes / info.unit) : null;
      const index = indices.length === 1 ? (step ? binary('*', indices[0], step) : indices[0]) : null;
      offset = index ? binary('+', base, index) : base;
    }
    if (!info || !offset) return;
    // A member of the element: its place and width, or nothing where the element's layout is not known.
    let place: MemberPlace | undefined;
    if (member !== undefined) {
      place = this.layoutOf(info.elementType)?.members?.get(member);
      if (!place) return;
    }
    this.addEvent({
      event: 'access',
      space: info.space,
      store,
      offset,
      elementBytes: info.elementBytes,
      ...(info.unit ? { offsetUnit: info.unit } : {}),
      elementType: info.elementType,
      array: exprText(arrayNamed(root)),
      ...(dims ? { dims, indices } : {}),
      ...(place ? { member: place } : {}),
      file: this.file,
      at: e.at,
      guards: this.eventGuards(),
      calls: [],
      repeats: this.inLoop(),
    });
  }

  /** What a callee leaves in its reference parameters, the caller's storage it was given, and its object. */
  private copyBack(
    analysis: FunctionAnalysis,
    ir: FunctionIR,
    e: Extract<Expr, { k: 'call' }>,
    object: Expr | null,
    objectKey: string | null,
    state: State,
    stmtAt: Range,
    abstraction: Abstraction,
  ): void {
    const exit = new Map(
      [...analysis.exitState].map(([k, v]) => [k, this.capped(`out${e.at[0]}:${k}`, abstraction.back(v))]),
    );
    e.args.forEach((a, k) => {
      const pid = ir.params[k];
      if (pid === undefined) return;
      const local = ir.locals[pid];
      const own = this.privateStorage(a) ?? (a.k === 'unary' && a.op === '&' ? this.keyOf(a.arg) : null);
      if (own) {
        const after = exit.get(`l${pid}.*`) ?? (local.reference ? exit.get(`l${pid}`) : undefined);
        if (after) state.set(own, after);
        return;
      }
      if (local.reference && !/\bconst\b/.test(local.type)) {
        const key = this.keyOf(a);
        const after = exit.get(`l${pid}`);
        if (key && after) this.assignKey(key, after, state, stmtAt);
      }
    });
    if (object && objectKey) {
      for (const [k, v] of exit) {
        if (!k.startsWith('this.')) continue;
        state.set(`${objectKey}.${k.slice(5)}`, v);
      }
    }
  }

  private callLambda(at: Range, e: Extract<Expr, { k: 'call' }>, args: TV[], state: State, stmtAt: Range): TV | null {
    if (this.inv.depth >= MAX_UNIFORMITY_CALL_DEPTH || this.session.exhausted) return null;
    const ir = this.session.program.lambdaIR(this.file, at);
    if (!ir) return null;
    const id = `${this.file}\u0000lambda@${at[0]}`;
    if (this.session.stack.includes(id)) return null;
    // What it captures: the enclosing function's locals by name, as they are here.
    const captures = new Map<string, TV>();
    for (const local of this.ir.locals) {
      const v = state.get(this.aliases.get(local.id) ?? `l${local.id}`);
      if (v) captures.set(local.name, v);
    }
    if (this.inv.captures)
      for (const [n, v] of this.inv.captures) if (!captures.has(n)) captures.set(n, state.get(`cap.${n}`) ?? v);
    const key = [id, args.map(tvKey).join(','), [...captures].map(([n, v]) => `${n}=${tvKey(v)}`).join(',')].join(
      '\u0000',
    );
    let analysis = this.session.invocations.get(key);
    if (analysis === undefined) {
      this.session.stack.push(id);
      try {
        analysis = new FunctionAnalysis(this.session, {
          ir,
          scope: this.inv.scope,
          fn: this.inv.fn,
          params: args,
          self: this.inv.self,
          captures,
          depth: this.inv.depth + 1,
          key,
        });
        analysis.run();
      } finally {
        this.session.stack.pop();
      }
      this.session.invocations.set(key, analysis);
    }
    if (!analysis) return null;
    this.adoptCallee(analysis, e.at);
    // Captures by reference it changed: the enclosing function's locals of those names.
    for (const [k, v] of analysis.exitState) {
      if (!k.startsWith('cap.')) continue;
      const name = k.slice(4);
      const local = [...this.ir.locals].reverse().find((l) => l.name === name && state.has(`l${l.id}`));
      if (local) this.assignKey(`l${local.id}`, v, state, stmtAt);
      else if (this.inv.captures?.has(name)) state.set(k, v);
    }
    void e;
    return analysis.result;
  }

  /** A call nothing defines in the unit: a type's conversion passes its argument; anything else is as varying as what it reads. */
  private unknownCall(
    e: Extract<Expr, { k: 'call' }>,
    name: string | null,
    args: TV[],
    state: State,
    stmtAt: Range,
  ): TV {
    if (name && args.length === 1 && (PRIMITIVE.test(baseName(name)) || this.isClass(name))) return args[0];
    if (e.callee.k === 'field') args = [...args, this.ev(e.callee.object, state, stmtAt)];
    const v = this.derived(`call${e.at[0]}`, exprText(e), args);
    // The caller's own storage passed to a function out of view comes back holding what it wrote
    // there: the thread's own data, as far as anything here can tell (`BlockLoad(...).Load(p, vals)`).
    e.args.forEach((a) => {
      const own = this.privateStorage(a) ?? (a.k === 'unary' && a.op === '&' ? this.keyOf(a.arg) : null);
      if (!own) return;
      const m = /^l(\d+)/.exec(own);
      if (m && this.ir.locals[Number(m[1])]?.shared) return;
      state.set(own, {
        sym: this.opaque(`out${e.at[0]}:${own}`, 'laneVarying', keyName(own, this.ir)),
        origin: { file: this.file, at: e.at },
      });
    });
    return v;
  }

  private construct(type: string, items: Expr[], state: State, stmtAt: Range): TV | null {
    const program = this.session.program;
    const name = baseName(this.resolveType(type) ?? type);
    const ctors = program.functionsNamed(name).filter((f) => isConstructor(f.fn) && f.fn.bodyAt);
    const args = items.map((x) => this.ev(x, state, stmtAt));
    const fit = ctors.filter(
      (f) =>
        f.fn.params.length >= args.length &&
        f.fn.params.filter((p) => !p.defaultAt && !p.variadic).length <= args.length,
    );
    if (fit.length === 0 || fit.length > MAX_CANDIDATES) return null;
    const results: TV[] = [];
    for (const pf of fit) {
      const fake: Extract<Expr, { k: 'call' }> = {
        k: 'call',
        callee: { k: 'name', name, local: null, templateArgs: null, at: stmtAt },
        args: items,
        at: stmtAt,
        id: -1,
      };
      // Made in a scratch object: what the constructor leaves in `this` is the new object's members.
      const scratch: State = new Map();
      const made: Expr = { k: 'name', name: '$made', local: null, templateArgs: null, at: stmtAt };
      const r = this.callFunction({ pf, bindings: new Map(), object: made }, fake, args, scratch, stmtAt, '$made');
      if (!r) return null;
      const fields = new Map<string, TV>();
      for (const [k, v] of scratch) if (k.startsWith('$made.')) fields.set(k.slice(6), v);
      results.push({ ...this.derived(`ctor${stmtAt[0]}`, name, [...fields.values()]), fields });
    }
    return results[0];
  }

  private asmValue(e: Extract<Expr, { k: 'asm' }>, state: State, stmtAt: Range): TV {
    const inputs = e.inputs.map((x) => this.ev(x, state, stmtAt));
    const template = e.template;
    let sym: Sym | null = null;
    if (/%laneid/.test(template)) sym = { op: 'laneId' };
    else if (/%tid\.x/.test(template)) sym = { op: 'threadIdx', dim: 'x' };
    else if (/%tid\.y/.test(template)) sym = { op: 'threadIdx', dim: 'y' };
    else if (/%warpid|%smid|%nsmid/.test(template)) sym = this.opaque(`asm${e.at[0]}`, 'warpUniform', template);
    if (/\bbar\.sync\b|\bbarrier\.sync\b|\bbar\.arrive\b/.test(template)) this.barrier(state, e.at);
    // `bar.sync 0;` waits for the whole block; with a thread count (`bar.sync 1, 64;`) only for those threads.
    if (/\b(?:bar|barrier)(?:\.cta)?\.sync(?:\.aligned)?\s+[^,;]+;/.test(template))
      this.noteBarrier(e.at, 'block', null);
    e.outputs.forEach((o, i) => {
      let v: TV;
      if (sym && e.outputs.length === 1) v = { sym, origin: { file: this.file, at: e.at } };
      else v = this.derived(`asm${e.at[0]}:${i}`, exprText(o), sym ? [{ sym, origin: null }, ...inputs] : inputs);
      this.store(o, v, state, stmtAt);
    });
    return { sym: ZERO, origin: null };
  }
}

// --- helpers -----------------------------------------------------------------

/**
 * The values a call gives its callee, with each uniform value that is not a constant replaced by an
 * unknown of the callee's own (the same for every call, by parameter and by whether the value is
 * fixed at compile time): the key of one analysis for all such calls, and the way back from the
 * callee's unknowns to the caller's values.
 */
class Abstraction {
  private readonly parts: string[] = [];
  private readonly subst = new Map<number, Sym>();
  constructor(
    private readonly session: Session,
    private readonly callee: string,
  ) {}

  get key(): string {
    return this.parts.join(',');
  }

  value(tag: string, v: TV | undefined): TV | undefined {
    if (!v) {
      this.parts.push(`${tag}-`);
      return undefined;
    }
    const sym = this.sym(tag, v.sym);
    if (!v.fields) return sym === v.sym ? v : { sym, origin: v.origin };
    const fields = new Map<string, TV>();
    for (const [f, fv] of v.fields) fields.set(f, this.value(`${tag}.${f}`, fv)!);
    return { sym, origin: v.origin, fields };
  }

  /**
   * The value with each unknown leaf (a uniform unknown, per-lane data, a warp's value) replaced by
   * one of the callee's own, numbered in order of appearance (the same leaf twice is the same
   * unknown); thread indices, constants and loop counters kept. Its shape is the key.
   */
  private sym(tag: string, s: Sym): Sym {
    const leaves = new Map<string, Sym>();
    const shape: string[] = [];
    // A part that is one kind of unknown as a whole (uniform, per-lane data, a warp's value) is one
    // leaf: its inner shape tells nothing more about the threads.
    const leaf = (x: Sym, kind: 'fixed' | 'free' | 'laneVarying' | 'warpUniform', name: string): Sym => {
      const id = symKey(x);
      const known = leaves.get(id);
      if (known) {
        shape.push(`$${[...leaves.keys()].indexOf(id)}`);
        return known;
      }
      const n = leaves.size;
      const canonical = this.session.canonical(`${this.callee}|${tag}|${n}|${kind}`, name, kind);
      leaves.set(id, canonical);
      this.subst.set(canonical.id, x);
      shape.push(`$${n}:${kind}`);
      return canonical;
    };
    const walk = (x: Sym): Sym => {
      if (x.op !== 'const' && !(x.op === 'free' && x.loop)) {
        const facts = symFacts(x);
        const counters = facts.frees.some((f) => f.loop !== null);
        if (!isThreadDependent(x) && !counters) return leaf(x, isFixedValue(x) ? 'fixed' : 'free', nameOf(x));
        if (facts.opaqueLane) return leaf(x, 'laneVarying', nameOf(x));
        if (facts.threadAxes.size === 0 && !facts.laneId && !counters) return leaf(x, 'warpUniform', nameOf(x));
      }
      switch (x.op) {
        case 'const':
          shape.push(String(x.value));
          return x;
        case 'threadIdx':
        case 'blockIdx':
        case 'blockDim':
        case 'gridDim':
          shape.push(`${x.op}.${x.dim}`);
          return x;
        case 'laneId':
          shape.push('%lane');
          return x;
        case 'free':
        case 'opaque':
          // Loop counters: kept, with what the verdicts simulate of them.
          shape.push(symKey(x));
          return x;
        case 'binary': {
          shape.push(`(${x.operator}`);
          const left = walk(x.left);
          const right = walk(x.right);
          shape.push(')');
          return left === x.left && right === x.right ? x : { op: 'binary', operator: x.operator, left, right };
        }
        case 'unary': {
          shape.push(`(${x.operator}`);
          const arg = walk(x.arg);
          shape.push(')');
          return arg === x.arg ? x : { op: 'unary', operator: x.operator, arg };
        }
        case 'select': {
          shape.push('(?');
          const cond = walk(x.cond);
          const then = walk(x.then);
          const otherwise = walk(x.else);
          shape.push(')');
          return cond === x.cond && then === x.then && otherwise === x.else
            ? x
            : { op: 'select', cond, then, else: otherwise };
        }
      }
    };
    const out = walk(s);
    this.parts.push(`${tag}=${shape.join(' ')}`);
    return out;
  }

  /** A value of the callee with its unknowns for the caller's values put back. */
  back(v: TV): TV {
    if (this.subst.size === 0) return v;
    const sym = substitute(v.sym, this.subst);
    const fields = v.fields ? new Map([...v.fields].map(([k, f]) => [k, this.back(f)])) : undefined;
    return sym === v.sym && !fields ? v : { sym, origin: v.origin, ...(fields ? { fields } : {}) };
  }
}

function nameOf(sym: Sym): string {
  return sym.op === 'free' ? sym.name : sym.op === 'opaque' ? sym.what : 'value';
}

function substitute(sym: Sym, subst: ReadonlyMap<number, Sym>): Sym {
  switch (sym.op) {
    case 'free':
    case 'opaque':
      return subst.get(sym.id) ?? sym;
    case 'binary': {
      const left = substitute(sym.left, subst);
      const right = substitute(sym.right, subst);
      return left === sym.left && right === sym.right ? sym : binary(sym.operator, left, right);
    }
    case 'unary': {
      const arg = substitute(sym.arg, subst);
      return arg === sym.arg ? sym : { op: 'unary', operator: sym.operator, arg };
    }
    case 'select': {
      const cond = substitute(sym.cond, subst);
      const then = substitute(sym.then, subst);
      const otherwise = substitute(sym.else, subst);
      return cond === sym.cond && then === sym.then && otherwise === sym.else
        ? sym
        : { op: 'select', cond, then, else: otherwise };
    }
    default:
      return sym;
  }
}

type FreeSym = Extract<Sym, { op: 'free' }>;

function maxKind(a: DependenceKind, b: DependenceKind): DependenceKind {
  return RANK[b] > RANK[a] ? b : a;
}

function sameTV(a: TV, b: TV): boolean {
  if (a === b) return true;
  if (symKey(a.sym) !== symKey(b.sym)) return false;
  if (!a.fields && !b.fields) return true;
  if (!a.fields || !b.fields || a.fields.size !== b.fields.size) return false;
  for (const [k, v] of a.fields) {
    const w = b.fields.get(k);
    if (!w || !sameTV(v, w)) return false;
  }
  return true;
}

function sameState(a: State, b: State): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || !sameTV(v, w)) return false;
  }
  return true;
}

function tvKey(v: TV): string {
  return v.fields ? `${symKey(v.sym)}{${[...v.fields].map(([k, f]) => `${k}:${tvKey(f)}`).join(',')}}` : symKey(v.sym);
}

function fieldsOf(state: State, key: string): Map<string, TV> {
  const out = new Map<string, TV>();
  for (const [k, v] of state)
    if (k.startsWith(`${key}.`) && !k.endsWith('.*') && !k.slice(key.length + 1).includes('.'))
      out.set(k.slice(key.length + 1), v);
  return out;
}

function firstOrigin(...values: TV[]): TV['origin'] {
  for (const v of values) if (v.origin && isThreadDependent(v.sym)) return v.origin;
  return null;
}

function negation(sym: Sym): Sym {
  return sym.op === 'unary' && sym.operator === '!' ? sym.arg : { op: 'unary', operator: '!', arg: sym };
}

/** `x op amount` where `x` is `head`: one loop step. */
function stepOf(sym: Sym, head: Sym): { operator: '+' | '-' | '*' | '/' | '<<' | '>>'; amount: Sym } | null {
  if (sym.op !== 'binary') return null;
  if (!['+', '-', '*', '/', '<<', '>>'].includes(sym.operator)) return null;
  if (symKey(sym.left) === symKey(head)) return { operator: sym.operator as '+', amount: sym.right };
  if ((sym.operator === '+' || sym.operator === '*') && symKey(sym.right) === symKey(head))
    return { operator: sym.operator, amount: sym.left };
  return null;
}

/**
 * The step every back edge adds to `head` when the two differ by a sum that stays after expanding
 * both as polynomials (`base = index * T` with `index += S` in the body: `base` grows by `S * T`),
 * or null. Read only when the syntax shows no step of its own.
 */
function linearStepOf(values: TV[], head: Sym): ReturnType<typeof stepOf> {
  const h = polynomialOf(head);
  if (!h) return null;
  let found: Sym | null = null;
  for (const v of values) {
    if (symKey(v.sym) === symKey(head)) continue;
    const b = polynomialOf(v.sym);
    if (!b) return null;
    for (const [k, m] of h) addTerm(b, k, m.factors, -m.coef);
    const amount = symOfPolynomial(b);
    if (found && symKey(found) !== symKey(amount)) return null;
    found = amount;
  }
  return found ? { operator: '+', amount: found } : null;
}

/** A sum of products: each monomial's coefficient and factors, by the factors' keys ('' the constant). */
type Polynomial = Map<string, { coef: number; factors: Sym[] }>;
const MAX_TERMS = 16;

function polynomialOf(sym: Sym, depth = 0): Polynomial | null {
  if (depth > 24) return null;
  if (sym.op === 'const') return Number.isFinite(sym.value) ? new Map([['', { coef: sym.value, factors: [] }]]) : null;
  if (sym.op === 'unary' && sym.operator === '-') {
    const a = polynomialOf(sym.arg, depth + 1);
    if (!a) return null;
    for (const m of a.values()) m.coef = -m.coef;
    return a;
  }
  if (sym.op === 'binary' && (sym.operator === '+' || sym.operator === '-' || sym.operator === '*')) {
    const l = polynomialOf(sym.left, depth + 1);
    const r = l && polynomialOf(sym.right, depth + 1);
    if (!l || !r) return null;
    if (sym.operator !== '*') {
      for (const [k, m] of r) addTerm(l, k, m.factors, sym.operator === '+' ? m.coef : -m.coef);
      return l.size > MAX_TERMS ? null : l;
    }
    if (l.size * r.size > MAX_TERMS) return null;
    const out: Polynomial = new Map();
    for (const a of l.values())
      for (const b of r.values()) {
        const factors = [...a.factors, ...b.factors].sort((x, y) => (symKey(x) < symKey(y) ? -1 : 1));
        addTerm(out, factors.map(symKey).join('*'), factors, a.coef * b.coef);
      }
    return out;
  }
  return new Map([[symKey(sym), { coef: 1, factors: [sym] }]]);
}

function addTerm(p: Polynomial, key: string, factors: Sym[], coef: number): void {
  const m = p.get(key);
  if (!m) {
    if (coef !== 0) p.set(key, { coef, factors });
  } else if ((m.coef += coef) === 0) p.delete(key);
}

function symOfPolynomial(p: Polynomial): Sym {
  let sum: Sym | null = null;
  for (const { coef, factors } of [...p.values()].sort((a, b) => a.factors.length - b.factors.length)) {
    let term: Sym =
      factors.reduce<Sym | null>((acc, f) => (acc ? binary('*', acc, f) : f), null) ?? constant(Math.abs(coef));
    if (factors.length > 0 && Math.abs(coef) !== 1) term = binary('*', constant(Math.abs(coef)), term);
    sum = sum ? binary(coef < 0 ? '-' : '+', sum, term) : coef < 0 ? binary('-', ZERO, term) : term;
  }
  return sum ?? ZERO;
}

/** The one step every back edge takes (`head op amount`, for one of the head values tried), or null. */
function commonStepOf(values: TV[], heads: Sym[]): ReturnType<typeof stepOf> {
  let found: ReturnType<typeof stepOf> = null;
  for (const v of values) {
    if (heads.some((h) => symKey(h) === symKey(v.sym))) continue;
    let s: ReturnType<typeof stepOf> = null;
    for (const h of heads) if ((s = stepOf(v.sym, h))) break;
    if (!s) return null;
    if (found && (found.operator !== s.operator || symKey(found.amount) !== symKey(s.amount))) return null;
    found = s;
  }
  return found;
}

/**
 * A local called like a function that may be a lambda of this function, capturing its locals by
 * reference: declared here with `auto` (or as a `std::function`). An object of a named class
 * (`cub::ArgMax op; op(a, b)`) or a parameter (a functor the caller made) cannot write them.
 */
function mayBeOwnLambda(local: Local | undefined): boolean {
  return !!local && !local.param && /\bauto\b|\bfunction\s*</.test(local.type);
}

function mentions(sym: Sym, target: Sym): boolean {
  if (sym === target) return true;
  switch (sym.op) {
    case 'binary':
      return mentions(sym.left, target) || mentions(sym.right, target);
    case 'unary':
      return mentions(sym.arg, target);
    case 'select':
      return mentions(sym.cond, target) || mentions(sym.then, target) || mentions(sym.else, target);
    default:
      return false;
  }
}

function symSize(sym: Sym, budget = 1000): number {
  switch (sym.op) {
    case 'binary': {
      const l = symSize(sym.left, budget - 1);
      return l >= budget ? budget : 1 + l + symSize(sym.right, budget - 1 - l);
    }
    case 'unary':
      return 1 + symSize(sym.arg, budget - 1);
    case 'select': {
      const c = symSize(sym.cond, budget - 1);
      const t = c >= budget ? 0 : symSize(sym.then, budget - 1 - c);
      return Math.min(budget, 1 + c + t + (c + t >= budget ? 0 : symSize(sym.else, budget - 1 - c - t)));
    }
    default:
      return 1;
  }
}

function linearIndex(): Sym {
  const x: Sym = { op: 'threadIdx', dim: 'x' };
  const y: Sym = { op: 'threadIdx', dim: 'y' };
  const z: Sym = { op: 'threadIdx', dim: 'z' };
  const dx: Sym = { op: 'blockDim', dim: 'x' };
  const dy: Sym = { op: 'blockDim', dim: 'y' };
  return binary('+', x, binary('*', dx, binary('+', y, binary('*', dy, z))));
}

function blockSize(): Sym {
  return binary(
    '*',
    { op: 'blockDim', dim: 'x' },
    binary('*', { op: 'blockDim', dim: 'y' }, { op: 'blockDim', dim: 'z' }),
  );
}

function flatBlockIndex(): Sym {
  return binary(
    '+',
    { op: 'blockIdx', dim: 'x' },
    binary(
      '*',
      { op: 'gridDim', dim: 'x' },
      binary('+', { op: 'blockIdx', dim: 'y' }, binary('*', { op: 'gridDim', dim: 'y' }, { op: 'blockIdx', dim: 'z' })),
    ),
  );
}

/** A pointer's element type as the declaration writes it before the `*` (`const float` → `float`). */
function cleanPointee(type: string): string | null {
  const t = type
    .replace(/\b(?:const|volatile|__restrict__|__restrict)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return t || null;
}

/** The array an index expression starts from (`a` in `a[i][j]`). */
/** The array or pointer an access's address is written from: through casts, `&a[i]` and `p + i` (`reinterpret_cast<float4*>(&C[i])` reads `C`). */
function arrayNamed(e: Expr): Expr {
  let x = e;
  for (let k = 0; k < 8; k++) {
    if (x.k === 'cast') x = x.arg;
    else if (x.k === 'unary' && x.op === '&' && x.arg.k === 'index') x = rootOf(x.arg);
    else if (x.k === 'binary' && (x.op === '+' || x.op === '-') && x.left.k !== 'num') x = x.left;
    else break;
  }
  return x;
}

function rootOf(e: Expr): Expr {
  let x = e;
  while (x.k === 'index') x = x.object;
  return x;
}

/** An expression has effects or reads memory (a short-circuit's right operand that is a branch of its own). */
function hasEffects(e: Expr): boolean {
  switch (e.k) {
    case 'call':
    case 'index':
    case 'assign':
    case 'update':
      return true;
    case 'unary':
      return e.op === '*' || hasEffects(e.arg);
    case 'field':
      return e.arrow || hasEffects(e.object);
    case 'binary':
      return hasEffects(e.left) || hasEffects(e.right);
    case 'cond':
      return hasEffects(e.cond) || hasEffects(e.then) || hasEffects(e.else);
    case 'cast':
      return hasEffects(e.arg);
    default:
      return false;
  }
}

/** The keys an expression writes (assignments, increments, what is passed to a call by address). */
function collectWrites(
  e: Expr | null,
  into: Set<string>,
  ir: FunctionIR,
  byValue?: (call: Extract<Expr, { k: 'call' }>, k: number) => boolean,
): void {
  if (!e) return;
  const target = (t: Expr) => {
    let x = t;
    const path: string[] = [];
    while (x.k === 'field' && !x.arrow) {
      path.unshift(x.field);
      x = x.object;
    }
    while (x.k === 'index') x = x.object;
    if (x.k === 'name' && x.local !== null) {
      into.add(`l${x.local}`);
      if (path.length) into.add(`l${x.local}.${path.join('.')}`);
      into.add(`l${x.local}.*`);
    } else if (x.k === 'name') into.add(`cap.${x.name}`);
    else if (x.k === 'field' && x.object.k === 'this') into.add(`this.${x.field}`);
    else if (x.k === 'unary' && x.op === '*' && x.arg.k === 'name' && x.arg.local !== null)
      into.add(`l${x.arg.local}.*`);
  };
  const visit = (x: Expr, depth: number): void => {
    if (depth > 200) return;
    if (x.k === 'assign') target(x.target);
    if (x.k === 'update') target(x.arg);
    if (x.k === 'asm') for (const o of x.outputs) target(o);
    if (x.k === 'call') {
      x.args.forEach((a, k) => {
        if (a.k === 'unary' && a.op === '&') target(a.arg);
        if (a.k === 'name' && a.local !== null && !byValue?.(x, k)) into.add(`l${a.local}`);
      });
      if (x.callee.k === 'field') target(x.callee.object);
      if (x.callee.k === 'name' && x.callee.local !== null && mayBeOwnLambda(ir.locals[x.callee.local])) {
        // A lambda may write what it captures by reference: every local.
        for (const l of ir.locals) into.add(`l${l.id}`);
      }
    }
    for (const c of childrenOf(x)) visit(c, depth + 1);
  };
  visit(e, 0);
}

function keyName(key: string, ir: FunctionIR): string {
  // What a function returns, as a message names it (`$ret` is the walk's own key).
  if (key === '$ret') return 'the return value';
  const m = /^l(\d+)(.*)$/.exec(key);
  if (m) return `${ir.locals[Number(m[1])]?.name ?? 'local'}${m[2].replace(/\.\*$/, '[]')}`;
  return key.replace(/^(this|cap)\./, '');
}

function cleanType(type: string): string | null {
  const t = type
    .replace(
      /\b(?:const|volatile|constexpr|static|__restrict__|__shared__|__device__|struct|class|typename)\b|[&*]/g,
      '',
    )
    .replace(/<.*$/, '')
    .trim();
  return /^[A-Za-z_][\w:]*$/.test(t) ? t : null;
}

function calleeName(e: Extract<Expr, { k: 'call' }>): string {
  return e.callee.k === 'name' ? e.callee.name : e.callee.k === 'field' ? e.callee.field : '';
}

/** A short name for an expression (what an unknown stands for). */
function exprText(e: Expr): string {
  switch (e.k) {
    case 'name':
      return e.name;
    case 'field':
      return `${exprText(e.object)}${e.arrow ? '->' : '.'}${e.field}`;
    case 'index':
      return `${exprText(e.object)}[…]`;
    case 'call':
      return `${exprText(e.callee)}(…)`;
    case 'unary':
      return `${e.op}${exprText(e.arg)}`;
    case 'num':
      return e.text;
    case 'binary':
      // Pointer arithmetic (`gamma + col`): the access is into what the pointer side names.
      return e.op === '+' || e.op === '-' ? exprText(e.left.k === 'num' ? e.right : e.left) : '…';
    default:
      return '…';
  }
}

/** A member's type with its record's template parameters replaced by the arguments. */
function substituteParams(type: string, params: ReadonlyArray<{ name: string }>, args: readonly string[]): string {
  if (params.length === 0) return type;
  const map = new Map(params.map((p, k) => [p.name, args[k]]));
  return type.replace(/\b[A-Za-z_]\w*\b/g, (w) => map.get(w) ?? w);
}
