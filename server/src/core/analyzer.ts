/**
 * The core's facade: the one entry the language server, the CLI and the tests use for the
 * analysis. It wires the pipeline once: source text and syntax tree → facts (kernels, launches,
 * branches) → figures (ptxas, logs, annotations) → occupancy → a document's report.
 *
 * An editor keeps documents open in `documents` (kept between edits by the incremental layer)
 * and asks `report(uri)`; the CLI asks `analyzeFile` and `reportOf`. Compiler output, build logs
 * and PTX come in through `setCompiled`, `setLog` and `setPtx`, already read by the adapters that
 * run nvcc or read files: nothing here touches a file or a process.
 */
import type { Finding, Kernel, Position } from './types';
import { contains } from './text/source-text';
import { createCudaParser, treeShape, type CudaParser, type GrammarBytes } from './syntax/cuda-parser';
import { normalizePath, WorkspaceIndex } from './facts/workspace-index';
import { parseArch } from './gpu/arch-table';
import { analyzeDocument, type AnalyzeInput, type DocumentFacts } from './incremental/document-analysis';
import { documentView, type UnitContext } from './incremental/unit-facts';
import { readFileAlone } from './incremental/file-alone';
import type { Toolchain, UnitFlags } from './preprocess/unit';
import { DocumentSessions, FIRST_PASS_BUDGET_MS } from './incremental/document-sessions';
import { reportWithKeptAnalyses } from './incremental/kept-reports';
import { FiguresRegistry, type CompiledKernel, type CompilerStatus } from './compiler/figures-registry';
import {
  mapKernelResources,
  parseResourceAnnotation,
  resourcesForArch,
  unknownResources,
} from './compiler/kernel-resources';
import { compilerFindings } from './compiler/compiler-findings';
import { BuildFigures } from './compiler/build-figures';
import {
  compileFailureFinding,
  describeCompileFailure,
  type CompileError,
  type Surface,
} from './compiler/compile-failure';
import { parsePtxasOutput, type PtxasDiagnostic, type PtxasFunctionFigures } from './compiler/ptxas-output';
import {
  buildDocumentReport,
  DEFAULT_REPORT_SETTINGS,
  type DocumentReport,
  type ReportPtx,
  type ReportSettings,
} from './report/document-report';
import { resolveArchs, type FiguresFor, type KernelFigures } from './report/launch-analysis';
import { chartForTarget } from './report/chart-data';
import { partsForArchs, type GpuPart } from './gpu/gpu-parts';
import { registerCaps, type QuickFixContext } from './report/quick-fixes';
import { variantText, type CapCheck, type CapFigures } from './report/register-caps';
import { entryNamesKernel } from './compiler/ptx-line-costs';
import { modulePressure, pressureResult, type ModulePressure, type PressureResult } from './report/pressure-report';
import type { ChartData } from './gpu/occupancy-sweeps';

export { resolveArchs } from './report/launch-analysis';
export { BuildFigures, type BuildOrigin } from './compiler/build-figures';
export { GPU_PARTS, findGpuPart, type GpuPart } from './gpu/gpu-parts';
export { describeCompileFailure, looksCompiledAtRunTime } from './compiler/compile-failure';
export type { CompileError } from './compiler/compile-failure';
export type { UnitFlags, Toolchain } from './preprocess/unit';

export type { DocumentFacts } from './incremental/document-analysis';
export { WorkspaceIndex, type FileFacts, type IndexEntry } from './facts/workspace-index';
export type { DocumentReport, ReportSettings } from './report/document-report';
export type { PressureResult } from './report/pressure-report';
export type { CapCheck, CapFigures } from './report/register-caps';
export { checkedOccupancy, capCheckText } from './report/register-caps';
export { registerCaps, type QuickFixContext } from './report/quick-fixes';
export { DEFAULT_REPORT_SETTINGS } from './report/document-report';
export { FIRST_PASS_BUDGET_MS, BACKGROUND_SLICE_MS } from './incremental/document-sessions';

