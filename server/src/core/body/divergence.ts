/**
 * Warp divergence: every branch whose condition depends on a thread index,
 * classified as
 * - `divergent`: lanes of one warp can disagree, so the warp runs the paths
 *   one after the other (cost = sum of the paths, ideal = the longest);
 * - `warp-uniform`: thread-dependent but the same in all 32 lanes of each warp
 *   (checked lane by lane for the block sizes the kernel is launched with);
 * - `tail`: a bounds guard on an index that grows with the thread index
 *   (`i < n`, a grid-stride loop): it splits at most the warp that holds the
 *   boundary.
 * Precision comes before recall: a branch is `divergent` only when the
 * enumeration finds a warp whose lanes disagree, or when its condition reads
 * per-lane data (`a[threadIdx.x] > 0`, an atomic's result).
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { Dim3, Kernel, Launch, Span } from '../types';
import { fileName } from '../preprocess/paths';
import { lastComponent, makeSourceText, offsetAt, positionAt, withinLines, type SourceText } from '../text/source-text';
import type { Lookup } from '../text/const-eval';
import { spanOfNode, uncalledDeviceFunctions, type FunctionTable } from './syntax-functions';
import { defaultBlockShape } from '../uniformity/lane-evaluation';
import type { ThreadValue } from '../uniformity/symbolic-values';
import { estimateCost } from './path-costs';
import { SyntaxViews } from '../syntax/syntax-view';
import { oneLineOfCode } from '../text/one-line';
import { classifySite, formatDim, type Verdict } from './branch-verdicts';
import { explain, suggest } from './branch-prose';
import { branchSiteIn, type BranchConstruct, type BranchSite } from './branch-syntax';
import { armsMerge } from './merged-arms';
import type { UnitProgram, ProgramFunction, TemplateBinding } from '../program/program';
import { keptKernelUniformity, type KernelUniformity, type TV } from '../uniformity/thread-uniformity';
import { kernelScope } from '../facts/kernel-reader';
import { LaunchCollector } from '../facts/launch-sites';
import { launchFacts } from '../facts/launch-facts';
import { num } from '../values/domain';

export { isLeaderBranch } from './branch-prose';
export type { BranchConstruct } from './branch-syntax';

export type BranchKind = 'divergent' | 'warp-uniform' | 'tail';

export interface BranchPath {
  label: string;
  /** Issue slots for one warp to run the path (estimated, or counted in PTX). */
  cost: number;
  /** The source the path covers (empty for an empty else). */
  spans: Span[];
  /** The path holds a loop: work its lanes repeat, which a split's idle lanes could take a share of. */
  loops?: boolean;
  /** The path runs a loop of any kind (its cost may count one round of it: PTX counts loops once). */
  repeats?: boolean;
}

/** How a divergent branch splits its warps, as plain data for the hover. */
export interface SplitSummary {
  /** `every warp`, `warp 0 of each block`, `3 of the 8 warps of each block`. */
  warps: string;
  /** The share of a block's warps that split (1 where every warp does; absent where data decides). */
  warpShare?: number;
  /** Lane counts of the groups in one split warp, largest first (e.g. [16, 16], [31, 1]); null when data-dependent. */
  groups: number[] | null;
  /** When the split happens, for a loop counter: `s < 32 (s = 16, 8, 4, 2, 1)`. */
  when: string | null;
  /** The condition reads per-lane data: lanes disagree when their values do. */
  dataDependent: boolean;
  /**
   * Uniform values the source does not fix (a kernel's argument, a macro not in view) that decide
   * whether the split happens at all: for some of their values no warp splits (`col < n` with n a
   * multiple of 32). Empty when the thread indices and the block shape prove it.
   */
  onlyFor?: string[];
  /**
   * The condition reads the block index and some blocks split no warp where others do (a global
   * index equal to a constant, the grid's diagonal): what share of the launch pays the split
   * depends on the grid, which the source does not fix.
   */
  someBlocks?: boolean;
  /** The split changes from one loop step to the next: `laneActivity` is a mean over the steps. */
  variesBySteps: boolean;
  /**
   * The groups differ with the value of an unknown the condition reads (`idx < k`): `groups` is
   * one sample's, not a number to show.
   */
  groupsVary?: boolean;
}

