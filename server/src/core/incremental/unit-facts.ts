/**
 * A document read in its translation unit: the unit's preprocessor (which lines are compiled,
 * which macros hold where), the text the grammar parses, and from the program of the unit the
 * document's kernels, its launches with the kernel each one starts, and the opt-ins to more
 * dynamic shared memory. Everything a later stage reads about the source comes from here.
 */
import type { Tree } from 'web-tree-sitter';
import type { Kernel, Launch, LaunchBounds, SmemOptIn } from '../types';
import type { SourceText } from '../text/source-text';
import { makeSourceText, positionAt, spanOf } from '../text/source-text';
import {
  preprocessUnit,
  type PreprocessedUnit,
  type Toolchain,
  type UnitFlags,
  type UnitSources,
} from '../preprocess/unit';
import { viewText } from '../preprocess/view';
import { mayBeSpecifierOnly, parseView } from '../preprocess/parse-view';
import { normalizePath } from '../preprocess/paths';
import { spell } from '../preprocess/tokens';
import { UnitProgram, type FunctionScope, type ProgramFunction, type TemplateBinding } from '../program/program';
import type { SnippetParser } from '../ir/macro-hooks';
import {
  LaunchCollector,
  kernelRefs,
  type Linker,
  type FunctionLaunches,
  type LaunchObservation,
  type OptInObservation,
} from '../facts/launch-sites';
import { launchFacts } from '../facts/launch-facts';
import { withTemplateInstances } from '../facts/template-instances';
import { kernelReader, kernelScope, readKernelsOf } from '../facts/kernel-reader';
import { hash, type KernelAnalysisCache } from './kernel-analysis-cache';
import { objectTable } from './kept-tables';
import { detach } from './engine-seams';
import { functionKeys, movedOffsets, type FunctionKeys } from './function-keys';
import { movedLaunches } from './moved-launches';
import { linkerOf } from './other-units';
import type { OutlineFunction } from '../program/outline';
import type { LaunchTarget } from '../facts/launch-checks';
import { matchKernel, type WorkspaceIndex } from '../facts/workspace-index';
import { paramsOf, single, type FnRef, type Val } from '../values/domain';
import type { Lookup } from '../text/const-eval';

/** What a document is read with beyond its own text. */
export interface UnitContext {
  /** The texts of the other files the unit may include. */
  sources: UnitSources;
  /** The translation unit to read the document in (a `.cu` that includes a header); default: the document's own. */
  main?: string | null;
  flags?: UnitFlags;
  toolchain?: Toolchain;
}

/** The document as its unit sees it. */
export interface DocumentView {
  path: string;
  unit: PreprocessedUnit;
  /** Inactive lines and directives blanked (positions are the document's). */
  view: string;
  /** What the grammar parses: `view` with what it cannot read blanked too (parse-view.ts). */
  parseView: string;
  /** The unit's inputs besides the document's text (the other files, flags, toolchain, pass), as a key. */
  othersKey: string;
}

/** The document's unit for the host pass (or a device pass: `__CUDA_ARCH__` = `arch`), and its views. */
export function documentView(path: string, text: string, ctx: UnitContext | undefined, arch?: number): DocumentView {
  const key = normalizePath(path);
  const read = (p: string) => (p === key ? text : (ctx?.sources.read(p) ?? null));
  const sources: UnitSources = { read, byTail: ctx?.sources.byTail };
  const pass = arch === undefined ? ({ kind: 'host' } as const) : ({ kind: 'device', arch } as const);
  const run = (main: string) => preprocessUnit({ main, sources, flags: ctx?.flags, toolchain: ctx?.toolchain, pass });
  let unit = run(ctx?.main ? normalizePath(ctx.main) : key);
  // A header the chosen unit does not reach (or reaches only in branches it does not compile): read it alone.
  let file = unit.files.get(key);
  if (!file || file.state === 'alternative' || file.state === 'inactive') {
    unit = run(key);
    file = unit.files.get(key)!;
  }
  const view = viewText(file);
  const others = [...unit.files]
    .filter(([p]) => p !== key)
    .map(([p, f]) => `${p}:${hash(f.text)}`)
    .join('\n');
  return {
    path: key,
    unit,
    view,
    parseView: parseView(view, (o) => unit.macrosAt(key, o), unit.macroNames, unit.macrosWhere(mayBeSpecifierOnly)),
    othersKey: hash(JSON.stringify([unit.main, unit.pass, ctx?.flags ?? null, ctx?.toolchain ?? null, others])),
  };
}

