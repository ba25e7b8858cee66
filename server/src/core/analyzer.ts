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
import { createCudaParser, type CudaParser, type GrammarBytes } from './syntax/cuda-parser';
import { normalizePath, WorkspaceIndex } from './facts/workspace-index';
import { parseArch } from './gpu/arch-table';
import { analyzeDocument, type AnalyzeInput, type DocumentFacts } from './incremental/document-analysis';
import { DocumentSessions, FIRST_PASS_BUDGET_MS } from './incremental/document-sessions';
import { reportWithKeptAnalyses } from './incremental/kept-reports';
import { FiguresRegistry } from './compiler/figures-registry';
import { mapKernelResources, parseResourceAnnotation, resourcesForArch, type KernelResources } from './compiler/kernel-resources';
import { compilerFindings } from './compiler/compiler-findings';
import { parsePtxasOutput, type PtxasDiagnostic, type PtxasFunctionFigures } from './compiler/ptxas-output';
import { buildDocumentReport, DEFAULT_REPORT_SETTINGS, type DocumentReport, type ReportPtx, type ReportSettings } from './report/document-report';
import { resolveArchs, type FiguresFor, type KernelFigures } from './report/launch-analysis';
import { chartForTarget } from './report/chart-data';
import { partsForArchs, type GpuPart } from './gpu/gpu-parts';
import type { QuickFixContext } from './report/quick-fixes';
import type { ChartData } from './gpu/occupancy-sweeps';

export { resolveArchs } from './report/launch-analysis';
export { GPU_PARTS, findGpuPart, type GpuPart } from './gpu/gpu-parts';

export type { DocumentFacts } from './incremental/document-analysis';
export type { DocumentReport, ReportSettings } from './report/document-report';
export { DEFAULT_REPORT_SETTINGS } from './report/document-report';
export { FIRST_PASS_BUDGET_MS, BACKGROUND_SLICE_MS } from './incremental/document-sessions';

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
  perArch: ReadonlyArray<{ arch: string; entries: readonly PtxasFunctionFigures[]; diagnostics: readonly PtxasDiagnostic[]; producedAt?: number }>;
  producedAt: number;
  /** The last compile failed: the figures are the previous run's, marked stale with this note. */
  stale?: string | null;
}

/** PTX of a file (`nvcc -ptx -lineinfo`) and the hash (`contentHash`) of the text it was compiled from. */
export interface CompiledPtx extends ReportPtx {
  sourceHash: string;
}

/** A compiled instance of a kernel and its figures per target architecture. */
export interface KernelInstanceFigures {
  mangledName: string | null;
  signature: string | null;
  resources: Record<string, KernelFigures>;
}

export async function createAnalyzer(options: AnalyzerOptions): Promise<Analyzer> {
  return new Analyzer(await createCudaParser(options.grammar), options);
}

export class Analyzer {
  readonly index = new WorkspaceIndex();
  /** Open documents (editors): their texts, trees and facts, kept between edits. */
  readonly documents: DocumentSessions;
  private readonly figures = new FiguresRegistry();
  private readonly compiled = new Map<string, { kernels: Array<KernelResources<Kernel>>; findings: Finding[] }>();
  private readonly ptx = new Map<string, CompiledPtx>();
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
    const tree = this.parser.parse(text);
    try {
      return analyzeDocument({ ...this.analyzeOptions(uri), uri, version, text, tree });
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
    const report = reportWithKeptAnalyses(this.reportInput(uri, facts), kept?.key.endsWith(`/${this.generation}/${this.figures.generation}`) ? kept.report : undefined);
    this.reports.set(uri, { key, report });
    return report;
  }

