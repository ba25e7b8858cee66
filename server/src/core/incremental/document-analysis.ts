/**
 * A document's facts (facts/document-facts.ts), computed so that an edit pays only for what it
 * touched: each launch's target and findings per launch object while what they were read from
 * stays the same, and each kernel's body passes per kernel (kernel-analysis-cache.ts). The passes themselves compute from scratch; this
 * module decides what to reuse.
 *
 * An editor's first pass may leave kernel bodies for later (a time budget, measured with the clock
 * the caller gives): `resume` completes the same version, first the kernel a request waits for.
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { Kernel, Launch, MemoryParallelism, Position, SmemOptIn, Span } from '../types';
import { contains, makeSourceText, offsetAt, positionAt, type SourceText } from '../text/source-text';
import type { Lookup } from '../text/const-eval';
import type { WorkspaceIndex } from '../facts/workspace-index';
import { checkLaunch, joinWarpMultipleFindings, type ArchSmemLimit, type LaunchTarget } from '../facts/launch-checks';
import { groupBy, type DocumentFacts } from '../facts/document-facts';
import { collectParseErrors } from '../syntax/parse-errors';
import { subtreeShape } from '../syntax/subtree-shape';
import { memoryParallelismOf, withinStack } from '../body/body-passes';
import { memoryRecordsOf, type MemoryRecord } from '../body/memory-rules';
import {
  deviceFunctionBranches,
  divergenceOf,
  prepareDivergence,
  uncalledDeviceRoots,
  type Branch,
  type DivergenceContext,
} from '../body/divergence';
import { lazyFunctions, type FunctionTable } from '../body/syntax-functions';
import { deviceDiffers, documentView, unitFacts, type DocumentView, type UnitContext } from './unit-facts';
import { UnitProgram } from '../program/program';
import type { SnippetParser } from '../ir/macro-hooks';
import { calleesKey, hash, kernelKey, type BodyContext, type KernelAnalysisCache } from './kernel-analysis-cache';
import { counter, memoWhileSame, objectTable } from './kept-tables';
import { sameItems } from './same-items';

export type { DocumentFacts } from '../facts/document-facts';

export interface AnalyzeInput {
  uri: string;
  version: number;
  text: string;
  tree: Tree | null;
  /** Constants from included headers and the rest of the workspace (used after `workspace`'s). */
  workspaceLookup?: Lookup;
  /** The workspace index: kernels and constants of included headers and other files. */
  workspace?: WorkspaceIndex;
  /** The key `workspace` knows this document by (default: `uri`). */
  path?: string;
  /** Target architectures' opt-in shared memory maxima, for `dynamic-smem-over-limit`. */
  archs?: readonly ArchSmemLimit[];
  /** Classify thread-index branches (default true). */
  divergence?: boolean;
  /** Per-kernel results of the previous versions of this document (see kernel-analysis-cache.ts). */
  cache?: KernelAnalysisCache;
  /** The kernels read from the previous versions of this document, by what each is read from (see function-keys.ts). */
  functions?: KernelAnalysisCache;
  /**
   * Milliseconds for the kernel-body passes of kernels not in `cache` (default: no limit). The
   * rest are counted in `pendingKernels` and analysed by the next call for the same version.
   * Measured with `clock`; without one there is no budget.
   */
  treePassBudgetMs?: number;
  /** Milliseconds from some fixed point (the server's `performance.now`), for `treePassBudgetMs`. */
  clock?: () => number;
  /** The other files of the document's translation unit, its flags, and which unit a header is read in. */
  unit?: UnitContext;
  /** The same for another workspace file read as its own unit (where a function the unit declares is defined). */
  unitOf?: (path: string) => UnitContext;
  /** The document's view, when the caller has worked it out already (it parsed `view.parseView` into `tree`). */
  view?: DocumentView;
  /** Parses macro expansions and other files' functions apart. */
  parser?: SnippetParser;
  /** The texts of an earlier version of the document, as read (see ResumableAnalysis.texts): only the lines around an edit are masked again. */
  previous?: ReadTexts;
}