/**
 * Whether a device pass can read the document differently from the host pass: some file of its
 * unit tests `__CUDA_ARCH__` (kernel bodies are compiled in the device passes only).
 */
export function deviceDiffers(doc: DocumentView): boolean {
  for (const [path, file] of doc.unit.files)
    for (const r of file.regions)
      if (r.directive && /__CUDA_ARCH__/.test(file.text.slice(r.start, r.end))) {
        void path;
        return true;
      }
  return false;
}

export interface UnitFactsInput {
  doc: DocumentView;
  /** The document's text as written. */
  source: SourceText;
  /** A tree of `doc.parseView`. */
  tree: Tree | null;
  parser: SnippetParser;
  workspace?: WorkspaceIndex;
  /** The document's kernels of earlier versions, by what each is read from (see function-keys.ts). */
  kept?: KernelAnalysisCache;
  /**
   * What a workspace file is read with as its own unit: with `workspace`, the calls of functions
   * the unit declares but does not define are followed into the unit that defines them.
   */
  unitOf?: (path: string) => UnitContext;
}

export interface UnitFacts {
  program: UnitProgram;
  kernels: Kernel[];
  launches: Launch[];
  launchTargets: LaunchTarget[];
  smemOptIns: SmemOptIn[];
  /** Names at file scope as the unit resolves them (the body passes' constants). */
  lookup: Lookup;
}

export function unitFacts({ doc, source, tree, parser, workspace, kept, unitOf }: UnitFactsInput): UnitFacts {
  const program = new UnitProgram(doc.unit, parser, [{ path: doc.path, view: doc.parseView, tree }]);
  const keys = kept && tree && !tree.rootNode.hasError ? keysOf(program, doc, source) : null;
  const read = keptKernels(program, doc, source, keys?.keyOf ?? null, kept);
  const kernels = read.map((k) => k.kernel);
  const others = workspace && unitOf ? new OtherUnits(doc, workspace, unitOf, parser) : null;
  try {
    const collector = new LaunchCollector(program, others?.linker ?? null);
    const outside = workspace ? workspace.changesOutside(doc.path) : 0;
    // Each moved observation's kept original: what its launch and target are kept by.
    const origin = new Map<LaunchObservation, LaunchObservation>();
    const found = launchesOfDocument(program, doc, collector, keys, kept, outside, origin);
    kept?.sweep();
    const layout = keys ? layoutOf(keys.bodies, source) : null;
    const base = (o: LaunchObservation) => origin.get(o) ?? o;
    // The furthest offset the launch being made says the line or column of.
    let reach = -1;
    const observations = withTemplateInstances(found.observations, {
      path: doc.path,
      view: doc.parseView,
      functions: program.outline(doc.path).functions,
    });
    const launches = launchFacts(
      observations,
      {
        program,
        path: doc.path,
        source,
        programOf: (unit) => others?.unit(unit)?.program ?? null,
        placed: (offset) => {
          if (offset > reach) reach = offset;
        },
      },
      layout === null
        ? undefined
        : (o, make) =>
            keptLaunch(base(o), layout, () => {
              reach = -1;
              const launch = make();
              return { launch, reach };
            }),
    );
    // launchFacts sorts; targets follow the sorted order.
    const ordered = sortObservations(observations);
    const kernelsOf = new KernelTable(program, doc, read);
    const current = new Set(kernels);
    const launchTargets = ordered.map((o) => {
      const other = o.unit ? others?.unit(o.unit) : null;
      if (other) return other.kernels.targetOf(o, workspace, doc.path);
      const target = () => kernelsOf.targetOf(o, workspace);
      return layout === null || o.unit ? target() : keptTarget(base(o), { outside, current }, target);
    });
    return { program, kernels, launches, launchTargets, ...unitLookups(program, doc, source, found.optIns) };
  } finally {
    others?.dispose();
  }
}