// What the adapters (lsp/, cli/, nvcc/, files/) read of the core, all through this module: the feature
// texts of a report, the hardware model the calculator and the oracle drive, the ptxas parser nvcc's
// runner validates its output with, and the types of the data they format.
export { DocumentSessions, type DocumentSessionsOptions } from './incremental/document-sessions';
export type { GrammarBytes, TextEdit } from './syntax/cuda-parser';
export { contains, makeSourceText } from './text/source-text';
export type { SourceText } from './text/source-text';
export { hoverText } from './report/hover-text';
export { lenses, type LensOptions } from './report/lenses';
export { quickFixes, ADD_NVCC_ARGUMENT_COMMAND, type QuickFix } from './report/quick-fixes';
export {
  blocksPerSm,
  issueBoundMatters,
  launchTitleText,
  noOccupancyText,
  occupancyPercent,
  registersShort,
  type ReportExtras,
} from './report/launch-report';
export { LIMIT_NAMES, bytes, originText } from './report/format';
export { clusterText, latencyRangeText, wavesText } from './report/gpu-text';
export type { LaunchOnGpu } from './report/launch-on-gpus';
export type { InstanceSpread, KernelFigures, LaunchAnalysis } from './report/launch-analysis';
export type { Branch, BranchKind } from './body/divergence';
export { ARCHS, archByCapability, archName, parseArch, type ArchRow, type DeviceProps } from './gpu/arch-table';
export { latencyHiding, type LatencyEstimate, type LatencyReading } from './gpu/latency';
export { nextStep, type NextStep } from './gpu/next-step';
export {
  availableDynamicSmem,
  headerArchConstants,
  maxPotentialBlockSize,
  occupancy,
  resolveAttributes,
  resolveState,
  sharedMemPerMultiprocessorUsed,
  INT_MAX,
  type CacheConfig,
  type HeaderArchConstants,
  type OccupancyQuery,
  type OccupancyResult,
  type PartitionedGCConfig,
  type ShmemLimitConfig,
} from './gpu/occupancy';
export {
  parsePtxasOutput,
  type PtxasDiagnostic,
  type PtxasFunctionFigures,
  type PtxasModuleFigures,
} from './compiler/ptxas-output';
export type { ChartData, ChartPoint, ChartSweep, SweepId } from './gpu/occupancy-sweeps';
export type { WavesChart, WavesPoint } from './gpu/waves';
export type { LimitingFactor } from './gpu/occupancy';

export interface AnalyzerOptions {
  /** The grammar's WebAssembly (the adapters read it from where it ships). */
  grammar: GrammarBytes;
  /**
   * For an editor: milliseconds from a fixed point (`performance.now`), to bound how long a
   * version's first analysis spends on kernel bodies (the rest follow through
   * `documents.complete`). Without one, every analysis is complete.
   */
  clock?: () => number;
  /** The key the workspace index knows a document by (an absolute path for a file URI); default: the URI. */
  indexKey?: (uri: string) => string;
  /** sha256 (or any collision-safe hash) of a text, to apply PTX only to the text it was compiled from. */
  contentHash?: (text: string) => string;
  log?: (message: string) => void;
  /** Who shows the figures: what a failed compile's hint tells the user to set (the editor's settings, the CLI's flags). Default: editor. */
  surface?: Surface;
  /** An editor that checks unsettled incremental parses with a fresh parse elsewhere (see DocumentSessions.settle). */
  settleLater?: boolean;
}

export interface AnalysisSettings {
  /** Target architectures (`sm_80`); unknown names are dropped (see `resolveArchs`). */
  archs: readonly string[];
  /** Named GPUs (gpu-parts.ts) to show launches on; empty: each target architecture's default part. */
  gpus?: readonly string[];
  /** Classify branches on a thread index. */
  divergence: boolean;
  report: ReportSettings;
}

/** What one nvcc run of a file said: each architecture's ptxas figures and diagnostics. */
export interface CompiledFile {
  perArch: ReadonlyArray<{
    arch: string;
    entries: readonly PtxasFunctionFigures[];
    diagnostics: readonly PtxasDiagnostic[];
    producedAt?: number;
  }>;
  producedAt: number;
  /** The last compile failed: the figures are the previous run's, marked stale with this note. */
  stale?: string | null;
}

/** PTX of a file (`nvcc -ptx -lineinfo`) and the hash (`contentHash`) of the text it was compiled from. */
export interface CompiledPtx extends ReportPtx {
  sourceHash: string;
  /** `nvdisasm --print-life-ranges --print-line-info` of the cubin of the same compile and arch, where the toolkit has nvdisasm. */
  sass?: string | null;
}

/**
 * What nvcc is doing for a translation unit: compiling (for these architectures, since when;
 * `queued` while the compile is asked for but nvcc has not started: the debounce, the queue), or
 * failed (its first error).
 */