/** A version's text as written and the text its tree was parsed from, each with its masked copy and lines. */
export interface ReadTexts {
  source: SourceText;
  parsed: SourceText;
}

export function analyzeDocument(input: AnalyzeInput): DocumentFacts {
  return analyzeResumable(input).facts;
}

export interface ResumableAnalysis {
  facts: DocumentFacts;
  /**
   * Analyse more of the kernel bodies left pending, for at most `budgetMs`, first the one around
   * `at` (a hover waits for it): the same version's facts, completed further. Null when nothing is
   * pending. It reads the syntax tree the analysis was given: drop it when that tree is edited or deleted.
   */
  resume: ((budgetMs: number, at?: Position) => ResumableAnalysis) | null;
  /** The texts read, for the next version's `previous`. */
  texts: ReadTexts;
}

/** analyzeDocument, keeping what the kernel-body passes need to go on later without reading the text again. */
export function analyzeResumable({
  uri,
  version,
  text,
  tree,
  workspace,
  path,
  archs,
  divergence = true,
  cache,
  functions,
  treePassBudgetMs = Infinity,
  clock,
  unit,
  unitOf,
  view,
  parser,
  previous,
}: AnalyzeInput): ResumableAnalysis {
  const source = makeSourceText(text, previous?.source);
  const key = path ?? uri;
  const doc = view ?? documentView(key, text, unit);
  const read = parser
    ? unitFacts({ doc, source, tree, parser, workspace, kept: functions, unitOf })
    : {
        kernels: [],
        launches: [],
        launchTargets: [],
        smemOptIns: [],
        lookup: () => null,
        program: null,
      };
  const { kernels, launches, launchTargets, smemOptIns, lookup } = read;
  const optInsInView = workspace
    ? [...smemOptIns, ...workspace.includeClosure(key).flatMap((p) => workspace.smemOptInsOf(p))]
    : smemOptIns;
  // The body passes read the text the tree was parsed from (its lines and offsets are the document's).
  const parsed = makeSourceText(doc.parseView, previous?.parsed);
  const outerKey = workspace ? `${key}@${workspace.changesOutside(key)}` : '-';
  const passes: TreePassInput = {
    source: parsed,
    view: doc.view,
    tree,
    kernels,
    // A header's kernels take their includer's launches in the body passes (divergence.ts, `includer`).
    launches,
    lookup,
    divergence,
    cache,
    version,
    clock: clock ?? (() => 0),
    memo: { body: once(() => bodyContextOf(doc, parsed, read.program, outerKey)), keys: new Map(), calls: 0 },
    program: read.program,
    path: doc.path,
    device: deviceReading(read.program, tree, doc, { key, text, unit, parser, archs }),
  };
  const facts: DocumentFacts = {
    uri,
    version,
    source,
    kernels,
    launches,
    launchTargets,
    smemOptIns,
    findings: launchFindings(launches, launchTargets, optInsInView, archs ?? []),
    ...treePasses(passes, clock ? treePassBudgetMs : Infinity),
    parseErrors: tree ? collectParseErrors(tree, parsed) : [],
  };
  passes.device.release();
  read.program?.dispose();
  return resumable(facts, passes);
}

/** A value worked out on first use, then kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | null = null;
  return () => (made ??= { value: make() }).value;
}

/**
 * What the kernel-body passes depend on besides each kernel's text: the document's device
 * functions and its other functions' names, its constants and macros, and the rest of the unit
 * (the workspace's state), as keys.
 */