/** The document's opt-ins, and names at file scope as the unit resolves them. */
function unitLookups(
  program: UnitProgram,
  doc: DocumentView,
  source: SourceText,
  optIns: readonly OptInObservation[],
): Pick<UnitFacts, 'smemOptIns' | 'lookup'> {
  const smemOptIns = optIns.map((o): SmemOptIn => ({
    kernelName: o.kernel,
    baseName: o.kernel.split('::').pop()!,
    bytes: { text: o.text, value: o.bytes !== null ? single(o.bytes) : null, note: null },
    span: spanOf(source, o.at[0], o.at[1]),
  }));
  const fileScope: FunctionScope = { file: doc.path, scope: [], bindings: new Map() };
  const end = doc.view.length;
  const lookup: Lookup = (name) => {
    // A macro (as the end of the document has it), else a constant of the unit.
    const state = doc.unit.macrosAt(doc.path, end).state(name);
    const defs = state.options.filter((o) => o !== null);
    if (defs.length > 0) {
      if (defs.length !== state.options.length || defs.length > 1 || state.open) return null;
      const def = defs[0];
      if (def.params !== null || def.body === null) return null;
      const v = program.evaluateSpelled(doc.path, spell(def.body), [0, 0], fileScope);
      return v ? single(v) : null;
    }
    const v = program.resolver(fileScope, 2).name(name, null, () => ({ k: 'top', params: 0 }));
    return v ? single(v) : null;
  };
  return { smemOptIns, lookup };
}

/**
 * The workspace files the unit's calls reach through the linker (see other-units.ts), each read as
 * its own unit once, while the document's facts are made.
 */
class OtherUnits {
  private readonly units = new Map<
    string,
    { program: UnitProgram; collector: LaunchCollector; kernels: KernelTable; functions: OutlineFunction[] } | null
  >();
  readonly linker: Linker;

  constructor(
    private readonly doc: DocumentView,
    workspace: WorkspaceIndex,
    private readonly unitOf: (path: string) => UnitContext,
    private readonly parser: SnippetParser,
  ) {
    this.linker = linkerOf({
      workspace,
      own: new Set(doc.unit.files.keys()),
      read: (path) => {
        const u = this.unit(path);
        return u ? { path, functions: u.functions, collector: u.collector } : null;
      },
    });
  }

  unit(path: string) {
    if (!this.units.has(path)) this.units.set(path, this.read(path));
    return this.units.get(path)!;
  }

  private read(path: string) {
    if (path === this.doc.path) return null;
    const ctx = this.unitOf(path);
    const text = ctx.sources.read(path);
    if (text === null) return null;
    const doc = documentView(path, text, ctx);
    // Its file read as a header is (no input): its parse and outline are kept across analyses while its text and macros stay.
    const program = new UnitProgram(doc.unit, this.parser, []);
    return {
      program,
      // One unit's calls are followed into another, not on into a third.
      collector: new LaunchCollector(program),
      kernels: new KernelTable(program, doc, null),
      functions: program.outline(path).functions,
    };
  }

  dispose(): void {
    for (const u of this.units.values()) u?.program.dispose();
  }
}

/**
 * Each function's key (see function-keys.ts). None with a parse error: error recovery elsewhere can
 * reshape a function whose text did not change.
 */
function keysOf(program: UnitProgram, doc: DocumentView, source: SourceText) {
  return functionKeys({
    source,
    functions: program.outline(doc.path).functions,
    directives: doc.unit.files.get(doc.path)?.regions.filter((r) => r.directive) ?? [],
    others: doc.othersKey,
  });
}

type KeyOf = FunctionKeys['keyOf'];