export type CompileState =
  | { state: 'running'; archs: readonly string[]; since: number; queued?: boolean }
  | { state: 'failed'; error: CompileError | null };

/** A register cap a fix proposes, as the adapters compile it: the document's text with the fix, or the flag to add. */
export interface CapVariant {
  key: string;
  kind: 'launch-bounds' | 'maxrregcount';
  fix: string;
  kernel: Kernel;
  /** The text to compile (the document's, with the fix's edits). */
  text: string;
  /** Flags to add (`-maxrregcount=N`). */
  flags: string[];
}

/** Where a cap's compile stands, as an adapter reports it: ptxas's entries when it finished. */
export type CapCompileOutcome =
  | { state: 'checking' }
  | { state: 'failed'; message: string }
  | { state: 'done'; entries: readonly PtxasFunctionFigures[] };

/** A compiled instance of a kernel and its figures per target architecture. */
export interface KernelInstanceFigures {
  mangledName: string | null;
  signature: string | null;
  resources: Record<string, KernelFigures>;
}

/**
 * A parser that parses whole texts from scratch and gives their tree's shape (see treeShape): what
 * a worker thread runs to tell whether an editor's unsettled incremental parse is the fresh one.
 */
export async function createFreshParser(
  grammar: GrammarBytes,
): Promise<{ shapeOf(text: string): string; dispose(): void }> {
  const parser = await createCudaParser(grammar);
  return {
    shapeOf(text) {
      const tree = parser.parse(text);
      try {
        return treeShape(tree);
      } finally {
        tree.delete();
      }
    },
    dispose: () => parser.dispose(),
  };
}

export async function createAnalyzer(options: AnalyzerOptions): Promise<Analyzer> {
  return new Analyzer(await createCudaParser(options.grammar), options);
}

export class Analyzer {
  /** Files not open are read as their own units by the same core as an open document (file-alone.ts). */
  readonly index = new WorkspaceIndex({ read: (path, text) => readFileAlone(path, text, this.parser) });
  /** Open documents (editors): their texts, trees and facts, kept between edits. */
  readonly documents: DocumentSessions;
  private readonly figures = new FiguresRegistry();
  /** Per translation unit (index path): ptxas's findings, per file of the kernels they are about. */
  private readonly compiled = new Map<string, Map<string, Finding[]>>();
  /** Per translation unit: its compile failed with this error (shown at the top of the file and in its headers). */
  private readonly failures = new Map<string, CompileError | null>();
  private readonly ptx = new Map<string, CompiledPtx>();
  /** The register pressure of each stored PTX, computed the first time a report of its text asks. */
  private readonly pressures = new WeakMap<CompiledPtx, ModulePressure>();
  /** Per document: ptxas's checks of its fixes' register caps, for the text (its hash) they were made on. */
  private readonly capChecks = new Map<string, { text: string; checks: Map<string, CapCheck> }>();
  private settings: AnalysisSettings = { archs: ['sm_80', 'sm_90'], divergence: true, report: DEFAULT_REPORT_SETTINGS };
  private parts: readonly GpuPart[] = partsForArchs(['sm_80', 'sm_90'], []).parts;
  private unknownGpus: readonly string[] = [];
  /** Changes with the settings, the figures and the PTX: a report of another generation is built again. */
  private generation = 0;
  private readonly reports = new Map<string, { key: string; report: DocumentReport }>();

  constructor(
    readonly parser: CudaParser,
    private readonly options: Omit<AnalyzerOptions, 'grammar'>,
  ) {
    this.documents = new DocumentSessions({
      parser,
      clock: options.clock,
      treePassBudgetMs: options.clock ? FIRST_PASS_BUDGET_MS : Infinity,
      log: options.log,
      settleLater: options.settleLater,
      analyzeOptions: (uri) => this.analyzeOptions(uri),
      onForget: (uri) => {
        this.reports.delete(uri);
        this.index.keepCopies(this.keyOf(uri));
      },
    });
  }

  configure(settings: AnalysisSettings): void {
    const archs = resolveArchs(settings.archs).archs;
    const { parts, unknown } = partsForArchs(archs, settings.gpus ?? []);
    this.settings = { ...settings, archs };
    this.parts = parts;
    this.unknownGpus = unknown;
    this.generation++;
    this.documents.invalidate();
  }