function bodyContextOf(
  doc: DocumentView,
  parsed: SourceText,
  program: UnitProgram | null,
  outerKey: string,
): BodyContext {
  const outline = program?.outline(doc.path) ?? { functions: [], constants: [], records: [] };
  const deviceFunctions = new Map<string, string[]>();
  const places: string[] = [];
  for (const fn of outline.functions) {
    if (!fn.device || !fn.bodyAt) continue;
    const body = parsed.text.slice(fn.at[0], fn.at[1]).replace(/\s+/g, ' ');
    const list = deviceFunctions.get(fn.name);
    if (list) list.push(body);
    else deviceFunctions.set(fn.name, [body]);
    places.push(`${fn.name}@${positionAt(parsed, fn.at[0]).line}`);
  }
  const devicesKey = hash([...deviceFunctions].map(([n, b]) => `${n}:${b.join('\n')}`).join('\n'));
  const constants = outline.constants.map(
    (c) => `${c.qualified}=${c.initAt ? parsed.text.slice(c.initAt[0], c.initAt[1]) : ''}`,
  );
  const directives =
    doc.unit.files
      .get(doc.path)
      ?.regions.filter((r) => r.directive)
      .map((r) => doc.unit.files.get(doc.path)!.text.slice(r.start, r.end)) ?? [];
  // Explicit instantiations (`template __global__ void k<float, 2>(...)`) make a kernel's instances.
  const instantiations = (outline.instantiations ?? []).map(
    (i) => `${i.scope.join('::')}::${i.name}<${i.args?.join(',') ?? ''}>(${i.paramTypes.join(',')})`,
  );
  return {
    contextKey: hash([outerKey, ...directives, ...constants, ...instantiations].join('\n')),
    deviceFunctions,
    devicesKey,
    devicePlaces: places.join(','),
    functionNames: new Set(outline.functions.map((f) => f.name)),
    functionNamesKey: hash(outline.functions.map((f) => f.name).join('\n')),
  };
}

function resumable(facts: DocumentFacts, passes: TreePassInput): ResumableAnalysis {
  return {
    facts,
    texts: { source: facts.source, parsed: passes.source },
    resume:
      facts.pendingKernels > 0
        ? (budgetMs, at) => {
            const more = treePasses(passes, budgetMs, at);
            // What the program parsed apart for this call is freed; a later call parses what it needs again.
            passes.device.release();
            passes.memo.divergence = undefined;
            passes.program?.dispose();
            return resumable({ ...facts, ...more }, passes);
          }
        : null,
  };
}

interface TreePassInput {
  source: SourceText;
  /** The document's view (inactive lines blanked, attributes kept: what marks a device lambda). */
  view: string;
  tree: Tree | null;
  kernels: Kernel[];
  launches: Launch[];
  lookup: Lookup;
  divergence: boolean;
  cache?: KernelAnalysisCache;
  version: number;
  clock: () => number;
  /** What one call works out for the next ones on the same version. */
  memo: TreePassMemo;
  /** The unit's program and the document's path in it. */
  program: UnitProgram | null;
  path: string;
  /** The unit as a device pass reads it: kernel bodies are compiled there (`#if __CUDA_ARCH__`). */
  device: DeviceReading;
}

/** The document in a device pass, made when first asked and freed after each call (its tree is parsed apart). */
interface DeviceReading {
  get(): { program: UnitProgram; tree: Tree } | null;
  release(): void;
}

/** The architecture of the device pass kernel bodies are read in: the first target's (default sm_80). */
function deviceArch(archs: readonly ArchSmemLimit[] | undefined): number {
  const m = /(\d+)/.exec(archs?.[0]?.arch ?? '');
  return m ? Number(m[1]) * 10 : 800;
}

function deviceReading(
  host: UnitProgram | null,
  tree: Tree | null,
  doc: DocumentView,
  input: { key: string; text: string; unit?: UnitContext; parser?: SnippetParser; archs?: readonly ArchSmemLimit[] },
): DeviceReading {
  let made: { program: UnitProgram; tree: Tree; own: boolean } | null | undefined;
  return {
    get() {
      if (made !== undefined) return made;
      if (!host || !tree || !input.parser) return (made = null);
      // Nothing in the unit tests `__CUDA_ARCH__`: the host pass reads the bodies as a device pass would.
      if (!deviceDiffers(doc)) return (made = { program: host, tree, own: false });
      const device = documentView(input.key, input.text, input.unit, deviceArch(input.archs));
      if (device.parseView === doc.parseView && device.unit.files.size === doc.unit.files.size)
        return (made = { program: host, tree, own: false });
      const deviceTree = input.parser.parseApart(device.parseView);
      return (made = {
        program: new UnitProgram(device.unit, input.parser, [
          { path: device.path, view: device.parseView, tree: deviceTree },
        ]),
        tree: deviceTree,
        own: true,
      });
    },
    release() {
      if (made?.own) {
        made.program.dispose();
        made.tree.delete();
      }
      made = undefined;
    },
  };
}