/** The document's kernels, each taken from `kept` while what it is read from stays the same. */
function keptKernels(
  program: UnitProgram,
  doc: DocumentView,
  source: SourceText,
  keyOf: KeyOf | null,
  kept: KernelAnalysisCache | undefined,
): Array<{ fn: OutlineFunction; kernel: Kernel }> {
  if (!kept || !keyOf) return readKernelsOf({ program, path: doc.path, source, view: doc.view });
  const read = kernelReader({ program, path: doc.path, source, view: doc.view });
  return program
    .outline(doc.path)
    .functions.filter((fn) => fn.global)
    .map((fn) => {
      const key = keyOf(fn);
      const line = positionAt(source, fn.at[0]).line;
      let kernel = key ? kept.get<Kernel>(`kernel|${key}`, line) : undefined;
      if (!kernel) {
        kernel = read(fn);
        if (key) kept.set(`kernel|${key}`, line, kernel);
      }
      return { fn, kernel };
    });
}

/** What a version's function launches, and how its offsets move to a later version's bodies. */
interface KeptLaunches {
  launches: FunctionLaunches | null;
  /** Read through other units (see LaunchCollector.readsOtherUnits): the workspace's changes outside the document then. */
  outside: number | null;
  /** A closure over the bodies of the version it was read in: `set` does not copy them for every function. */
  movedTo(bodies: FunctionKeys['bodies']): ((offset: number) => number) | null;
}

/**
 * The launches of the document's functions with bodies and the opt-ins their reading reaches (in
 * the order they are written), each function's taken from `kept` while what it is read from stays
 * the same, moved to where the function stands now.
 */
function launchesOfDocument(
  program: UnitProgram,
  doc: DocumentView,
  collector: LaunchCollector,
  keys: FunctionKeys | null,
  kept: KernelAnalysisCache | undefined,
  outside: number,
  origin: Map<LaunchObservation, LaunchObservation>,
): FunctionLaunches {
  const observations: LaunchObservation[] = [];
  const optIns = new Map<string, OptInObservation>();
  for (const fn of program.outline(doc.path).functions) {
    if (!fn.bodyAt) continue;
    const key = keys && kept ? keys.keyOf(fn) : null;
    const known = key ? kept!.get<KeptLaunches>(`launches|${key}`, 0) : undefined;
    // What another unit defines may have changed since (the document's own text and unit did not).
    const current = known && (known.outside === null || known.outside === outside) ? known : undefined;
    const move = current ? current.movedTo(keys!.bodies) : null;
    let launches: FunctionLaunches | null;
    if (current && move) {
      launches = current.launches && movedLaunches(current.launches, doc.path, move);
      if (launches) launches.observations.forEach((o, i) => origin.set(o, current.launches!.observations[i]));
    } else {
      const pf = { file: doc.path, fn };
      launches = collector.launchesOf(pf);
      if (key)
        kept!.set<KeptLaunches>(`launches|${key}`, 0, {
          launches,
          outside: collector.readsOtherUnits(pf) ? outside : null,
          movedTo: moverFrom(keys!.bodies),
        });
    }
    if (!launches) continue;
    observations.push(...launches.observations);
    for (const o of launches.optIns) if (!optIns.has(`${o.file}:${o.at[0]}`)) optIns.set(`${o.file}:${o.at[0]}`, o);
  }
  return {
    observations,
    optIns: [...optIns.values()].sort(
      (a, b) =>
        Number(a.file !== doc.path) - Number(b.file !== doc.path) || a.file.localeCompare(b.file) || a.at[0] - b.at[0],
    ),
  };
}

/** A closure over `bodies` alone (made here, it holds nothing else of the version alive). */
function moverFrom(bodies: FunctionKeys['bodies']): KeptLaunches['movedTo'] {
  return (after) => movedOffsets(bodies, after);
}

/**
 * Where the document's bodies start and end (line and column), as keys of its first bodies: `keys[j]`
 * stands for the places of the first j. Two versions that give a function the same key have the same
 * text outside the bodies and in the bodies it reads; where the first j bodies are at the same places
 * too, every offset up to the start of body j is at the same line and column in both, whatever moved in
 * offsets: a launch that says the place of nothing further (its own places, a `#define`'s line in its
 * note) is the same. An edit that adds a line moves only what follows it.
 */