  /** The named GPUs launches are shown on, and the names in the settings no part answers to. */
  get gpus(): { parts: readonly GpuPart[]; unknown: readonly string[] } {
    return { parts: this.parts, unknown: this.unknownGpus };
  }

  get archs(): readonly string[] {
    return this.settings.archs;
  }

  /** A whole file analysed at once, every kernel body included (the CLI's and the tests' way). */
  analyzeFile({ uri, text, version = 1 }: { uri: string; text: string; version?: number }): DocumentFacts {
    const options = this.analyzeOptions(uri);
    const view = documentView(options.path ?? uri, text, options.unit);
    const tree = this.parser.parse(view.parseView);
    try {
      return analyzeDocument({ ...options, uri, version, text, tree, view, parser: this.parser });
    } finally {
      tree.delete();
    }
  }

  /** The report of an open document's current version, built once per version and generation. */
  report(uri: string): DocumentReport | undefined {
    const facts = this.documents.facts(uri);
    if (!facts) return undefined;
    const key = `${facts.version}/${this.generation}/${this.figures.generation}`;
    const kept = this.reports.get(uri);
    if (kept && kept.key === key && kept.report.facts === facts) return kept.report;
    const report = reportWithKeptAnalyses(
      this.reportInput(uri, facts),
      kept?.key.endsWith(`/${this.generation}/${this.figures.generation}`) ? kept.report : undefined,
    );
    this.reports.set(uri, { key, report });
    return report;
  }

  /** What a quick fix in `uri` needs of the rest of the workspace: other files' launches of a kernel, and the macros its includes define. */
  quickFixContext(uri: string): QuickFixContext {
    const key = normalizePath(this.keyOf(uri));
    return {
      otherLaunches: (kernel) =>
        this.index
          .launchesNamed(kernel.name)
          .filter((l) => l.path !== key)
          .map((l) => ({ path: l.path, line: l.launch.line, threads: l.launch.threads })),
      kernelsNamed: (qualifiedName) =>
        this.index
          .paths()
          .filter((p) => p !== key)
          .flatMap((p) => this.index.get(p)?.kernels.filter((k) => k.qualifiedName === qualifiedName) ?? []),
    };
  }

  /** The occupancy chart a lens or the chart panel asks for (see chartForTarget), or null. */
  chartData(uri: string, target: { kernel: string; line: number; arch?: string }): ChartData | null {
    const report = this.report(uri);
    return report ? chartForTarget(report, target, this.figuresFor) : null;
  }

  /** The report of facts from `analyzeFile`. */
  reportOf(facts: DocumentFacts): DocumentReport {
    return buildDocumentReport(this.reportInput(facts.uri, facts));
  }

  /**
   * ptxas figures and diagnostics of one compiled translation unit (`uri`), mapped by mangled name
   * to the kernels written in it and in the headers it includes (`kernels`: the unit's own, default
   * those its analysis or the index knows; the headers' come from the index).
   */
  setCompiled(uri: string, compiled: CompiledFile, kernels: readonly Kernel[] = this.kernelsOf(uri)): void {
    const unit = this.keyOf(uri);
    const refs = this.kernelsCompiledBy(unit, kernels);
    const entries = compiled.perArch.flatMap((a) => a.entries);
    const mapped = mapKernelResources({
      kernels: refs.map((r) => r.kernel),
      entries,
      source: 'ptxas',
      producedAt: compiled.perArch[0]?.producedAt ?? compiled.producedAt,
    });
    const byFile: CompiledKernel[] = mapped.kernels.map((k, i) => ({ ...k, path: refs[i].path }));
    this.figures.setCompiled(unit, byFile, [unit, ...this.index.includeClosure(unit)]);
    if (compiled.stale !== undefined && compiled.stale !== null) this.figures.markStale(unit, compiled.stale);
    const diagnostics = compiled.perArch.flatMap((a) => a.diagnostics);
    const findings = new Map<string, Finding[]>();
    for (const path of new Set(byFile.map((k) => k.path))) {
      const found = compilerFindings(
        byFile.filter((k) => k.path === path),
        diagnostics,
      );
      if (found.length) findings.set(path, found);
    }
    this.compiled.set(unit, findings);
  }