interface TreePassMemo {
  /**
   * The file around the kernels (see BodyContext): the file context of every kernel's cache key, the
   * device functions a kernel's key adds when it calls them, where they start, the names of the
   * file's functions. Worked out when a kernel body is first read or keyed.
   */
  body: () => BodyContext;
  keys: Map<Kernel, KernelKeys | null>;
  divergence?: DivergenceContext;
  /** The file's functions as the body passes follow them, read from the tree when first asked (by a kernel's key or the divergence pass). */
  functions?: FunctionTable;
  /** Calls so far on this version (see treePasses). */
  calls: number;
}

/**
 * The passes over kernel bodies (memory-level parallelism, divergence). With a
 * cache, a kernel whose text, launches and file context did not change takes
 * its results from the previous version, shifted to its new lines.
 *
 * With a time budget, kernels not in the cache are analysed until it is spent;
 * the others are left `pending` and analysed by the next call for the same
 * version (their results are kept in the cache under the version's key), so
 * a first hover on a large file does not wait for every kernel body.
 */
function treePasses(
  {
    source,
    view,
    tree,
    kernels,
    launches,
    lookup,
    divergence,
    cache,
    version,
    clock,
    memo,
    path,
    device,
    program,
  }: TreePassInput,
  budgetMs: number,
  at?: Position,
): Pick<DocumentFacts, 'memoryParallelism' | 'branches' | 'memory' | 'pendingKernels'> {
  if (!tree) return { memoryParallelism: [], branches: [], memory: [], pendingKernels: 0 };
  const started = clock();
  const budget = cache ? budgetMs : Infinity; // without a cache nothing carries over to a next call
  // A newly opened document has nothing in its cache: the kernels left to later calls need no key yet.
  const nothingCached = cache?.size === 0;
  // Each pass analyses at least one kernel per call: repeated calls always finish, and the kernel
  // a keystroke changed (the only one not in the cache) is always analysed at once. Not the first
  // call on a newly opened document without a budget: its first kernel is no more wanted than the
  // others, and a first hover waits for that call; the next calls (the background) take them all.
  const mustProgress = !(nothingCached && budget <= 0 && memo.calls === 0);
  memo.calls++;
  let progressed = false;
  const inBudget = () => (mustProgress && !progressed) || clock() - started < budget;
  const definitions = kernels.filter((k) => k.isDefinition);
  // The kernel around `at` first: the one call it takes is spent on it.
  const wanted = at ? definitions.find((k) => contains(k.span, at)) : undefined;
  const inOrder = wanted ? [wanted, ...definitions.filter((k) => k !== wanted)] : definitions;
  // With a parse error, error recovery can reshape a kernel whose text did not change (an
  // unclosed `<<<` above it). A kernel is reused only when its text is exactly one definition
  // node, and the key names that node's shape where it holds an error of its own (a macro used as
  // a loop header, `CUDA_KERNEL_LOOP(i, n) {`, reads as a call missing its `;`): the tree is the
  // one a fresh parse gives (see cuda-parser.ts), so the same text and shape read the same.
  const launchesOf = groupBy(launches, (l) => l.baseName);
  const hasError = tree.rootNode.hasError;
  // tree-sitter builds an item with an error again on every parse: its shape is read each time.
  const shapeOf = (node: SyntaxNode) => hash(subtreeShape(node));
  const keyOf = (k: Kernel): KernelKeys | null => {
    if (!memo.keys.has(k)) {
      const node = hasError ? definitionNode(tree, source, k) : null;
      const context = cache ? memo.body().contextKey : '';
      memo.keys.set(
        k,
        !hasError || node
          ? keysFor(
              k,
              source,
              tree,
              launchesOf.get(k.name) ?? [],
              node?.hasError ? `${context}|shape:${shapeOf(node)}` : context,
              memo,
              !hasError,
            )
          : null,
      );
    }
    return memo.keys.get(k)!;
  };
  // A kernel that cannot be reused across versions is still kept for the next call on this version.
  const thisVersion = (k: Kernel) => `v${version}|${k.span.start.line}:${k.span.start.character}|${k.name}`;
  const pending = new Set<Kernel>();

  // Its reasoning names lines, so it is reused only where the kernel did not move.
  const found = new Map<Kernel, MemoryParallelism>();
  for (const k of inOrder) {
    if (nothingCached && !inBudget()) {
      pending.add(k);
      continue;
    }
    const key = cache ? (keyOf(k)?.memoryParallelism ?? `mp|${k.span.start.line}|${thisVersion(k)}`) : null;
    const cached = key ? cache!.get<MemoryParallelism>(key, k.span.start.line) : undefined;
    if (cached) {
      found.set(k, cached);
      continue;
    }
    if (!inBudget()) {
      pending.add(k);
      continue;
    }
    const value = memoryParallelismOf(k, tree, source, lookup);
    countBodyPass();
    progressed = true;
    if (key) cache!.set(key, k.span.start.line, value);
    found.set(k, value);
  }
  const memoryParallelism = definitions.filter((k) => found.has(k)).map((k) => found.get(k)!);

  let branches: Branch[] = [];
  const memory: MemoryRecord[] = [];
  progressed = false;
  if (divergence) {
    // Branch costs also follow calls into the file's functions, which an error elsewhere can
    // swallow into an ERROR node while their text (the context key) stays the same: with an
    // error, a kernel's branches are kept only while every function its passes may follow is
    // found as the same definition (see calleeNodesKey).
    const divKeyOf = hasError ? (k: Kernel) => withCalleeNodes(k, keyOf(k), source, tree, memo, shapeOf) : keyOf;
    // Where a kernel's branches are kept: across versions under its key, or (branches in a device
    // function it calls stay where that function is) while the kernel and every device function
    // start on the same lines; without a key, for the next call on this version. Each kernel is
    // analysed alone, overloads and specialisations that share its name included.
    const keysOf = (k: Kernel): [string, string] => {
      const across = divKeyOf(k);
      return across
        ? [across.branchesMoving, across.branchesInPlace]
        : [`div|${thisVersion(k)}`, `div|${thisVersion(k)}`];
    };
    const reused: Branch[] = [];
    const fresh: Kernel[] = [];
    for (const k of inOrder) {
      if (nothingCached) {
        fresh.push(k);
        continue;
      }
      const [moving, inPlace] = keysOf(k);
      const cached =
        cache?.get<Branch[]>(moving, k.span.start.line) ?? cache?.get<Branch[]>(inPlace, k.span.start.line);
      if (cached) reused.push(...cached);
      else fresh.push(k);
    }
    const computed: Branch[] = [];
    // Prepared for this call's kernels: a later call on the same version has fewer left, all among them.
    // Without the unit's program (no parser) there is nothing to read kernels through.
    const context = (): DivergenceContext | null => {
      if (memo.divergence) return memo.divergence;
      const reading = device.get();
      if (!reading) return null;
      return (memo.divergence = prepareDivergence({
        source,
        view,
        tree,
        launches,
        lookup,
        functions: functionsOf(tree, memo),
        program: reading.program,
        programTree: reading.tree,
        path,
      }));
    };
    const analyse = (batch: Kernel[]) =>
      withinStack(
        () => {
          const ctx = context();
          return ctx ? divergenceOf(ctx, batch) : [];
        },
        () => [],
      );
    const queue = [...fresh];
    while (queue.length > 0 && inBudget()) {
      const k = queue.shift()!;
      const own = analyse([k]);
      countBodyPass();
      progressed = true;
      computed.push(...own);
      // Branches in a __device__ function sit outside the kernel: they do not move with it.
      const movesWithKernel = own.every(
        (b) => b.span.start.line >= k.span.start.line && b.span.end.line <= k.span.end.line,
      );
      const [moving, inPlace] = keysOf(k);
      cache?.set(movesWithKernel ? moving : inPlace, k.span.start.line, own);
    }
    for (const k of queue) pending.add(k);
    // Once every kernel is read: the __device__ functions nothing in the file calls (a header's
    // helpers), each kept across versions while its text and the file's context stay the same.
    const ctx =
      queue.length === 0 &&
      (/\b__device__\b/.test(view) || !!program?.outline(path).functions.some((f) => f.device && !f.global))
        ? context()
        : null;
    if (ctx) {
      for (const root of withinStack(
        () => uncalledDeviceRoots(ctx),
        () => [],
      )) {
        const line = root.node.startPosition.row;
        // A function with an error inside reads as error recovery shaped it: kept by that shape too.
        const shape = root.node.hasError ? `|shape:${shapeOf(root.node)}` : '';
        // Its costs follow calls into the file's device functions, and, with a parse error anywhere,
        // into what error recovery made of the rest of the file: kept for this version only then.
        const elsewhere = tree.rootNode.hasError ? `|v${version}` : '';
        const key = cache
          ? `div|device|${memo.body().contextKey}|${memo.body().devicesKey}|${hash(source.text.slice(root.node.startIndex, root.node.endIndex))}${shape}${elsewhere}`
          : null;
        const kept = key ? cache!.get<Branch[]>(key, line) : undefined;
        if (kept) {
          computed.push(...kept);
          continue;
        }
        const found = withinStack(
          () => deviceFunctionBranches(ctx, root),
          () => [],
        );
        if (key) cache!.set(key, line, found);
        computed.push(...found);
      }
    }
    branches = [...reused, ...computed].sort(byPlace);
    // The memory and barrier rules read the same analysis of each kernel (kept while the program
    // lives): kept across versions beside its branches, under keys of their own.
    for (const k of inOrder) {
      if (pending.has(k)) continue;
      const [moving, inPlace] = keysOf(k).map((key) => `mem|${key}`);
      const cached = nothingCached
        ? undefined
        : (cache?.get<MemoryRecord[]>(moving, k.span.start.line) ??
          cache?.get<MemoryRecord[]>(inPlace, k.span.start.line));
      if (cached) {
        memory.push(...cached);
        continue;
      }
      const ctx = context();
      if (!ctx) break;
      const own = withinStack(
        () => memoryRecordsOf(ctx, [k]),
        () => [],
      );
      // A record whose message names the line of an access in a device function it calls does not
      // move with the kernel alone either.
      const inKernel = (s: Span) => s.start.line >= k.span.start.line && s.end.line <= k.span.end.line;
      const movesWithKernel = own.every((r) => inKernel(r.span) && (!r.reaches || inKernel(r.reaches)));
      cache?.set(movesWithKernel ? moving : inPlace, k.span.start.line, own);
      memory.push(...own);
    }
    memory.sort((a, b) => a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character);
  }
  cache?.sweep();
  return { memoryParallelism, branches, memory, pendingKernels: pending.size };
}