interface Layout {
  /** Where each body starts (offsets of this version, in order). */
  starts: readonly number[];
  keys: readonly string[];
}

function layoutOf(bodies: ReadonlyArray<readonly [number, number]>, source: SourceText): Layout {
  const keys: string[] = [''];
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  const mix = (n: number) => {
    h1 = Math.imul(h1 ^ n, 0x01000193);
    h2 = Math.imul(h2 ^ n, 0x5bd1e995);
  };
  for (const [from, to] of bodies) {
    const a = positionAt(source, from);
    const b = positionAt(source, to);
    mix(a.line);
    mix(a.character);
    mix(b.line);
    mix(b.character);
    keys.push(`${(h1 >>> 0).toString(36)}${(h2 >>> 0).toString(36)}`);
  }
  return { starts: bodies.map(([from]) => from), keys };
}

/** How many bodies start at or before `offset`: their places (and the text outside them) fix its line and column. */
function bodiesUpTo(layout: Layout, offset: number): number {
  let lo = 0;
  let hi = layout.starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (layout.starts[mid] <= offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Each launch kept by the observation it was made from (the one a function's key keeps: a moved
 * copy is made from it), while the bodies up to the furthest place it says are where they were.
 */
const keptLaunches = objectTable<LaunchObservation, { bodies: number; key: string; launch: Launch }>(
  'launches by observation',
);

function keptLaunch(o: LaunchObservation, layout: Layout, make: () => { launch: Launch; reach: number }): Launch {
  const kept = keptLaunches.get(o);
  if (kept && kept.bodies < layout.keys.length && layout.keys[kept.bodies] === kept.key) return kept.launch;
  const made = make();
  // Its strings made its own: a slice of this version's text (an expression quoted) would keep all of it alive.
  const launch = detach(made.launch);
  // The bodies that start at or before the furthest place it says: with the text outside them, their places fix it.
  const bodies = bodiesUpTo(layout, made.reach);
  keptLaunches.set(o, { bodies, key: layout.keys[bodies], launch });
  return launch;
}

/**
 * Each launch's target, kept the same way, while the workspace outside the document has not changed
 * and the kernel it found is still one of the document's kernels (its own key held): which function
 * the launch starts is read from the functions' headers and the unit's other files, which the
 * observation's key covers, and a target says no place of the document but its kernel's.
 */
const keptTargets = objectTable<LaunchObservation, { outside: number; target: LaunchTarget }>(
  'launch targets by observation',
);

function keptTarget(
  o: LaunchObservation,
  now: { outside: number; current: ReadonlySet<Kernel> },
  make: () => LaunchTarget,
): LaunchTarget {
  const kept = keptTargets.get(o);
  if (kept && kept.outside === now.outside && (kept.target.kernel === null || now.current.has(kept.target.kernel)))
    return kept.target;
  const target = detach(make());
  keptTargets.set(o, { outside: now.outside, target });
  return target;
}

function sortObservations(o: readonly LaunchObservation[]): LaunchObservation[] {
  return [...o].sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1]);
}

/** The kernels the unit declares, as `Kernel`s, and the one each launch starts. */
class KernelTable {
  /** Each file's kernels, by where the function is defined and named. */
  private readonly byFile = new Map<string, Map<string, Kernel>>();

  constructor(
    private readonly program: UnitProgram,
    private readonly doc: DocumentView,
    own: Array<{ fn: OutlineFunction; kernel: Kernel }> | null,
  ) {
    if (own) this.byFile.set(doc.path, byPlace(own));
  }

  private kernelsIn(path: string): Map<string, Kernel> {
    let k = this.byFile.get(path);
    if (!k) {
      const file = this.program.file(path);
      const unitFile = this.doc.unit.files.get(path);
      if (!file || !unitFile) return new Map();
      // Spans of another file's kernels are that file's (the related information names it).
      k = byPlace(
        readKernelsOf({
          program: this.program,
          path,
          source: makeSourceText(unitFile.text),
          view: viewText(unitFile),
        }),
      );
      this.byFile.set(path, k);
    }
    return k;
  }