  /**
   * What nvcc is doing for a translation unit: running (hovers say so until it answers), failed
   * (its first error goes to the hover's figures line and to one diagnostic at the top of the file
   * and of the headers whose kernels wait for it), or nothing more to say (null: done).
   */
  setCompileState(uri: string, state: CompileState | null): void {
    const unit = this.keyOf(uri);
    const covers = [unit, ...this.index.includeClosure(unit)];
    if (state?.state === 'failed') {
      const text = describeCompileFailure(state.error, this.options.surface ?? 'editor');
      this.failures.set(unit, state.error);
      this.figures.setState(unit, { state: 'failed', message: text.summary, hint: text.hint }, covers);
    } else {
      this.failures.delete(unit);
      this.figures.setState(
        unit,
        state ? { state: 'running', archs: [...state.archs], since: state.since, queued: state.queued === true } : null,
        covers,
      );
    }
  }

  /** The translation units whose compile failed, with the error. */
  compileFailures(): Array<{ path: string; error: CompileError | null }> {
    return [...this.failures].map(([path, error]) => ({ path, error }));
  }

  /** What a unit's compile is doing, as last set (null: nothing to say). */
  compileState(uri: string): CompileState | null {
    const unit = this.keyOf(uri);
    const state = this.figures.stateOf(unit);
    if (!state) return null;
    return state.state === 'running'
      ? { state: 'running', archs: state.archs, since: state.since, queued: state.queued === true }
      : { state: 'failed', error: this.failures.get(unit) ?? null };
  }

  /**
   * Whether nvcc can give figures at all: a launch whose registers no compile, log or annotation
   * gives says why by it (nvcc missing or switched off), and asks for nvcc only when it is missing.
   */
  setCompilerStatus(status: CompilerStatus | null): void {
    this.figures.setCompilerStatus(status);
    // Compiles asked for before nvcc turned out missing (or was switched off) will not run.
    if (status !== 'available') this.figures.dropQueued();
  }

  /**
   * A kernel's compiled instances with their figures per target architecture: one per template
   * instantiation ptxas reported, from every translation unit that compiled the kernel (the file
   * it is written in, or one that includes it), else one without a mangled name (annotation or unknown).
   */
  instancesOf(uri: string, kernel: Kernel): KernelInstanceFigures[] {
    const archs = this.settings.archs;
    const definition = this.definitionOf(this.keyOf(uri), kernel);
    const compiled = this.figures.instancesOf(definition.path, definition.kernel, this.keyOf(uri));
    const annotated = parseResourceAnnotation(kernel.leadingComment);
    const fallback = (arch: string) =>
      (annotated && resourcesForArch(annotated.resources, arch)) ??
      this.figuresFor(kernel, null, arch, { kernelPath: definition.path, unit: this.keyOf(uri) });
    if (compiled.length) {
      return compiled.map((i) => ({
        mangledName: i.mangledName,
        signature: i.signature,
        resources: Object.fromEntries(
          archs.map((arch) => [
            arch,
            resourcesForArch(i.resources, arch) ??
              (annotated && resourcesForArch(annotated.resources, arch)) ?? {
                ...unknownResources(),
                ...this.compileNoteFor(definition.path, arch),
              },
          ]),
        ),
      }));
    }
    return [
      {
        mangledName: null,
        signature: null,
        resources: Object.fromEntries(archs.map((arch) => [arch, fallback(arch)])),
      },
    ];
  }

  readonly figuresFor: FiguresFor = (kernel, launch, arch, site) => this.figures.figuresFor(kernel, launch, arch, site);

  /**
   * Figures from a build log's `-Xptxas -v` text, mapped to the workspace's kernels (replaces the
   * previous log's). Throws when the text holds no ptxas output.
   */
  setLog(name: string, text: string, producedAt: number | null): void {
    const output = parsePtxasOutput(text);
    if (!output.sawPtxasOutput) throw new Error(`${name} holds no ptxas output (build with -Xptxas -v)`);
    const kernels = this.index.paths().flatMap((p) => this.index.get(p)?.kernels ?? []);
    this.figures.setLog(
      name,
      mapKernelResources({ kernels, entries: output.entries, source: 'log', producedAt }).kernels,
    );
  }

  /**
   * Figures from a build's files (`BuildFigures`: cuobjdump of its objects, its logs), mapped by
   * mangled name to the workspace's kernels like a log's, each with the file it came from; a name
   * and architecture the files disagree on is unknown (replaces what was set under `key`).
   */
  setBuildFigures(key: string, build: BuildFigures): void {
    const kernels = this.index.paths().flatMap((p) => this.index.get(p)?.kernels ?? []);
    const mapped = mapKernelResources({ kernels, entries: build.entries(), source: 'log' }).kernels;
    for (const k of mapped)
      for (const instance of k.instances)
        for (const arch of Object.keys(instance.resources)) {
          const figures = instance.mangledName ? build.figuresOf(instance.mangledName, arch) : null;
          if (figures) instance.resources[arch] = figures;
        }
    this.figures.setLog(key, mapped);
  }