/**
 * Branches in file order; at one place (a device function two kernels reach, or kernels that error
 * recovery nested), by kernel and construct: whichever came from the cache, the same order a fresh
 * analysis gives.
 */
function byPlace(a: Branch, b: Branch): number {
  const text = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return (
    a.span.start.line - b.span.start.line ||
    a.span.start.character - b.span.start.character ||
    text(a.kernel, b.kernel) ||
    text(a.construct, b.construct) ||
    a.span.end.line - b.span.end.line ||
    a.span.end.character - b.span.end.character ||
    text(a.condition, b.condition)
  );
}

/**
 * A kernel's branch keys with a parse error in the file: the keys (null when the kernel is not one
 * definition node), each made to also name the definitions its passes may follow.
 */
function withCalleeNodes(
  kernel: Kernel,
  keys: KernelKeys | null,
  source: SourceText,
  tree: Tree,
  memo: TreePassMemo,
  shapeOf: (node: SyntaxNode) => string,
): KernelKeys | null {
  if (!keys) return null;
  const nodes = calleeNodesKey(kernel, source, tree, memo, shapeOf);
  return {
    ...keys,
    branchesMoving: `${keys.branchesMoving}|${nodes}`,
    branchesInPlace: `${keys.branchesInPlace}|${nodes}`,
  };
}