  /**
   * The kernel the launch starts, found in this unit. `home`: the document the launch is reported
   * in, when that is another unit's (a call of a function this unit defines): kernels of this
   * unit's files are named by their file there.
   */
  targetOf(o: LaunchObservation, workspace?: WorkspaceIndex, home: string = this.doc.path): LaunchTarget {
    const refs = kernelRefs(o);
    if (refs.length === 0) {
      // A wrapper's own launch of the kernel it is given: what each call passes is read at the call.
      const parametric = o.kernel.k === 'top' && paramsOf(o.kernel) !== 0 && !o.through;
      return {
        kernel: null,
        kernelUri: null,
        launchBounds: null,
        note: parametric
          ? `the kernel is a parameter of \`${o.function}\`: each call's launch is read where it is called`
          : 'the launch names no kernel the unit can tell',
        parametric,
      };
    }
    if (refs.length > 1)
      return {
        kernel: null,
        kernelUri: null,
        launchBounds: null,
        note: `the launch may start any of ${refs.map((r) => `\`${r.name}\``).join(', ')}`,
      };
    const ref = refs[0];
    const kernelFns = this.program
      .functionsNamed(ref.name.replace(/<.*$/, '').split('::').pop()!)
      .filter((f) => f.fn.global);
    const scope: FunctionScope = { file: this.doc.path, scope: [], bindings: new Map() };
    const visible = acceptingArguments(
      this.program.lookup(
        ref.name,
        scope.scope,
        kernelFns.map((f) => ({ ...f, scope: f.fn.scope })),
      ),
      o.argCount ?? null,
    );
    if (visible.length === 0) {
      return {
        kernel: null,
        kernelUri: null,
        launchBounds: null,
        note: `no kernel named \`${ref.name}\` in this translation unit`,
      };
    }
    const refsByPath = visible.map((f) => ({ kernel: this.kernelOf(f), path: f.file }));
    const match = matchKernel(
      refsByPath.filter((r): r is { kernel: Kernel; path: string } => r.kernel !== null),
      ref.name,
      (p) =>
        p === home
          ? 'this file'
          : home !== this.doc.path
            ? this.otherUnitLabel(p, o.through?.name ?? o.function)
            : `${p.slice(p.lastIndexOf('/') + 1)} (included)`,
    );
    if (!match?.kernel || !match.path)
      return {
        kernel: null,
        kernelUri: null,
        launchBounds: null,
        note: match?.note ?? `no kernel named \`${ref.name}\``,
      };
    const chosen =
      visible.find((f) => f.file === match.path && this.kernelOf(f)?.qualifiedName === match.kernel!.qualifiedName) ??
      visible[0];
    // Declared here, defined in another file the unit does not read: its figures are that file's, and
    // so are its launch bounds when only the definition writes them (one kernel, whatever declares it).
    let kernelPath: string = match.path;
    let kernel = match.kernel;
    let boundsPath = match.boundsPath;
    if (!match.kernel.isDefinition && workspace) {
      const definition = workspace.findKernel(this.doc.path, ref.name, { skipOwnEntry: true });
      if (
        definition.kernel?.isDefinition &&
        definition.path &&
        definition.kernel.qualifiedName === match.kernel.qualifiedName
      ) {
        kernelPath = definition.path;
        if (!kernel.launchBounds && definition.kernel.launchBounds) {
          kernel = { ...kernel, launchBounds: definition.kernel.launchBounds };
          boundsPath = definition.path;
          return {
            kernel,
            kernelUri: boundsPath !== home ? boundsPath : null,
            launchBounds: definition.kernel.launchBounds,
            note: match.note,
            kernelPath,
          };
        }
      }
    }
    return {
      kernel,
      kernelUri: boundsPath && boundsPath !== home ? boundsPath : null,
      launchBounds: this.boundsFor(chosen, kernel, ref),
      note: match.note,
      kernelPath,
    };
  }

  /** Where a kernel of this unit is, said to a document of another unit that calls `wrapper`, which this unit defines. */
  private otherUnitLabel(path: string, wrapper: string): string {
    const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);
    return path === this.doc.path
      ? `${base(path)}, which defines \`${wrapper}\``
      : `${base(path)} (included by ${base(this.doc.path)}, which defines \`${wrapper}\`)`;
  }

  private kernelOf(pf: ProgramFunction): Kernel | null {
    return this.kernelsIn(pf.file).get(placeOf(pf.fn)) ?? null;
  }

  /** The kernel's launch bounds for this launch: its template parameters bound to the launch's template arguments. */
  private boundsFor(pf: ProgramFunction, kernel: Kernel, ref: FnRef): LaunchBounds | null {
    const bounds = kernel.launchBounds;
    if (!bounds) return null;
    if (!kernel.templateParams?.length) return bounds;
    const args: Array<TemplateBinding | undefined> = (pf.fn.templateParams ?? []).map((p, k) => {
      const given = ref.templateArgs?.[k];
      if (!given) return undefined;
      return 'type' in given ? { k: 'type-arg', type: given.type } : given.value;
    });
    const scope = withDefaults(this.program, pf, kernelScope(pf, args));
    const value = (k: number): number | null => {
      const text = bounds.args[k];
      if (text === undefined) return null;
      const v: Val | null = this.program.evaluateSpelled(pf.file, text, [0, 0], scope, pf.fn.headerAt[0]);
      return v ? single(v) : null;
    };
    return {
      ...bounds,
      maxThreadsPerBlock: value(0),
      minBlocksPerMultiprocessor: value(1),
      maxBlocksPerCluster: value(2),
    };
  }
}