export interface Branch {
  kernel: string;
  kind: BranchKind;
  construct: BranchConstruct;
  /** The condition as written. */
  condition: string;
  span: Span;
  conditionSpan: Span;
  /** Where the thread dependence came from (`int t = threadIdx.x;`). */
  source: { text: string; span: Span };
  paths: BranchPath[];
  /** Sets of path indices that lanes of one warp can take together (each set runs one after the other). */
  concurrentPaths: number[][];
  /** Issue slots when the lanes disagree: the largest sum over `concurrentPaths`. */
  divergedCost: number;
  /** Issue slots if the lanes agreed: the longest path. */
  idealCost: number;
  /** idealCost / divergedCost (1 when nothing is serialized). */
  efficiency: number;
  /**
   * Issue slots per warp pass that a split warp spends with lanes idle, in whole-warp units: each
   * path's cost times the share of the warp's lanes not on it (`laneActivity`, half and half when the
   * split follows data). What the warning threshold is measured in.
   */
  idleIssueSlots: number;
  /** Issue slots of one pass of the whole kernel (or device function) the branch is in, counted the same way as its paths (loops once). */
  kernelIssueSlots: number;
  /** In a split warp, the mean fraction of lanes on `paths[0]` (the body, the next iteration, the rest after an early exit). */
  laneActivity?: number;
  split?: SplitSummary;
  costSource: 'syntax-estimate' | 'ptx';
  /** Short enough that the compiler will likely predicate it rather than branch. */
  likelyPredicated: boolean;
  /**
   * The arms are the same straight-line code on different operands, which the compiler makes one
   * copy of (see merged-arms.ts): a split warp issues the shared code once.
   */
  mergedArms?: true;
  /**
   * In the kernel's own body and in no loop there (nor a lambda): each thread passes it at most
   * once, so a split warp pays its idle slots once in its life (see divergenceSeverity).
   */
  oncePerThread?: true;
  /**
   * The compiled code has no branch instruction where this branch is: the compiler predicated it
   * (or turned it into a select), and every warp issues its instructions, split or not. `cost`: the
   * instructions on its lines (null when the listing does not say where instructions come from).
   */
  predicated?: { source: 'ptx' | 'sass'; cost: number | null };
  /** In a `__device__` function no kernel of the file calls (`kernel` is then its name). */
  inDeviceFunction?: boolean;
  /**
   * Read where a kernel of another file (`kernel`, in `file`) calls the function: its costs are
   * weighed against the function alone, not the kernel that calls it (see divergenceSeverity).
   */
  calledFrom?: { kernel: string; file: string };
  /** One or two sentences for the hover. */
  explanation: string;
  suggestion: string | null;
  assumptions: string[];
}

/** What the analysis of any kernel of one document version reads: found once, shared by every call of divergenceOf. */
export interface DivergenceContext {
  /** The text the trees are parsed from (the document's parse view: its lines and offsets are the document's). */
  source: SourceText;
  view: string;
  /** The host pass's tree of the document (the cost model's calls into the file's functions are found there). */
  tree: Tree;
  /** The file's constants (trip counts in the cost model). */
  lookup: Lookup;
  functions: FunctionTable;
  launchesOf: ReadonlyMap<string, Launch[]>;
  /** The block shape to assume when no launch of a kernel resolves one (default 256×1×1, or 32×8×1 when threadIdx.y/z is used). */
  defaultBlock?: Dim3;
  /** The unit's program (a device pass's, where kernel bodies are compiled) and the document's path in it. */
  program: UnitProgram;
  path: string;
  /** The tree of the document as `program` reads it, where its branches are placed; default `tree`. */
  programTree?: Tree;
  /**
   * Where the document is a header read in its includer's unit: the main file's launches, read as
   * that file reads them (worked out when a kernel of the document has no launch of its own).
   */
  includer: () => IncluderLaunches | null;
  /** The includer's kernels that name a function of the document, with their instances (see branchesThroughIncluder). */
  includerCallers: (name: string) => IncluderCaller[];
}

/** Launches of another file of the unit, and the context their template arguments are read in. */
export interface IncluderLaunches {
  launches: Launch[];
  from: InstanceContext;
}

export interface DivergenceInput {
  source: SourceText;
  /** The document's view: the parse view with CUDA's attributes still written (a device lambda's `__device__`). */
  view: string;
  tree: Tree;
  launches: readonly Launch[];
  lookup: Lookup;
  functions: FunctionTable;
  program: UnitProgram;
  path: string;
  programTree?: Tree;
  defaultBlock?: Dim3;
}

/** A divergent branch idles lanes for at least this many issue slots per warp before it is a warning. */
export const DEFAULT_DIVERGENCE_COST_THRESHOLD = 4;
/** ... and for at least this share (percent) of its kernel's issue slots. */
export const DEFAULT_DIVERGENCE_MIN_SHARE = 8;

export function prepareDivergence(input: DivergenceInput): DivergenceContext {
  const launchesOf = new Map<string, Launch[]>();
  for (const l of input.launches) {
    const group = launchesOf.get(l.baseName);
    if (group) group.push(l);
    else launchesOf.set(l.baseName, [l]);
  }
  let includer: IncluderLaunches | null | undefined;
  const callers = new Map<string, IncluderCaller[]>();
  const ctx: DivergenceContext = {
    ...input,
    launchesOf,
    includer: () => (includer === undefined ? (includer = includerLaunches(ctx)) : includer),
    includerCallers: (name) => {
      let found = callers.get(name);
      if (!found) callers.set(name, (found = withinStackOr(() => includerCallersOf(ctx, name)) ?? []));
      return found;
    },
  };
  return ctx;
}

/**
 * A header's kernels no launch in the document names run with the instances and block shapes the
 * `.cu` that includes it launches them with (its template arguments read with its own constants).
 */
function includerLaunches(ctx: DivergenceContext): IncluderLaunches | null {
  const main = ctx.program.unit.main;
  if (main === ctx.path) return null;
  const file = ctx.program.file(main);
  if (!file) return null;
  return withinStackOr(() => {
    const source = makeSourceText(file.view);
    const from: InstanceContext = { program: ctx.program, path: main, source };
    return { launches: launchFacts(new LaunchCollector(ctx.program).launchesIn(main), from), from };
  });
}