  clearLogs(): void {
    this.figures.clearLogs();
  }

  /** PTX of a file; a report uses it only while the document's text is the one it was compiled from. */
  setPtx(uri: string, ptx: CompiledPtx): void {
    this.ptx.set(uri, ptx);
    this.generation++;
  }

  /**
   * Register pressure per line of each kernel of an open document, from the PTX of its current
   * text (null without one): what the heat map draws.
   */
  pressure(uri: string): PressureResult | null {
    const report = this.report(uri);
    return report && report.pressure.size > 0 ? pressureResult(report.pressure) : null;
  }

  /** The register caps a report's fixes propose, once each: what to compile to check them with ptxas. */
  capVariants(report: DocumentReport, context: QuickFixContext = this.quickFixContext(report.facts.uri)): CapVariant[] {
    const seen = new Map<string, CapVariant>();
    for (const { cap } of registerCaps(report, context)) {
      if (seen.has(cap.key)) continue;
      seen.set(cap.key, {
        key: cap.key,
        kind: cap.kind,
        fix: cap.fix,
        kernel: cap.kernel,
        text: cap.edits.length ? variantText(report.facts.source, cap.edits) : report.facts.source.text,
        flags: cap.flag ? [cap.flag] : [],
      });
    }
    return [...seen.values()];
  }

  /** The caps of `text` already checked or being checked (an adapter compiles the others). */
  capCheckState(uri: string, text: string, key: string): CapCheck | undefined {
    const kept = this.capChecks.get(uri);
    return kept && kept.text === this.textKey(text) ? kept.checks.get(key) : undefined;
  }

  /**
   * How the check of a cap of `text` (the document's text the variant was made from) stands: the
   * kernel's figures are read from ptxas's entries (for a template, its instantiation with the most
   * registers on each architecture). Checks of another text are dropped.
   */
  setCapCheck(
    uri: string,
    text: string,
    variant: Pick<CapVariant, 'key' | 'kernel'>,
    outcome: CapCompileOutcome,
  ): void {
    const key = this.textKey(text);
    let kept = this.capChecks.get(uri);
    if (!kept || kept.text !== key) this.capChecks.set(uri, (kept = { text: key, checks: new Map() }));
    kept.checks.set(variant.key, this.capCheckOf(variant.kernel, outcome));
    this.generation++;
  }

  /** Checks still marked as running (their compile was cancelled): forgotten, to be asked again. */
  clearRunningCapChecks(uri: string): void {
    const kept = this.capChecks.get(uri);
    if (!kept) return;
    for (const [key, check] of kept.checks) if (check.state === 'checking') kept.checks.delete(key);
    this.generation++;
  }

  /** Forget what was kept for a closed document (its figures stay: other files' launches may use its kernels). */
  forget(uri: string): void {
    this.reports.delete(uri);
    this.ptx.delete(uri);
    this.capChecks.delete(uri);
  }

  /** Kernel bodies of `uri` not analysed yet, the one at `position` first (a hover waits for it). */
  completeAt(uri: string, position: Position): void {
    const facts = this.documents.facts(uri);
    if (
      !facts ||
      facts.pendingKernels === 0 ||
      !facts.kernels.some((k) => k.isDefinition && contains(k.span, position))
    )
      return;
    this.documents.complete(uri, 0, position);
  }

  private reportInput(uri: string, facts: DocumentFacts) {
    const path = this.keyOf(uri);
    const ptx = this.ptxFor(uri, facts.source.text);
    return {
      facts,
      path,
      archs: [...this.settings.archs],
      figuresFor: this.figuresFor,
      settings: this.settings.report,
      compilerFindings: [...this.compilerFindingsFor(path), ...this.failureFindingsFor(path, facts)],
      instancesOf: (kernel: Kernel) => {
        if (!this.figures.hasCompiled) return [];
        const definition = this.definitionOf(path, kernel);
        return this.figures
          .instancesOf(definition.path, definition.kernel, path)
          .map((i) => ({ mangledName: i.mangledName, signature: i.signature, resources: i.resources }));
      },
      ptx,
      pressure: ptx ? this.pressureOf(uri) : null,
      capChecks: this.capChecksFor(uri, facts.source.text),
      parts: this.parts,
    };
  }