/** A name written as a call (`f(`, `f<T>(`), as calleesKey reads them. */
const CALL = /\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>\s*)?\(/g;

/**
 * The definitions the body passes of a kernel may follow, as this version's tree has them: for
 * each name its body (and theirs, in turn) calls, the function the tree finds by that name, free
 * or member, by its text, and by its shape where it has an error inside. Two trees that find the
 * same definitions give the walk the same subtrees, whatever error recovery did elsewhere.
 */
function calleeNodesKey(
  kernel: Kernel,
  source: SourceText,
  tree: Tree,
  memo: TreePassMemo,
  shapeOf: (node: SyntaxNode) => string,
): string {
  const functions = functionsOf(tree, memo);
  const seen = new Set<string>();
  const parts: string[] = [];
  const visit = (text: string) => {
    for (const m of text.matchAll(CALL)) {
      const name = m[1];
      if (seen.has(name)) continue;
      seen.add(name);
      for (const key of [name, `.${name}`, `.${name}#2`, `.${name}#3`, `.${name}#4`]) {
        const node = functions.get(key);
        if (!node) continue;
        const body = source.text.slice(node.startIndex, node.endIndex);
        const shape = node.hasError ? `:shape:${shapeOf(node)}` : '';
        parts.push(`${key}@${node.startPosition.column}:${hash(body)}${shape}`);
        visit(body);
      }
    }
  };
  visit(
    kernel.bodySpan
      ? source.text.slice(offsetAt(source, kernel.bodySpan.start), offsetAt(source, kernel.bodySpan.end))
      : '',
  );
  return hash(parts.join('\n'));
}

/** Kernel bodies analysed (memory-level parallelism, divergence), for tests of what an edit re-analyses. */
const countBodyPass = counter('kernel body passes');

/** The kernel's definition when its text is exactly one syntax node (its definition, possibly in a template), else null. */
function definitionNode(tree: Tree, source: SourceText, kernel: Kernel): SyntaxNode | null {
  const start = offsetAt(source, kernel.span.start);
  const end = offsetAt(source, kernel.span.end);
  const node = tree.rootNode.descendantForIndex(start, Math.max(start, end - 1));
  return node !== null &&
    node.startIndex === start &&
    node.endIndex === end &&
    /^(function_definition|template_declaration|linkage_specification)$/.test(node.type)
    ? node
    : null;
}

/** A kernel's keys in the cache (see treePasses): its memory parallelism, and its branches across versions or where they are. */
interface KernelKeys {
  memoryParallelism: string;
  branchesMoving: string;
  branchesInPlace: string;
}

interface KeptKeys extends KernelKeys {
  line: number;
  context: string;
  devicePlaces: string;
  callees: string;
  launches: readonly Launch[];
}

interface CheckInputs {
  target: LaunchTarget;
  smemOptIns: readonly SmemOptIn[];
  archs: readonly ArchSmemLimit[];
  archsKey: string;
}

/** A launch's findings are kept while its target, the opt-ins in view and the archs stay the same: a keystroke checks only the launches it changed. */
const keptChecks = memoWhileSame(
  'launch findings',
  (kept: CheckInputs, now: CheckInputs) =>
    kept.target === now.target && kept.archsKey === now.archsKey && sameItems(kept.smemOptIns, now.smemOptIns),
  (launch: Launch, { target, smemOptIns, archs }: CheckInputs) => checkLaunch({ launch, target, smemOptIns, archs }),
);

function launchFindings(
  launches: readonly Launch[],
  targets: readonly LaunchTarget[],
  smemOptIns: readonly SmemOptIn[],
  archs: readonly ArchSmemLimit[],
) {
  const archsKey = archs.map((a) => `${a.arch}:${a.maxOptInSmemBytes}`).join();
  return joinWarpMultipleFindings(
    launches,
    launches.map((launch, k) => keptChecks(launch, { target: targets[k], smemOptIns, archs, archsKey })),
  );
}

/**
 * The keys of a kernel kept from an earlier version, by kernel object (a chunk the edit did not
 * touch keeps its kernels), while what they are made of stays the same: a keystroke then builds
 * no key for the kernels it did not change. Not kept for a tree with errors (see treePasses).
 */
const keptKeys = objectTable<Kernel, KeptKeys>('kernel cache keys');

function keysFor(
  kernel: Kernel,
  source: SourceText,
  tree: Tree,
  launches: readonly Launch[],
  context: string,
  memo: TreePassMemo,
  keep: boolean,
): KernelKeys {
  const line = kernel.span.start.line;
  const callees = calleesOf(kernel, source, tree, memo);
  const kept = keep ? keptKeys.get(kernel) : undefined;
  const { devicePlaces } = memo.body();
  if (
    kept &&
    kept.line === line &&
    kept.context === context &&
    kept.devicePlaces === devicePlaces &&
    kept.callees === callees &&
    sameItems(kept.launches, launches)
  )
    return kept;
  const key = kernelKey(source, kernel, launches, `${context}|${callees}`);
  const keys: KeptKeys = {
    memoryParallelism: `mp|${line}|${key}`,
    branchesMoving: `div|${key}`,
    branchesInPlace: `div@${line}|${devicePlaces}|${key}`,
    line,
    context,
    devicePlaces,
    callees,
    launches,
  };
  if (keep) keptKeys.set(kernel, keys);
  return keys;
}

/**
 * calleesKey of a kernel, kept per kernel object while the file's device functions and the names
 * it may define stay the same, and the kernel calls none of its other functions (those are read
 * from each version's syntax tree).
 */
const keptCallees = objectTable<Kernel, { devicesKey: string; functionNamesKey: string; key: string }>(
  'kernel callee keys',
);

function calleesOf(kernel: Kernel, source: SourceText, tree: Tree, memo: TreePassMemo): string {
  const { devicesKey, deviceFunctions, functionNames, functionNamesKey } = memo.body();
  const kept = keptCallees.get(kernel);
  if (kept && kept.devicesKey === devicesKey && kept.functionNamesKey === functionNamesKey) return kept.key;
  // As the body passes find them: the first definition of the name, where it is and its text.
  const others = {
    mayDefine: (name: string) => functionNames.has(name),
    text: (name: string) => {
      const node = functionsOf(tree, memo).get(name);
      return node ? `${node.startPosition.row}:${source.text.slice(node.startIndex, node.endIndex)}` : null;
    },
  };
  // Its body: the header writes the kernel's own name as if called.
  const body = kernel.bodySpan
    ? source.text.slice(offsetAt(source, kernel.bodySpan.start), offsetAt(source, kernel.bodySpan.end))
    : '';
  const { key, usesOthers } = calleesKey(body, deviceFunctions, others);
  if (usesOthers) keptCallees.delete(kernel);
  else keptCallees.set(kernel, { devicesKey, functionNamesKey, key });
  return key;
}

/** The functions the body passes may follow into, one table per version (the tree is read once, when first asked). */
function functionsOf(tree: Tree, memo: TreePassMemo): FunctionTable {
  const { functionNames } = memo.body();
  return (memo.functions ??= lazyFunctions(tree.rootNode, (name) => functionNames.has(name)));
}