const placeOf = (fn: OutlineFunction) => `${fn.nameAt[0]}:${fn.definitionAt[0]}`;

/** Kernels by their function's place (the first of two at one place: a macro use that writes both). */
function byPlace(kernels: ReadonlyArray<{ fn: OutlineFunction; kernel: Kernel }>): Map<string, Kernel> {
  const out = new Map<string, Kernel>();
  for (const k of kernels) if (!out.has(placeOf(k.fn))) out.set(placeOf(k.fn), k.kernel);
  return out;
}

/** Template parameters a launch leaves out, bound to their defaults (which may name earlier ones). */
function withDefaults(program: UnitProgram, pf: ProgramFunction, scope: FunctionScope): FunctionScope {
  const bindings = new Map(scope.bindings);
  for (const p of pf.fn.templateParams ?? []) {
    const b = bindings.get(p.name);
    const unbound =
      !b || (b.k === 'top' && b.why?.includes('template parameter')) || (b.k === 'type-arg' && b.type === p.name);
    if (!unbound || p.defaultText === null) continue;
    if (p.kind === 'type') bindings.set(p.name, { k: 'type-arg', type: p.defaultText });
    else {
      const v = program.evaluateSpelled(pf.file, p.defaultText, [0, 0], { ...scope, bindings }, pf.fn.headerAt[0]);
      if (v) bindings.set(p.name, v);
    }
  }
  return { ...scope, bindings };
}

/**
 * Overloads a call with `count` arguments can call (C++ overload resolution by arity: at least
 * the parameters without a default, at most all of them unless one is a pack); all of them when
 * the count is not known or none would take it.
 */
function acceptingArguments<
  F extends {
    fn: { params: ReadonlyArray<{ defaultAt: unknown; variadic: boolean; type: string; name: string | null }> };
  },
>(overloads: F[], count: number | null): F[] {
  if (count === null || overloads.length < 2) return overloads;
  const taking = overloads.filter(({ fn }) => {
    // `k(void)` takes none.
    const params = fn.params.length === 1 && fn.params[0].type.trim() === 'void' && !fn.params[0].name ? [] : fn.params;
    const required = params.filter((p) => p.defaultAt === null && !p.variadic).length;
    return count >= required && (params.some((p) => p.variadic) || count <= params.length);
  });
  return taking.length > 0 ? taking : overloads;
}