/** A kernel's launches: the document's, else its includer's, with the context to read them in. */
export function launchesOfKernel(
  ctx: DivergenceContext,
  kernel: Kernel,
): { launches: readonly Launch[]; from: InstanceContext; elsewhere: boolean } {
  const own = ctx.launchesOf.get(kernel.name) ?? [];
  if (own.length > 0) return { launches: own, from: ctx, elsewhere: false };
  const inc = ctx.includer();
  const theirs = inc?.launches.filter((l) => l.baseName === kernel.name) ?? [];
  return theirs.length > 0
    ? { launches: theirs, from: inc!.from, elsewhere: true }
    : { launches: own, from: ctx, elsewhere: false };
}

/** The branches of `kernels` (a subset of the document's: analyse a document a batch at a time). */
export function divergenceOf(ctx: DivergenceContext, kernels: readonly Kernel[]): Branch[] {
  const branches: Branch[] = [];
  for (const one of kernels) {
    const pf = functionAt(ctx, one);
    if (!pf) continue;
    const { launches, from } = launchesOfKernel(ctx, one);
    branches.push(...programBranches(ctx, one, pf, launches, from));
  }
  return branches;
}

/**
 * The file's `__device__` functions (and device lambdas) that nothing in it calls: helpers of a
 * header without a kernel, members called from other files. Their parameters are unknown, and the
 * block shape is the default one.
 */
export function uncalledDeviceRoots(ctx: DivergenceContext): Array<{ name: string; node: SyntaxNode }> {
  // Device code by the program's outline, which reads specifiers through their macros
  // (`#define HD __host__ __device__`); device lambdas from the view, comments blanked (the parse
  // view blanks a lambda's `__device__`).
  const functions = ctx.program.outline(ctx.path).functions;
  const lambdas = /\b__device__\b/.test(ctx.view);
  if (!lambdas && !functions.some((f) => f.device && !f.global)) return [];
  const isDevice = (definition: SyntaxNode) =>
    functions.some(
      (f) =>
        f.device &&
        !f.global &&
        (f.definitionAt[0] === definition.startIndex || (f.bodyAt !== null && f.bodyAt[1] === definition.endIndex)),
    );
  return uncalledDeviceFunctions(ctx.tree.rootNode, makeSourceText(ctx.view).masked, isDevice);
}

export function deviceFunctionBranches(ctx: DivergenceContext, root: { name: string; node: SyntaxNode }): Branch[] {
  const pf = deviceFunctionAt(ctx, root.node);
  if (!pf) return [];
  const span = spanOfNode(root.node);
  const body = root.node.childForFieldName('body');
  const device: Kernel = {
    name: root.name,
    qualifiedName: root.name,
    namespaces: [],
    templateParams: null,
    parameters: [],
    launchBounds: null,
    maxnreg: null,
    clusterDims: null,
    externC: false,
    isDefinition: true,
    span,
    nameSpan: span,
    headerSpan: span,
    bodySpan: body ? spanOfNode(body) : span,
    sharedDeclarations: [],
    staticSharedBytes: null,
    leadingComment: null,
  };
  const called =
    root.name === 'lambda' || !readsCallersValues(root.node, pf) ? null : branchesThroughIncluder(ctx, root, device);
  if (called) return called;
  const note = `${root.name === 'lambda' ? 'a device lambda' : `\`${root.name}\` is a __device__ function`} that no kernel of this file calls: its parameters are taken as unknown`;
  return programBranches(ctx, device, pf, [], ctx).map((b) => ({
    ...b,
    inDeviceFunction: true,
    assumptions: [note, ...b.assumptions],
  }));
}

/** Kernels of the includer whose walks are read for one header's helpers, at most. */
const MAX_INCLUDER_KERNELS = 4;

/**
 * A header's `__device__` function read where the `.cu` that includes it calls it: the includer's
 * kernels that name it are walked with the instances their launches make, and the branches the
 * walks record in the function are its own (its parameters then hold what those calls pass: a
 * per-lane value is per-lane). Null where no kernel of the includer names it.
 */
function branchesThroughIncluder(
  ctx: DivergenceContext,
  root: { name: string; node: SyntaxNode },
  device: Kernel,
): Branch[] | null {
  const callers = ctx.includerCallers(root.name);
  if (callers.length === 0) return null;
  const [from, to] = [root.node.startIndex, root.node.endIndex];
  const chosen = new MostSplit();
  for (const caller of callers) {
    const calledFrom = { kernel: caller.pf.fn.name, file: fileName(caller.pf.file) };
    for (const instance of caller.instances) {
      const result = instanceUniformity(ctx, caller.pf, instance);
      if (!result) continue;
      const sites = result.sites.filter((x) => x.at[0] >= from && x.at[1] <= to);
      if (sites.length === 0) continue;
      // Shapes and costs are the function's, with the block shapes the caller is launched with.
      const launches = instance.launches.map((l) => ({ ...l, baseName: device.name }));
      const read = { ...instance, launches, label: null };
      const note = `read where \`${calledFrom.kernel}\`${instance.label ? ` (${instance.label})` : ''}, in ${calledFrom.file}, which includes this file, calls \`${root.name}\``;
      for (const b of instanceBranches(ctx, device, { ...result, sites }, read))
        chosen.add({ ...b, inDeviceFunction: true, calledFrom, assumptions: [note, ...b.assumptions] });
    }
  }
  const branches = chosen.branches();
  return branches.length > 0 ? branches : null;
}