  /** What a quick fix in `uri` needs of the rest of the workspace: other files' launches of a kernel, and the macros its includes define. */
  quickFixContext(uri: string): QuickFixContext {
    const key = normalizePath(this.keyOf(uri));
    return {
      otherLaunches: (kernel) => this.index.launchesNamed(kernel.name).filter((l) => l.path !== key).map((l) => ({ path: l.path, line: l.launch.line, threads: l.launch.threads })),
      kernelsNamed: (qualifiedName) => this.index.paths().filter((p) => p !== key).flatMap((p) => this.index.get(p)?.kernels.filter((k) => k.qualifiedName === qualifiedName) ?? []),
      macroBody: (name) => {
        for (const path of this.index.includeClosure(key)) {
          const def = this.index.get(path)?.constants.constants.get(name);
          if (def?.kind === 'define') return def.expr;
        }
        return null;
      },
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

  /** ptxas figures and diagnostics of one compiled file, mapped to its kernels by mangled name. */
  setCompiled(uri: string, compiled: CompiledFile, kernels: readonly Kernel[] = this.kernelsOf(uri)): void {
    const entries = compiled.perArch.flatMap((a) => a.entries);
    const mapped = mapKernelResources({ kernels: [...kernels], entries, source: 'ptxas', producedAt: compiled.perArch[0]?.producedAt ?? compiled.producedAt });
    this.figures.setCompiled(uri, mapped);
    if (compiled.stale !== undefined && compiled.stale !== null) this.figures.markStale(uri, compiled.stale);
    this.compiled.set(uri, {
      kernels: mapped.kernels,
      findings: compilerFindings(
        mapped.kernels,
        compiled.perArch.flatMap((a) => a.diagnostics),
      ),
    });
  }

  /** The compiled instances of a file's kernels (one per template instantiation ptxas reported). */
  compiledKernels(uri: string): ReadonlyArray<KernelResources<Kernel>> {
    return this.compiled.get(uri)?.kernels ?? [];
  }

  /**
   * A kernel's compiled instances with their figures per target architecture: one per template
   * instantiation ptxas reported for `uri`, else one without a mangled name (annotation or unknown).
   */
  instancesOf(uri: string, kernel: Kernel): KernelInstanceFigures[] {
    const archs = this.settings.archs;
    const compiled = this.compiledKernels(uri).find((k) => k.kernel === kernel)?.instances ?? [];
    if (compiled.length) {
      return compiled.map((i) => ({
        mangledName: i.mangledName,
        signature: i.signature,
        resources: Object.fromEntries(archs.map((arch) => [arch, resourcesForArch(i.resources, arch) ?? this.figuresFor(kernel, null, arch)])),
      }));
    }
    const annotated = parseResourceAnnotation(kernel.leadingComment);
    const resources = archs.map((arch) => [arch, (annotated && resourcesForArch(annotated.resources, arch)) ?? this.figuresFor(kernel, null, arch)]);
    return [{ mangledName: null, signature: null, resources: Object.fromEntries(resources) }];
  }

  readonly figuresFor: FiguresFor = (kernel, launch, arch) => this.figures.figuresFor(kernel, launch, arch);

  /**
   * Figures from a build log's `-Xptxas -v` text, mapped to the workspace's kernels (replaces the
   * previous log's). Throws when the text holds no ptxas output.
   */
  setLog(name: string, text: string, producedAt: number | null): void {
    const output = parsePtxasOutput(text);
    if (!output.sawPtxasOutput) throw new Error(`${name} holds no ptxas output (build with -Xptxas -v)`);
    const kernels = this.index.paths().flatMap((p) => this.index.get(p)?.kernels ?? []);
    this.figures.setLog(name, mapKernelResources({ kernels, entries: output.entries, source: 'log', producedAt }).kernels);
  }

  clearLogs(): void {
    this.figures.clearLogs();
  }

  /** PTX of a file; a report uses it only while the document's text is the one it was compiled from. */
  setPtx(uri: string, ptx: CompiledPtx): void {
    this.ptx.set(uri, ptx);
    this.generation++;
  }

  /** Forget what was kept for a closed document (its figures stay: other files' launches may use its kernels). */
  forget(uri: string): void {
    this.reports.delete(uri);
    this.ptx.delete(uri);
  }

  /** Kernel bodies of `uri` not analysed yet, the one at `position` first (a hover waits for it). */
  completeAt(uri: string, position: Position): void {
    const facts = this.documents.facts(uri);
    if (!facts || facts.pendingKernels === 0 || !facts.kernels.some((k) => k.isDefinition && contains(k.span, position))) return;
    this.documents.complete(uri, 0, position);
  }

  private reportInput(uri: string, facts: DocumentFacts) {
    return {
      facts,
      archs: [...this.settings.archs],
      figuresFor: this.figuresFor,
      settings: this.settings.report,
      compilerFindings: this.compiled.get(uri)?.findings ?? [],
      ptx: this.ptxFor(uri, facts.source.text),
      parts: this.parts,
    };
  }

  private ptxFor(uri: string, text: string): ReportPtx | null {
    const ptx = this.ptx.get(uri);
    const hash = this.options.contentHash;
    return ptx && hash && ptx.sourceHash === hash(text) ? { text: ptx.text, filePath: ptx.filePath } : null;
  }

  private kernelsOf(uri: string): Kernel[] {
    const open = this.documents.has(uri) ? this.documents.facts(uri)?.kernels : undefined;
    return open ?? this.index.get(this.keyOf(uri))?.kernels ?? [];
  }

  private analyzeOptions(uri: string): Partial<AnalyzeInput> {
    return {
      workspace: this.index,
      path: this.keyOf(uri),
      archs: this.settings.archs.map((arch) => ({ arch, maxOptInSmemBytes: parseArch(arch)!.device.sharedMemPerBlockOptin })),
      divergence: this.settings.divergence,
    };
  }

  private keyOf(uri: string): string {
    return this.options.indexKey?.(uri) ?? uri;
  }
}