  /** ptxas's findings about the kernels written in `path`, from every unit that compiled them (once each). */
  private compilerFindingsFor(path: string): Finding[] {
    const seen = new Set<string>();
    const out: Finding[] = [];
    for (const byFile of this.compiled.values()) {
      for (const f of byFile.get(path) ?? []) {
        const key = `${f.code}|${f.span.start.line}:${f.span.start.character}|${f.message}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(f);
      }
    }
    return out;
  }

  /**
   * `nvcc-failed` at the top of a file whose compile failed; for a file nvcc does not compile itself
   * (a header), when the units that include it failed and none compiled.
   */
  private failureFindingsFor(path: string, facts: DocumentFacts): Finding[] {
    const newline = facts.source.text.search(/\r?\n/);
    const firstLine = {
      start: { line: 0, character: 0 },
      end: { line: 0, character: newline < 0 ? facts.source.text.length : newline },
    };
    let unit: string | null = null;
    if (this.failures.has(path)) unit = path;
    else if (!this.figures.stateOf(path)) {
      const states = this.figures.statesCovering(path);
      if (states.length && states.every((s) => s.state.state === 'failed') && !this.figures.compiledCovering(path))
        unit = states[0].unit;
    }
    if (unit === null) return [];
    const error = this.failures.get(unit) ?? null;
    const text = describeCompileFailure(error, this.options.surface ?? 'editor');
    return [
      compileFailureFinding({
        error,
        text,
        firstLine,
        unit: unit === path ? null : unit,
        relatedPath: (file) => (file.startsWith('/') ? file : null),
      }),
    ];
  }

  /** What nvcc is doing for the kernels written in `path` (for an instance missing an architecture). */
  private compileNoteFor(path: string, arch: string): Partial<KernelFigures> {
    const compile = this.figures.compileNote({ kernelPath: path }, arch);
    return compile ? { compile } : {};
  }

  /** The kernels a unit compiles: its own (definitions first), then those defined in the files it includes. */
  private kernelsCompiledBy(unit: string, own: readonly Kernel[]): Array<{ kernel: Kernel; path: string }> {
    const refs = [...own]
      .sort((a, b) => Number(b.isDefinition) - Number(a.isDefinition))
      .map((kernel) => ({ kernel, path: unit }));
    for (const path of this.index.includeClosure(unit)) {
      for (const kernel of this.index.get(path)?.kernels ?? []) if (kernel.isDefinition) refs.push({ kernel, path });
    }
    return refs;
  }

  /** Where a kernel of `path` is defined: itself, or for a declaration its one definition in the workspace. */
  private definitionOf(path: string, kernel: Kernel): { path: string; kernel: Kernel } {
    if (kernel.isDefinition) return { path, kernel };
    const match = this.index.findKernel(path, kernel.qualifiedName);
    return match.kernel?.isDefinition && match.path && match.kernel.qualifiedName === kernel.qualifiedName
      ? { path: match.path, kernel: match.kernel }
      : { path, kernel };
  }

  private ptxFor(uri: string, text: string): ReportPtx | null {
    const ptx = this.ptx.get(uri);
    const hash = this.options.contentHash;
    // The object kept, not a copy: what a report reads of the PTX (its loads, ptx-load-work.ts) is kept per object.
    return ptx && hash && ptx.sourceHash === hash(text) ? ptx : null;
  }

  private capChecksFor(uri: string, text: string): ReadonlyMap<string, CapCheck> {
    const kept = this.capChecks.get(uri);
    return kept && kept.text === this.textKey(text) ? kept.checks : new Map();
  }

  private capCheckOf(kernel: Kernel, outcome: CapCompileOutcome): CapCheck {
    if (outcome.state !== 'done') return outcome;
    // Only the kernel's own entries: a variant compiles the whole file.
    const entries = outcome.entries.filter((e) => entryNamesKernel(e.mangledName, kernel.name));
    const mapped = mapKernelResources({ kernels: [kernel], entries, source: 'ptxas' }).kernels[0];
    const perArch: Record<string, CapFigures> = {};
    for (const instance of mapped?.instances ?? []) {
      for (const [arch, f] of Object.entries(instance.resources)) {
        if (f.numRegs === null || (perArch[arch] && perArch[arch].numRegs >= f.numRegs)) continue;
        perArch[arch] = {
          numRegs: f.numRegs,
          spillStoreBytes: f.spillStoreBytes ?? 0,
          spillLoadBytes: f.spillLoadBytes ?? 0,
          stackFrameBytes: f.stackFrameBytes ?? 0,
        };
      }
    }
    return Object.keys(perArch).length
      ? { state: 'done', perArch }
      : { state: 'failed', message: `ptxas reported no figures for ${kernel.name}` };
  }

  /** What a text is known by: its hash when the analyzer has one (texts run to megabytes), else itself. */
  private textKey(text: string): string {
    return this.options.contentHash ? this.options.contentHash(text) : text;
  }

  private pressureOf(uri: string): ModulePressure | null {
    const ptx = this.ptx.get(uri);
    if (!ptx) return null;
    let pressure = this.pressures.get(ptx);
    if (!pressure) this.pressures.set(ptx, (pressure = modulePressure(ptx.text, ptx.sass ?? null)));
    return pressure;
  }

  private kernelsOf(uri: string): Kernel[] {
    const open = this.documents.has(uri) ? this.documents.facts(uri)?.kernels : undefined;
    return open ?? this.index.get(this.keyOf(uri))?.kernels ?? [];
  }

  private analyzeOptions(uri: string): Partial<AnalyzeInput> {
    const path = this.keyOf(uri);
    return {
      workspace: this.index,
      path,
      unit: this.unitContext(path),
      unitOf: (p) => this.unitContext(p),
      archs: this.settings.archs.map((arch) => ({
        arch,
        maxOptInSmemBytes: parseArch(arch)!.device.sharedMemPerBlockOptin,
      })),
      divergence: this.settings.divergence,
    };
  }

  private keyOf(uri: string): string {
    return this.options.indexKey?.(uri) ?? uri;
  }

  /**
   * What a document's translation unit is made of: the workspace's texts (an open document's
   * current text first), the unit's flags, and for a header (or a `.cu` another includes) the
   * `.cu` that includes it (one that launches its kernels first, then the nearest).
   */
  private unitContext(path: string): UnitContext {
    const open = new Map<string, string>();
    for (const uri of this.documents.uris()) {
      const text = this.documents.text(uri);
      if (text !== undefined) open.set(normalizePath(this.keyOf(uri)), text);
    }
    // A header, or a source file a `.cu` includes (compiled as part of it), is read in that unit.
    const main = this.index.unitsFor(path)[0] ?? null;
    const flags = this.unitFlags(main ?? path);
    return {
      sources: {
        read: (p) => open.get(p) ?? this.index.text(p) ?? this.fileSource?.read(p) ?? null,
        byTail: (tail) => {
          const indexed = this.index.withTail(tail);
          return this.fileSource ? [...new Set([...indexed, ...this.fileSource.withTail(tail)])] : indexed;
        },
      },
      main,
      flags: { ...flags, includeDirs: [...(flags.includeDirs ?? []), ...this.index.includeDirsOf(main ?? path)] },
      toolchain: this.toolchain,
    };
  }

  private unitFlags: (path: string) => UnitFlags = () => ({});
  private toolchain: Toolchain = { platform: 'linux' };

  /** The flags each translation unit is compiled with (`-D`, `-U`, `-I`, `-include`: from compile_commands.json or the settings), and what the toolkit defines. */
  setUnitFlags(flagsOf: (path: string) => UnitFlags, toolchain?: Toolchain): void {
    this.unitFlags = flagsOf;
    if (toolchain) this.toolchain = toolchain;
    this.documents.invalidate();
  }

  private fileSource: { read(path: string): string | null; withTail(tail: string): readonly string[] } | null = null;

  /**
   * Files beyond the index a unit may include (the rest of the project, read when an include names
   * them): what an adapter that can read them offers. The index's texts come first.
   */
  setFileSource(source: { read(path: string): string | null; withTail(tail: string): readonly string[] } | null): void {
    this.fileSource = source;
    this.documents.invalidate();
  }
  /**
   * `uri` is analysed and its report built (check, file after file): the index lets go of its text
   * when no file includes it (WorkspaceIndex.releaseText), if the file source can read it again.
   */
  releaseText(uri: string): void {
    if (this.fileSource) this.index.releaseText(this.keyOf(uri));
  }
}