/** Constructs that may split a warp: where a function has none, no call can give it a branch. */
const BRANCHING: readonly string[] = [
  'if_statement',
  'for_statement',
  'for_range_loop',
  'while_statement',
  'do_statement',
  'switch_statement',
  'conditional_expression',
];

/**
 * Whether what a caller passes can change the function's branches: it takes parameters and has a
 * construct that can split a warp (a getter or a formula has none, and walking the includer's
 * kernels for it would find nothing).
 */
function readsCallersValues(node: SyntaxNode, pf: ProgramFunction): boolean {
  if (pf.fn.params.length === 0) return false;
  return (
    node.descendantsOfType([...BRANCHING]).length > 0 ||
    node
      .descendantsOfType('binary_expression')
      .some((b) => ['&&', '||'].includes(b?.childForFieldName('operator')?.type ?? ''))
  );
}

/** The includer's kernels that name `name` in their bodies, each with the instances its launches make. */
function includerCallersOf(ctx: DivergenceContext, name: string): IncluderCaller[] {
  // The includer's kernels that name it first: its launches are read only where one does.
  const path = ctx.program.unit.main;
  if (path === ctx.path) return [];
  const file = ctx.program.file(path);
  if (!file) return [];
  const word = new RegExp(`\\b${name.replace(/[^\w]/g, '')}\\b`);
  if (!word.test(file.view)) return [];
  const named = ctx.program
    .outline(path)
    .functions.filter((fn) => fn.global && fn.bodyAt && word.test(file.view.slice(fn.bodyAt[0], fn.bodyAt[1])))
    .slice(0, MAX_INCLUDER_KERNELS);
  if (named.length === 0) return [];
  const inc = ctx.includer();
  if (!inc) return [];
  return named.map((fn) => {
    const pf: ProgramFunction = { file: path, fn };
    return { pf, instances: instancesOf(pf, fn, inc.launches, inc.from) };
  });
}

interface IncluderCaller {
  pf: ProgramFunction;
  instances: Instance[];
}

// ---------------------------------------------------------------------------
// Kernels read through the unit's program

/** The program's function a kernel of the document is (its body where the kernel's is). */
export function functionAt(ctx: DivergenceContext, kernel: Kernel): ProgramFunction | null {
  if (!kernel.bodySpan) return null;
  const body = offsetAt(ctx.source, kernel.bodySpan.start);
  const fn = ctx.program.outline(ctx.path).functions.find((f) => f.bodyAt?.[0] === body && f.name === kernel.name);
  return fn ? { file: ctx.path, fn } : null;
}

function deviceFunctionAt(ctx: DivergenceContext, node: SyntaxNode): ProgramFunction | null {
  if (node.type !== 'function_definition' && node.type !== 'lambda_expression') return null;
  const fn = ctx.program
    .outline(ctx.path)
    .functions.find(
      (f) =>
        f.definitionAt[0] === node.startIndex ||
        f.at[0] === node.startIndex ||
        (f.bodyAt !== null && f.bodyAt[1] === node.endIndex),
    );
  return fn ? { file: ctx.path, fn } : null;
}

/**
 * Instances of a template kernel the launches make, one per set of template arguments written (a
 * type or a value), with the launches of each; launches whose arguments are not known share one with
 * the parameters unbound.
 */
export interface Instance {
  bindings: Map<string, TemplateBinding>;
  launches: Launch[];
  /** `k<128, float>`, when the kernel is a template launched with known arguments. */
  label: string | null;
  /** Parameters every launch of the instance passes the same integer constant (`Bc = 32`). */
  args?: BoundArgument[];
}

/** A kernel parameter's value at every launch of an instance. */
export interface BoundArgument {
  index: number;
  name: string;
  value: number;
  /** A pointer null at every launch: it only leaves out what it guards. */
  pointer: boolean;
}

/**
 * The parameters every one of `launches` passes the same integer constant: a size the launching
 * code fixes (a tile's width) is part of the instance as a template argument is; a pointer only
 * where it is null at every launch (what it guards never runs). None where no launch is in view.
 */
function boundArguments(pf: ProgramFunction, launches: readonly Launch[]): BoundArgument[] {
  if (launches.length === 0) return [];
  const out: BoundArgument[] = [];
  pf.fn.params.forEach((p, k) => {
    if (!p.name || p.variadic) return;
    const pointer = /[*&[]/.test(p.text);
    const values = new Set(launches.map((l) => l.argValues?.[k] ?? null));
    const [value] = [...values];
    if (values.size === 1 && value !== null && value !== undefined && (!pointer || value === 0))
      out.push({ index: k, name: p.name, value, pointer });
  });
  return out;
}

/** Instances analysed apart at most (the most distinct; see mostDistinct). */
const MAX_INSTANCES = 4;

/** Where launches are read: a launch's template arguments may name its enclosing template's parameters. */
export type InstanceContext = Pick<DivergenceContext, 'program' | 'path' | 'source'>;

/**
 * The instances of a kernel: one per set of template arguments its launches write (a type or a
 * value). Given the unit (`from`): a launch written in a function template (`k<T, 128><<<...>>>` in
 * `template <typename T> void run()`) makes one per explicit instantiation of that template in the
 * unit, its parameters replaced by the instantiation's arguments; a kernel no launch here names is
 * read per explicit instantiation of its own (`template __global__ void k<half, 128>(...)`), the code
 * that is compiled; arguments an explicit specialization takes make none.
 */
export function instancesOf(
  pf: ProgramFunction,
  kernel: Pick<Kernel, 'name'>,
  launches: readonly Launch[],
  from?: InstanceContext,
): Instance[] {
  const mine = launches.filter((l) => l.baseName === kernel.name && !l.inMacro);
  const params = pf.fn.templateParams ?? [];
  if (params.length === 0)
    return [
      {
        bindings: kernelScope(pf).bindings as Map<string, TemplateBinding>,
        launches: mine,
        label: null,
        args: boundArguments(pf, mine),
      },
    ];
  const groups = new Map<string, { args: Array<TemplateBinding | undefined>; launches: Launch[]; label: string }>();
  const add = (
    written: ReadonlyArray<string | null>,
    values: ReadonlyArray<number | null> | null,
    l: Launch | null,
  ) => {
    const args = params.map((p, k): TemplateBinding | undefined => {
      if (p.kind === 'type') return written[k] ? { k: 'type-arg', type: written[k]! } : undefined;
      const v = values?.[k] ?? integerLiteral(written[k]);
      return v !== null && v !== undefined ? num(v) : undefined;
    });
    // A type argument counts as much as a value: element sizes, and so addresses in bytes, follow it.
    if (!args.some((a) => a !== undefined)) return false;
    // Arguments an explicit specialization takes do not run this body.
    if (from?.program.specialized(pf, written.slice(0, params.length))) return true;
    const key = JSON.stringify(args);
    const group = groups.get(key);
    if (!group)
      groups.set(key, {
        args,
        launches: l ? [l] : [],
        label: `${kernel.name}<${args.map((a, k) => (a?.k === 'num' && a.values.length === 1 ? String(a.values[0]) : (written[k] ?? '?'))).join(', ')}>`,
      });
    else if (l) group.launches.push(l);
    return true;
  };
  const symbolic: Launch[] = [];
  for (const l of mine) {
    const written = l.templateArgs ?? [];
    const outer = from && written.length ? enclosingTemplate(from, l) : null;
    const outerParams = outer?.fn.templateParams ?? [];
    const named = outerParams.filter((p) => written.some((w) => new RegExp(`\\b${p.name}\\b`).test(w)));
    const instantiations = outer && named.length ? from!.program.instantiationsOf(outer) : [];
    if (instantiations.length) {
      let any = false;
      for (const inst of instantiations) {
        const replaced = written.map((w) =>
          outerParams.reduce(
            (text, p, k) => (inst[k] === null ? text : text.replace(new RegExp(`\\b${p.name}\\b`, 'g'), inst[k]!)),
            w,
          ),
        );
        // A value the launch fixed holds in every instantiation (read with the template's parameters
        // unknown, it depends on none of them); the rest are read anew from the replaced text. The
        // text alone cannot tell: a value a macro's body writes reads as the macro's use (`LAUNCH(T, 64)`).
        const values = replaced.map((_, k) => l.templateArgValues?.[k] ?? null);
        if (add(replaced, values, l)) any = true;
      }
      if (any) continue;
    }
    if (!add(written, l.templateArgValues ?? null, l)) symbolic.push(l);
  }
  if (mine.length === 0 && from) for (const inst of from.program.instantiationsOf(pf)) add(inst, null, null);
  const out: Instance[] = [];
  for (const g of mostDistinct([...groups.values()], MAX_INSTANCES))
    out.push({
      bindings: kernelScope(pf, g.args).bindings as Map<string, TemplateBinding>,
      launches: g.launches,
      label: g.label,
      args: boundArguments(pf, g.launches),
    });
  if (out.length === 0 || symbolic.length > 0)
    out.push({
      bindings: kernelScope(pf).bindings as Map<string, TemplateBinding>,
      launches: symbolic,
      label: null,
      args: boundArguments(pf, symbolic),
    });
  return out;
}

/**
 * At most `max` of the groups, picked in turn as the one that adds the most argument values not yet
 * seen (`<float, 64>`, `<half, 128>` before `<half, 64>`), so that the instances read cover the
 * types and sizes the launches use. Those left out are not read at all: read with their parameters
 * unknown, they would report splits for values no launch makes.
 */
function mostDistinct<G extends { args: ReadonlyArray<TemplateBinding | undefined> }>(groups: G[], max: number): G[] {
  if (groups.length <= max) return groups;
  const seen = new Set<string>();
  const keys = groups.map((g) => g.args.map((a, k) => `${k}=${JSON.stringify(a ?? null)}`));
  const picked: G[] = [];
  const left = new Set(groups.keys());
  while (picked.length < max) {
    let best = -1;
    let bestNew = -1;
    for (const i of left) {
      const fresh = keys[i].filter((key) => !seen.has(key)).length;
      if (fresh > bestNew) [best, bestNew] = [i, fresh];
    }
    left.delete(best);
    picked.push(groups[best]);
    for (const key of keys[best]) seen.add(key);
  }
  return picked;
}

/** The function template a launch is written in, when it is one. */
function enclosingTemplate(from: InstanceContext, l: Launch): ProgramFunction | null {
  // A launch a macro writes is still in the function's body; one a wrapper makes is in the wrapper's.
  if (!l.enclosingFunction || l.through?.kind === 'wrapper') return null;
  const at = offsetAt(from.source, l.span.start);
  const fn = from.program
    .outline(from.path)
    .functions.find(
      (f) =>
        f.bodyAt !== null &&
        f.bodyAt[0] <= at &&
        at < f.bodyAt[1] &&
        (f.templateParams?.length ?? 0) > 0 &&
        f.name === lastComponent(l.enclosingFunction!),
    );
  return fn ? { file: from.path, fn } : null;
}

function integerLiteral(text: string | null | undefined): number | null {
  if (!text) return null;
  const m = /^(-?\d+)[uUlL]*$/.exec(text.trim());
  return m ? Number(m[1]) : null;
}

const SEVERITY: Record<BranchKind, number> = { 'warp-uniform': 0, tail: 1, divergent: 2 };

/** The uniformity of one instance of a kernel, for the block shapes its launches can run with. */
export function instanceUniformity(
  ctx: DivergenceContext,
  pf: ProgramFunction,
  instance: Instance,
): KernelUniformity | null {
  const launchable = instance.launches
    .map((l) => l.block.value)
    .filter(
      (d): d is Dim3 =>
        !!d && d.x * d.y * d.z <= MAX_BLOCK_THREADS && [d.x, d.y, d.z].every((n) => Number.isInteger(n) && n >= 1),
    );
  return withinStackOr(() =>
    keptKernelUniformity({
      program: ctx.program,
      fn: pf,
      bindings: instance.bindings,
      shapes: launchable,
      file: ctx.path,
      args: instance.args ?? [],
    }),
  );
}

/**
 * The branches of a kernel (or device function) read by the uniformity analysis, for each instance
 * its launches make (a template's parameters bound per instance): where instances disagree on a
 * branch, the one where it splits most is reported, named.
 */
function programBranches(
  ctx: DivergenceContext,
  kernel: Kernel,
  pf: ProgramFunction,
  launches: readonly Launch[],
  from: InstanceContext,
): Branch[] {
  const chosen = new MostSplit();
  for (const instance of instancesOf(pf, kernel, launches, from)) {
    const result = instanceUniformity(ctx, pf, instance);
    if (!result) continue;
    for (const b of instanceBranches(ctx, kernel, result, instance)) chosen.add(b);
  }
  return chosen.branches();
}

/** One branch per place and construct, read in several instances: the one where it splits most. */
class MostSplit {
  private readonly chosen = new Map<string, Branch>();

  add(b: Branch): void {
    const key = `${b.span.start.line}:${b.span.start.character}:${b.span.end.line}:${b.span.end.character}:${b.construct}`;
    const had = this.chosen.get(key);
    if (!had || SEVERITY[b.kind] > SEVERITY[had.kind]) this.chosen.set(key, b);
  }

  /** In the file's order. */
  branches(): Branch[] {
    return [...this.chosen.values()].sort(
      (a, b) => a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character,
    );
  }
}

function withinStackOr<T>(run: () => T): T | null {
  try {
    return run();
  } catch (error) {
    if (error instanceof RangeError && /call stack/i.test(error.message)) return null;
    throw error;
  }
}

function instanceBranches(
  ctx: DivergenceContext,
  kernel: Kernel,
  result: KernelUniformity,
  instance: Instance,
): Branch[] {
  const shapes = blockShapes(kernel, instance.launches, result.multiDimensional, ctx.defaultBlock);
  const tree = ctx.programTree ?? ctx.tree;
  const sites: BranchSite[] = [];
  for (const s of result.sites) {
    const site = branchSiteIn(tree, kernel.name, { ...s, cond: threadValueOf(ctx, s.cond) });
    if (site) sites.push(site);
  }
  // The cost model follows calls into the file's functions, found in the host tree.
  const views = new SyntaxViews(tree, tree !== ctx.tree ? ctx.tree : undefined);
  const functions = ctx.functions;
  const lookup = ctx.lookup;
  const verdicts = new Map<BranchSite, Verdict>();
  for (const site of sites) verdicts.set(site, classifySite(site, shapes.shapes));
  const divergentNodes = new Set(sites.filter((s) => verdicts.get(s)!.kind === 'divergent').map((s) => s.node.id));
  const nestedDivergent = (node: SyntaxNode) => divergentNodes.has(node.id);
  const body = tree.rootNode.descendantForIndex(offsetAt(ctx.source, kernel.bodySpan?.start ?? kernel.span.start));
  let bodyNode: SyntaxNode | null = body;
  while (bodyNode && bodyNode.type !== 'compound_statement') bodyNode = bodyNode.parent;
  const kernelCost =
    divergentNodes.size > 0 && bodyNode
      ? Math.max(1, estimateCost([bodyNode], { functions, lookup, nestedDivergent, views }).cost)
      : 1;
  const out: Branch[] = [];
  for (const site of sites) {
    const verdict = verdicts.get(site)!;
    if (verdict.basis === 'single-lane') continue;
    const branch = makeBranch(
      site,
      verdict,
      shapes,
      { kernelCost, functions, lookup, nestedDivergent, views },
      ctx.source,
      bodyNode,
    );
    out.push(
      instance.label
        ? { ...branch, assumptions: [`for the instance ${instance.label}`, ...branch.assumptions] }
        : branch,
    );
  }
  return out;
}

/**
 * The document's text as the program read it, to quote code from: a device pass's view keeps the
 * `#if __CUDA_ARCH__` code that the host pass's (`ctx.source`) blanks.
 */
export function analysedText(ctx: DivergenceContext): string {
  return ctx.program.file(ctx.path)?.view ?? ctx.source.text;
}

/** A value with where its thread dependence came from, placed in the document when it is there. */
function threadValueOf(ctx: DivergenceContext, v: TV): ThreadValue {
  if (!v.origin || v.origin.file !== ctx.path) return { sym: v.sym, origin: null };
  const [start, end] = v.origin.at;
  const text = analysedText(ctx).slice(start, end);
  return { sym: v.sym, origin: { text: oneLine(text), span: spanBetween(ctx.source, start, end) } };
}

function spanBetween(source: SourceText, start: number, end: number): Span {
  return { start: positionAt(source, start), end: positionAt(source, end) };
}

// ---------------------------------------------------------------------------
// Block shapes

export interface Shapes {
  shapes: Dim3[];
  known: boolean;
  assumptions: string[];
}

/** CUDA's limit on threads per block, on every architecture since sm_20. */
const MAX_BLOCK_THREADS = 1024;

export function blockShapes(
  kernel: Kernel,
  launches: readonly Launch[],
  multiDimensional: boolean,
  fallback?: Dim3,
): Shapes {
  const mine = launches.filter((l) => l.baseName === kernel.name && !l.inMacro);
  const known = new Map<string, Dim3>();
  // Lanes are simulated one by one: a block that cannot launch (over 1024 threads, a zero
  // dimension; launch-checks reports it) counts as unresolved, not as 241 million lanes.
  const launchable = (d: Dim3 | null): d is Dim3 =>
    !!d && [d.x, d.y, d.z].every((n) => Number.isInteger(n) && n >= 1) && d.x * d.y * d.z <= MAX_BLOCK_THREADS;
  for (const l of mine) if (launchable(l.block.value)) known.set(formatDim(l.block.value), l.block.value);
  const unresolved = mine.filter((l) => !launchable(l.block.value));
  const assumptions: string[] = [];
  if (known.size > 0) {
    if (unresolved.length > 0)
      assumptions.push(
        `checked for the launches with ${[...known.keys()].join(', ')} threads per block; ${unresolved.length} launch${unresolved.length > 1 ? 'es' : ''} with an unresolved block size (\`${unresolved[0].block.text}\`) not checked`,
      );
    return { shapes: [...known.values()], known: true, assumptions };
  }
  const shape = fallback ?? defaultBlockShape(multiDimensional);
  assumptions.push(
    `no launch of ${kernel.name} with a known block size in view: assumed ${formatDim(shape)} threads per block (blockDim.x a multiple of 32)`,
  );
  return { shapes: [shape], known: false, assumptions };
}

interface CostSetup {
  /** Issue slots of the kernel body's one pass (estimated). */
  kernelCost: number;
  functions: FunctionTable;
  lookup: Lookup;
  nestedDivergent: (node: SyntaxNode) => boolean;
  views: SyntaxViews;
}

const oneLine = oneLineOfCode;

/** Statements that run their body again: a branch under one may be passed many times by a thread. */
const REPEATING: ReadonlySet<string> = new Set([
  'for_statement',
  'for_range_loop',
  'while_statement',
  'do_statement',
  'lambda_expression',
]);

/** Whether `node` stands in `body` (the kernel's) outside every loop and lambda there. */
function oncePerThread(node: SyntaxNode, body: SyntaxNode | null): boolean {
  if (!body) return false;
  for (let n = node.parent; n; n = n.parent) {
    if (n.id === body.id) return true;
    if (REPEATING.has(n.type)) return false;
  }
  return false;
}

function makeBranch(
  site: BranchSite,
  verdict: Verdict,
  shapes: Shapes,
  setup: CostSetup,
  source: SourceText,
  kernelBody: SyntaxNode | null,
): Branch {
  const spanOf = (node: SyntaxNode) => withinLines(source, spanOfNode(node));
  const estimates = site.paths.map((p) => estimateCost(p.nodes, setup));
  const paths: BranchPath[] = site.paths.map((p, i) => ({
    label: p.label,
    cost: estimates[i].cost,
    spans: p.nodes.map(spanOf),
    ...(estimates[i].loops ? { loops: true } : {}),
    ...(estimates[i].repeats ? { repeats: true } : {}),
  }));
  const divergent = verdict.kind === 'divergent';
  let concurrentPaths: number[][];
  if (!divergent) concurrentPaths = paths.map((_, i) => [i]);
  else if (site.construct === 'switch' && verdict.outcomeSets.length > 0 && verdict.basis !== 'data') {
    concurrentPaths = verdict.outcomeSets
      .map((set) => set.map(Number).filter((i) => Number.isInteger(i) && i < paths.length))
      .filter((s) => s.length > 0);
    if (concurrentPaths.length === 0) concurrentPaths = [paths.map((_, i) => i)];
  } else concurrentPaths = [paths.map((_, i) => i)];
  const firstPathIsFalse = site.construct === 'return' || site.construct === 'break' || site.construct === 'continue';
  const laneActivity =
    divergent && verdict.trueFraction !== null
      ? round(firstPathIsFalse ? 1 - verdict.trueFraction : verdict.trueFraction)
      : undefined;
  const notes = [...new Set(estimates.flatMap((e) => e.notes))];
  const predicable = ['if', 'else-if', 'ternary', 'short-circuit'].includes(site.construct);
  const totalStatements = estimates.reduce((s, e) => s + e.statements, 0);
  const likelyPredicated =
    predicable &&
    !estimates.some((e) => e.complex) &&
    totalStatements <= 4 &&
    estimates.reduce((s, e) => s + e.cost, 0) <= 16;
  const assumptions = [
    ...(verdict.dependsOnShape && verdict.basis === 'lanes' ? shapes.assumptions : []),
    ...verdict.notes,
    ...(divergent
      ? [
          'path costs are estimates from the syntax tree (about one instruction per operator, load, store or call)',
          ...notes,
        ]
      : []),
  ];
  const origin = site.condition.origin ?? { text: oneLine(site.conditionNode.text), span: spanOf(site.conditionNode) };
  const branch: Branch = {
    kernel: site.kernel,
    kind: verdict.kind,
    construct: site.construct,
    condition: oneLine(site.conditionNode.text),
    span: spanOf(site.node),
    conditionSpan: spanOf(site.conditionNode),
    source: { text: origin.text, span: withinLines(source, origin.span) },
    paths,
    concurrentPaths,
    divergedCost: 0,
    idealCost: 0,
    efficiency: 1,
    idleIssueSlots: 0,
    kernelIssueSlots: setup.kernelCost,
    ...(laneActivity !== undefined ? { laneActivity } : {}),
    ...(verdict.split
      ? { split: { ...verdict.split, groups: verdict.split.groups && [...verdict.split.groups] } }
      : {}),
    costSource: 'syntax-estimate',
    likelyPredicated,
    ...(divergent && (site.construct === 'if' || site.construct === 'else-if') && armsMerge(site.paths)
      ? { mergedArms: true as const }
      : {}),
    ...(divergent && site.construct !== 'loop' && oncePerThread(site.node, kernelBody)
      ? { oncePerThread: true as const }
      : {}),
    explanation: '',
    suggestion: null,
    assumptions: [...new Set(assumptions)],
  };
  return finish(branch, verdict.basis, shapes.known);
}

/** Recompute the totals, the explanation and the suggestion from the paths. */
export function finish(branch: Branch, basis: Verdict['basis'] | null, shapesKnown: boolean): Branch {
  const costs = branch.paths.map((p) => p.cost);
  const idealCost = Math.max(0, ...costs);
  const divergedCost = Math.max(
    idealCost,
    ...branch.concurrentPaths.map((set) => set.reduce((s, i) => s + (costs[i] ?? 0), 0)),
  );
  const efficiency = divergedCost > 0 ? round(idealCost / divergedCost) : 1;
  const b: Branch = {
    ...branch,
    idealCost,
    divergedCost,
    efficiency,
    idleIssueSlots: branch.kind === 'divergent' ? idleSlots(branch, costs) : 0,
  };
  b.explanation = explain(b, basis, shapesKnown);
  b.suggestion = suggest(b);
  return b;
}

/**
 * Issue slots a split warp spends with lanes idle that regrouping the work could give back: each
 * path's cost times the share of lanes not on it. The first path's share is `laneActivity` (the
 * body, the next iteration, the rest after an early exit), half when the split follows data; a
 * switch's cases share a split warp equally. A path that one lane of the warp takes (a leader's
 * store, a serial step; counted among the lanes the warp has there) counts nothing: the warp
 * issues it once however many lanes run it (the sum of the paths is their maximum), and no
 * grouping of lanes makes a serial step parallel.
 */
function idleSlots(b: Branch, costs: number[]): number {
  if (b.construct === 'switch') {
    const set = b.concurrentPaths.reduce(
      (a, c) => (c.reduce((s, i) => s + (costs[i] ?? 0), 0) > a.reduce((s, i) => s + (costs[i] ?? 0), 0) ? c : a),
      b.concurrentPaths[0] ?? [],
    );
    return round(set.length > 1 ? set.reduce((s, i) => s + (costs[i] ?? 0) * (1 - 1 / set.length), 0) : 0);
  }
  const first = b.laneActivity ?? 0.5;
  const shares = [first, 1 - first];
  // One lane of the lanes the warp has there: a block under 32 threads, or lanes an outer guard
  // left, is a partial warp, where one lane of two is still one lane.
  const present = b.split?.groups?.reduce((s, g) => s + g, 0) || 32;
  const oneLane = 1.5 / present;
  return round(costs.reduce((s, c, i) => s + ((shares[i] ?? 0) < oneLane ? 0 : c * (1 - (shares[i] ?? 0))), 0));
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
