/**
 * The language server: wiring only. Each handler reads the stored facts and
 * report of a document version and calls a feature module; nothing here parses
 * or computes.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  TextDocumentSyncKind,
  CodeActionKind,
  type CodeAction,
  type CodeActionParams,
  type CodeLens,
  type CodeLensParams,
  type Connection,
  type Diagnostic,
  type Hover,
  type HoverParams,
  type InitializeParams,
  type ServerCapabilities,
} from 'vscode-languageserver/node';
import {
  createAnalyzer,
  type CapVariant,
  describeCompileFailure,
  looksCompiledAtRunTime,
  resolveArchs,
  BACKGROUND_SLICE_MS,
  GPU_PARTS,
  type Analyzer,
  type CompileState,
  type DocumentReport,
  type Toolchain,
} from '../core/analyzer';
import { DocumentStore } from './document-store';
import { readGrammarBytes } from '../files/grammar-files';
import { makeSafely } from './safely';
import { DEFAULT_SETTINGS, readSettings, withoutUntrustedFiles, type Settings } from '../settings';
import { documentLimitsOf } from '../document-limits';
import { OVERSIZE_FIELD } from './framing-guard';
import { hoverAt } from './hover';
import { codeLenses } from './code-lens';
import { codeActions } from './code-actions';
import { toDiagnostic, tooLargeDiagnostic } from './lsp-convert';
import { indexWorkspace, toIndexPath, unitFlagsPerFile, updateFromDisk } from '../files/workspace-files';
import { readBoundedFileSync } from '../files/bounded-read';
import { readPtxasLog } from '../files/ptxas-log';
import { readBuildFigures } from '../files/build-outputs';
import { chooseNvcc } from '../nvcc/locate-nvcc';
import { hostToolchain } from '../nvcc/toolchain';
import { CompileService, type DocumentPtx, type VariantResult } from '../nvcc/compile-service';
import { contentHash } from '../nvcc/compile-ptx';
import {
  CHART_DATA_REQUEST,
  MEMORY_USAGE_REQUEST,
  PRESSURE_REQUEST,
  STATUS_NOTIFICATION,
  type ChartDataParams,
  type ChartDataResult,
  type PressureParams,
  type PressureResult,
  type ServerStatus,
} from '../protocol';
import { memoryUsage } from './memory-usage';
import type { DocumentFigures } from '../nvcc/compile-scheduler';
import { IdleCollector } from './idle-collector';
import { unitsForHeader } from '../files/translation-units';
import { FreshParses } from './fresh-parses';
import { AnswerSnapshots, recordingContext, withoutMask, type AnswerSnapshot } from './answer-snapshots';

const DEFAULT_ARCHS = ['sm_80', 'sm_90'];
const DIAGNOSTICS_DELAY_MS = 150;
const PARTIAL_DIAGNOSTICS_AFTER_MS = 1000;
const BACKGROUND_START_DELAY_MS = 30;
const HEADER = /\.(cuh|h|hh|hpp|hxx|inl)$/i;

export interface InitializationOptions {
  /** VS Code's workspace trust; other editors send nothing and are trusted. */
  workspaceTrusted?: boolean;
  /** Where to keep the ptxas figures cache; null: memory only. */
  cacheDir?: string | null;
}

export interface ServerHooks {
  /** Told the document limit in bytes whenever the settings are read (the transport decodes no larger message). */
  onDocumentLimit?: (bytes: number) => void;
  /** Handed each completed analysis, for the answer thread to answer from while the next runs (answer-thread.ts). */
  onSnapshot?: (snapshot: AnswerSnapshot) => void;
  /** Told each document closed (after its last snapshot was handed over). */
  onClosed?: (uri: string) => void;
}

export class CudaOccupancyServer {
  private settings: Settings = DEFAULT_SETTINGS;
  private readonly safely: ReturnType<typeof makeSafely>;
  private readonly pendingDiagnostics = new Map<string, NodeJS.Timeout>();
  /** Documents whose kernel bodies wait for the background pass, in order (see completeInBackground). */
  private readonly completing: string[] = [];
  private completionTimer: NodeJS.Timeout | undefined;
  /** Since when a document's current version has waited for its kernel bodies (see publishDiagnostics). */
  private readonly pendingSince = new Map<string, { version: number; at: number }>();
  private readonly collector = new IdleCollector();
  /** Fresh parses on a worker thread of versions whose incremental parse may differ from one (see FreshParses). */
  private readonly freshParses: FreshParses;
  private readonly compile: CompileService;
  private readonly documents: DocumentStore;
  private logNote: string | null = null;
  /** What reading `cudaOccupancy.fromBuild` said that the user can act on (cuobjdump missing, limits hit). */
  private buildNote: string | null = null;
  /** Counts the reads of the build folders: a read that a newer one replaced is dropped. */
  private buildRead = 0;
  private warnedArchs = '';
  /**
   * Translation units compiled for open documents without being open themselves (the `.cu` files
   * that include an open header, or define a kernel an open file launches), and who wants each.
   */
  private readonly backgroundUnits = new Map<string, Set<string>>();
  /** Register caps being checked with ptxas, per document and cap key: the text and kernel each was made from. */
  private readonly capsInFlight = new Map<string, Map<string, { text: string; variant: CapVariant }>>();
  /**
   * The latest completed analysis of each document, and the edits since: what hovers, lenses and code
   * actions are answered from while a newer version waits for its analysis (answer-snapshots.ts).
   */
  private readonly answers = new AnswerSnapshots();
  /** The latest published report of each document, until an edit makes it a snapshot (see snapshotOnEdit). */
  private readonly unsnapshotted = new Map<string, { report: DocumentReport; diagnostics: Diagnostic[] }>();
  /** Each unit's last outcome (failed or fine), to go back to when a run is cancelled. */
  private readonly lastOutcome = new Map<string, CompileState | null>();

  private constructor(
    private readonly connection: Connection,
    private readonly analyzer: Analyzer,
    private readonly params: InitializeParams,
    private readonly hooks: ServerHooks,
  ) {
    this.safely = makeSafely((m) => connection.console.error(m));
    const init = (params.initializationOptions ?? {}) as InitializationOptions;
    this.documents = new DocumentStore({ sessions: analyzer.documents, limits: () => documentLimitsOf(this.settings) });
    this.freshParses = new FreshParses({
      onShape: (uri, version, shape) => this.onFreshShape(uri, version, shape),
      log: (m) => connection.console.warn(m),
    });
    this.compile = new CompileService({
      workspaceRoots: this.workspaceRoots(),
      trusted: init.workspaceTrusted !== false,
      isOpen: (uri) => this.documents.has(uri) || this.backgroundUnits.has(uri),
      log: (m) => connection.console.log(m),
      cacheDir: init.cacheDir,
      // For the register pressure of an open document, and for the costs of its divergent branches.
      variantsFor: (uri) => this.capVariantsToCheck(uri),
      inferredIncludeDirs: (file) => analyzer.index.inferredIncludeDirs(file),
      folderHolding: (header) => analyzer.index.folderHolding(header),
      wantsPtx: (uri) =>
        this.documents.has(uri) &&
        (this.settings['pressure.enabled'] ||
          (this.settings['divergence.enabled'] &&
            (this.documents.facts(uri)?.branches.some((b) => b.kind === 'divergent') ?? false))),
    });
    this.compile.onResult((result) => this.onCompiled(result));
    this.compile.onCompileStart((uri, archs) => this.onCompileStart(uri, archs));
    this.compile.onCompileEnd((uri) => this.onCompileEnd(uri));
    this.compile.onPtx((ptx) => this.onPtx(ptx));
    this.compile.onVariant((variant) => this.onVariantCompiled(variant));
    this.compile.onStateChange(() => {
      this.updateCompilerStatus();
      this.sendStatus();
    });
  }

  static async initialize(
    connection: Connection,
    params: InitializeParams,
    hooks: ServerHooks = {},
  ): Promise<CudaOccupancyServer> {
    const analyzer = await createAnalyzer({
      grammar: readGrammarBytes(),
      clock: () => performance.now(),
      indexKey,
      contentHash,
      log: (m) => connection.console.warn(m),
      settleLater: true,
    });
    // Until the settings are read (they say which nvcc), a first hover says the figures are coming.
    analyzer.setCompilerStatus('starting');
    const server = new CudaOccupancyServer(connection, analyzer, params, hooks);
    server.register();
    return server;
  }

  capabilities(): ServerCapabilities {
    return {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
      hoverProvider: true,
      codeLensProvider: { resolveProvider: false },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.RefactorRewrite] },
    };
  }

  private register(): void {
    const c = this.connection;
    c.onInitialized(() => void this.onInitialized());
    c.onDidChangeConfiguration(() => void this.reloadSettings());
    c.onDidOpenTextDocument((p) => {
      const oversize = (p as { [OVERSIZE_FIELD]?: unknown })[OVERSIZE_FIELD];
      if (typeof oversize === 'number')
        this.documents.openWithoutText(p.textDocument.uri, p.textDocument.languageId, p.textDocument.version, oversize);
      else
        this.documents.open(p.textDocument.uri, p.textDocument.languageId, p.textDocument.version, p.textDocument.text);
      this.answers.opened(p.textDocument.uri, p.textDocument.version);
      this.unsnapshotted.delete(p.textDocument.uri);
      this.indexFromAnalysis(p.textDocument.uri);
      this.scheduleDiagnostics(p.textDocument.uri);
      this.requestCompile(p.textDocument.uri);
    });
    c.onDidChangeTextDocument((p) => {
      const uri = p.textDocument.uri;
      const oversize = (p as { [OVERSIZE_FIELD]?: unknown })[OVERSIZE_FIELD];
      const changed =
        typeof oversize === 'number'
          ? this.documents.changeWithoutText(uri, p.textDocument.version, oversize)
          : this.documents.change(uri, p.textDocument.version, p.contentChanges);
      if (!changed) {
        c.console.warn(
          `ignored a change of ${uri} to version ${p.textDocument.version}: not newer than the document's`,
        );
        return;
      }
      this.answers.changed(uri, p.textDocument.version, p.contentChanges);
      this.snapshotOnEdit(uri);
      this.scheduleDiagnostics(uri);
      // The debounce is an idle window (see idle-collector.ts).
      this.collector.idle();
    });
    // The workspace index (what other files see of this one) follows saves, not keystrokes.
    c.onDidSaveTextDocument((p) => {
      const uri = p.textDocument.uri;
      this.indexFromAnalysis(uri);
      if (HEADER.test(uri)) this.invalidateOthers(uri);
      this.requestCompile(uri);
    });
    c.onDidCloseTextDocument((p) => {
      const uri = p.textDocument.uri;
      this.documents.close(uri);
      this.answers.closed(uri);
      this.unsnapshotted.delete(uri);
      this.freshParses.forget(uri);
      this.hooks.onClosed?.(uri);
      const file = filePath(uri);
      if (file)
        updateFromDisk(
          this.analyzer.index,
          file,
          Math.min(1024 * 1024, this.settings['limits.fileMB'] * 1024 * 1024),
          this.indexError,
        );
      else this.analyzer.index.remove(indexKey(uri));
      this.releaseUnits(uri);
      if (!this.backgroundUnits.has(uri)) this.compile.close(uri);
      this.analyzer.forget(uri);
      clearTimeout(this.pendingDiagnostics.get(uri));
      this.pendingDiagnostics.delete(uri);
      this.pendingSince.delete(uri);
      void c.sendDiagnostics({ uri, diagnostics: [] });
    });
    c.onHover((p) => this.onHover(p));
    c.onCodeLens((p) => this.onCodeLens(p));
    c.onCodeAction((p) => this.onCodeAction(p));
    c.onRequest(CHART_DATA_REQUEST, (p: ChartDataParams) => this.onChartData(p));
    c.onRequest(PRESSURE_REQUEST, (p: PressureParams) => this.onPressure(p));
    c.onRequest(MEMORY_USAGE_REQUEST, () =>
      memoryUsage(this.documents.uris().length, this.collector.enabled ? this.collector : null),
    );
    c.onShutdown(() => {
      clearTimeout(this.completionTimer);
      this.completing.length = 0;
      this.collector.dispose();
      this.freshParses.dispose();
      this.compile.dispose();
      this.documents.dispose();
    });
  }

  private async onInitialized(): Promise<void> {
    // Index before the first document is analysed, so its includes resolve from the first hover on.
    this.safely('workspace index', undefined, () => {
      const { scan } = indexWorkspace(this.workspaceRoots(), {
        index: this.analyzer.index,
        maxFiles: 2000,
        onError: this.indexError,
      });
      this.connection.console.log(
        `indexed ${scan.files.length} CUDA files${scan.truncated ? ' (stopped at the limit)' : ''}`,
      );
      this.invalidateOthers(null);
    });
    await this.reloadSettings(true);
  }

  /** One file whose indexing failed: left out of the index, which goes on with the others. */
  private readonly indexError = (file: string, message: string): void =>
    this.connection.console.error(`[error] indexing ${file} failed: ${message} (left out of the workspace index)`);

  /** What other files see of an open document: its analysed text passes (the first pass of its current version). */
  private indexFromAnalysis(uri: string): void {
    this.safely('workspace index', undefined, () => {
      const facts = this.documents.facts(uri);
      if (facts) this.analyzer.index.updateFromAnalysis(indexKey(uri), facts);
    });
  }

  private workspaceRoots(): string[] {
    const folders =
      this.params.workspaceFolders?.map((f) => f.uri) ?? (this.params.rootUri ? [this.params.rootUri] : []);
    return folders.map(filePath).filter((p): p is string => p !== null);
  }

  /**
   * Each unit's preprocessor reads the flags nvcc gets (`-D`, `-I` …), kept per file until the
   * settings change, and the CUDA version of the nvcc chosen.
   */
  private async configureUnits(): Promise<void> {
    // `nvcc --version` answers in milliseconds; one that hangs must not hold the first analysis up.
    const toolchain = await Promise.race([
      this.compile.toolchain(),
      new Promise<Toolchain>((resolve) => setTimeout(() => resolve(hostToolchain()), 2000).unref()),
    ]);
    this.analyzer.setUnitFlags(
      unitFlagsPerFile((file) => this.compile.preprocessorFlags(file)),
      toolchain,
    );
  }

  private async reloadSettings(force = false): Promise<void> {
    let settings = DEFAULT_SETTINGS;
    let fromWorkspace: ReadonlySet<keyof Settings> | null = null;
    if (this.params.capabilities.workspace?.configuration) {
      try {
        const raw = await this.connection.workspace.getConfiguration({ section: 'cudaOccupancy' });
        const read = readSettings(raw);
        // An untrusted workspace's own settings name no file to read (the trusted-only programs and flags: compile-service.ts).
        const untrusted = this.trusted() ? null : withoutUntrustedFiles(read);
        for (const problem of [...read.problems, ...(untrusted?.problems ?? [])]) this.connection.console.warn(problem);
        settings = untrusted?.settings ?? read.settings;
        fromWorkspace = read.fromWorkspace;
      } catch (error) {
        this.connection.console.warn(`could not read settings, using defaults: ${String(error)}`);
      }
    }
    if (!force && JSON.stringify(settings) === JSON.stringify(this.settings)) return;
    this.settings = settings;
    this.hooks.onDocumentLimit?.(documentLimitsOf(settings).maxBytes);
    this.documents.recheckLimits();
    await this.compile.configure(settings, () => this.archs(), fromWorkspace);
    await this.configureUnits();
    this.updateCompilerStatus();
    this.indexDatabaseFiles();
    this.analyzer.configure({
      archs: this.archs(),
      gpus: settings.gpus,
      divergence: settings['divergence.enabled'],
      report: {
        latencyCycles: settings.latencyCycles,
        occupancyWarningBelow: settings.occupancyWarningBelow,
        divergenceMinCost: settings['divergence.minCost'],
        divergenceMinShare: settings['divergence.minShare'],
        divergenceEnabled: settings['divergence.enabled'],
        gridFindings: settings.gridFindings,
        pressureEnabled: settings['pressure.enabled'],
      },
    });
    const { unknown } = this.analyzer.gpus;
    if (unknown.length)
      this.connection.console.warn(
        `unknown GPUs in cudaOccupancy.gpus: ${unknown.join(', ')} (known: ${GPU_PARTS.map((p) => p.name).join(', ')})`,
      );
    this.loadPtxasLog();
    void this.loadFromBuild(fromWorkspace);
    this.refreshAll();
    for (const uri of this.documents.uris()) this.requestCompile(uri);
  }

  /** Figures from the build folders of `cudaOccupancy.fromBuild` (cuobjdump of their objects, their logs); nothing is compiled. */
  private async loadFromBuild(fromWorkspace: ReadonlySet<keyof Settings> | null): Promise<void> {
    const read = ++this.buildRead;
    this.buildNote = null;
    const dirs = this.settings.fromBuild;
    if (dirs.length === 0) return;
    const root = this.workspaceRoots()[0] ?? process.cwd();
    const { nvccPath } = chooseNvcc({
      configured: this.settings['nvcc.path'],
      fromWorkspace: fromWorkspace?.has('nvcc.path') ?? true,
      allowedCompilers: this.settings['nvcc.allowedCompilers'],
      cwd: root,
    });
    try {
      const result = await readBuildFigures({
        dirs: dirs.map((d) => path.resolve(root, d)),
        nvccPath,
        timeoutMs: this.settings['nvcc.timeoutSeconds'] * 1000,
        jobs: this.settings['nvcc.maxParallel'],
        limits: { maxLogBytes: this.settings['limits.fileMB'] * 1024 * 1024 },
      });
      if (read !== this.buildRead) return;
      for (const note of result.notes) this.connection.console.warn(`cudaOccupancy.fromBuild: ${note}`);
      const c = result.counts;
      this.connection.console.log(
        `cudaOccupancy.fromBuild: ${result.build.size} figures from ${c.objectsWithFigures} of ${c.objects} objects read and ${c.logsWithFigures} of ${c.logs} logs`,
      );
      this.buildNote = result.notes.length ? result.notes.map((n) => `cudaOccupancy.fromBuild: ${n}`).join('\n') : null;
      this.analyzer.setBuildFigures('cudaOccupancy.fromBuild', result.build);
      this.refreshAll();
      this.sendStatus();
    } catch (error) {
      this.connection.console.error(`[error] cudaOccupancy.fromBuild failed: ${String(error)}`);
    }
  }

  private loadPtxasLog(): void {
    this.analyzer.clearLogs();
    this.logNote = null;
    const file = this.settings.ptxasLog;
    if (!file) return;
    const root = this.workspaceRoots()[0] ?? process.cwd();
    const full = path.resolve(root, file);
    try {
      const log = readPtxasLog(full, this.settings['limits.fileMB'] * 1024 * 1024);
      this.analyzer.setLog(full, log.text, log.producedAt);
    } catch (error) {
      this.logNote = (error as Error).message;
      this.connection.console.warn(this.logNote);
    }
  }

  private archs(): string[] {
    const requested = this.settings.architectures.length
      ? this.settings.architectures
      : this.compile?.archsFromDatabase.length
        ? this.compile.archsFromDatabase
        : DEFAULT_ARCHS;
    const { archs, unknown } = resolveArchs(requested);
    // Asked on every request: each set of unknown names is reported once.
    if (unknown.length && unknown.join() !== this.warnedArchs)
      this.connection.console.warn(`unknown architectures in cudaOccupancy.architectures: ${unknown.join(', ')}`);
    this.warnedArchs = unknown.join();
    return archs.length ? archs : DEFAULT_ARCHS;
  }

  private archSource(): string {
    if (this.settings.architectures.length) return 'settings';
    if (this.compile.archsFromDatabase.length) return 'compile_commands.json';
    return 'default';
  }

  /** The report of a document's current version; kernel bodies still pending go on in the background. */
  private report(uri: string): DocumentReport | undefined {
    if ((this.documents.facts(uri)?.pendingKernels ?? 0) > 0) this.completeInBackground(uri);
    return this.analyzer.report(uri);
  }

  private onHover(params: HoverParams): Hover | null {
    return this.safely('hover', null, () => {
      if (this.answers.answersFor(params.textDocument.uri)) return this.answers.hover(params);
      this.analyzer.completeAt(params.textDocument.uri, params.position);
      const report = this.report(params.textDocument.uri);
      return report ? hoverAt(report, params.position) : null;
    });
  }

  private onCodeLens(params: CodeLensParams): CodeLens[] {
    return this.safely('codeLens', [], () => {
      if (this.answers.answersFor(params.textDocument.uri)) return this.answers.codeLenses(params.textDocument.uri);
      const report = this.settings['codeLens.enabled'] ? this.report(params.textDocument.uri) : undefined;
      return report ? codeLenses(report, { waves: this.settings['codeLens.waves'] }) : [];
    });
  }

  private onCodeAction(params: CodeActionParams): CodeAction[] {
    return this.safely('codeAction', [], () => {
      if (this.answers.answersFor(params.textDocument.uri)) return this.answers.codeActions(params);
      const report = this.report(params.textDocument.uri);
      const disabledSupport = this.params.capabilities.textDocument?.codeAction?.disabledSupport === true;
      return report
        ? codeActions(report, params.range, params.context.diagnostics, {
            ...this.analyzer.quickFixContext(params.textDocument.uri),
            fileText: (file) => this.fileText(file),
            disabledSupport,
          })
        : [];
    });
  }

  /**
   * The document moved on from its latest published report: that report becomes the snapshot answers
   * come from (here, and on the answer thread) until the new version's analysis completes. Made now,
   * in the debounce before that analysis, rather than with every publication.
   */
  private snapshotOnEdit(uri: string): void {
    const published = this.unsnapshotted.get(uri);
    if (!published) return;
    this.unsnapshotted.delete(uri);
    this.safely('snapshot', undefined, () => {
      const snapshot = this.snapshot(uri, published.report, published.diagnostics);
      this.answers.completed(snapshot);
      this.hooks.onSnapshot?.(snapshot);
    });
  }

  /**
   * A completed analysis as the answer thread keeps it: the report, its lenses, and what its quick
   * fixes read of the workspace (recorded by asking for every fix of the document once).
   */
  private snapshot(uri: string, report: DocumentReport, diagnostics: Diagnostic[]): AnswerSnapshot {
    const { context, recorded } = recordingContext({
      ...this.analyzer.quickFixContext(uri),
      fileText: (file) => this.fileText(file),
    });
    const end = { line: Number.MAX_SAFE_INTEGER, character: 0 };
    codeActions(report, { start: { line: 0, character: 0 }, end }, diagnostics, context);
    return {
      uri,
      version: report.facts.version,
      // Without what only the report's making reads (a third of a 25k-line document's copy, and its time).
      report: {
        ...report,
        facts: {
          ...report.facts,
          memoryParallelism: [],
          launchTargets: [],
          parseErrors: [],
          branches: [],
          // The report's own copy (cross-checked against the PTX) is what answers read.
          memory: [],
          source: withoutMask(report.facts.source),
        },
      },
      lenses: this.settings['codeLens.enabled'] ? codeLenses(report, { waves: this.settings['codeLens.waves'] }) : null,
      fixContext: recorded,
      disabledSupport: this.params.capabilities.textDocument?.codeAction?.disabledSupport === true,
    };
  }

  private onChartData(params: ChartDataParams): ChartDataResult {
    return this.safely('chartData', null, () => {
      if ((this.documents.facts(params.uri)?.pendingKernels ?? 0) > 0) this.completeInBackground(params.uri);
      return this.analyzer.chartData(params.uri, params);
    });
  }

  private onPressure(params: PressureParams): PressureResult {
    return this.safely('pressure', null, () => {
      return this.settings['pressure.enabled'] ? this.analyzer.pressure(params.uri) : null;
    });
  }

  /**
   * Compile what an open document's figures need: the document itself when it is a `.cu`; for a
   * header, the units that include it (and launch or instantiate its kernels); and the `.cu` files
   * that define the kernels it launches. Units that are not open compile in the background.
   */
  private requestCompile(uri: string): void {
    const file = filePath(uri);
    if (!file) return;
    if (this.documents.tooLarge(uri)) return;
    let asked = /\.cu$/i.test(file) && this.compile.request(uri, file) && this.markQueued(uri);
    this.safely('translation units', undefined, () => {
      for (const unit of this.unitsFor(uri, file)) {
        const unitUri = pathToFileURL(unit).href;
        if (unitUri === uri || this.documents.has(unitUri)) continue;
        const wanting = this.backgroundUnits.get(unitUri) ?? new Set<string>();
        wanting.add(uri);
        this.backgroundUnits.set(unitUri, wanting);
        if (this.compile.request(unitUri, unit) && this.markQueued(unitUri)) asked = true;
      }
    });
    if (asked) this.refreshFigures();
  }

  /**
   * A compile is asked for: from now until its result, hovers, lenses and the status bar say
   * "compiling" (nvcc starts after a debounce, or waits for a free slot), not "registers unknown".
   * True when the state changed.
   */
  private markQueued(uri: string): boolean {
    if (this.analyzer.compileState(uri)?.state === 'running') return false;
    this.analyzer.setCompileState(uri, { state: 'running', archs: [], since: Date.now(), queued: true });
    return true;
  }

  /** Whether nvcc can compile, for the texts of figures nothing gave: only a missing nvcc is asked for. */
  private updateCompilerStatus(): void {
    const reason = this.compile.disabledReason;
    this.analyzer.setCompilerStatus(
      this.compile.compiling
        ? 'available'
        : reason?.startsWith('nvcc not found')
          ? 'missing'
          : reason?.startsWith('nvcc is switched off')
            ? 'off'
            : null,
    );
  }

  /** The translation units (paths) whose compiles give an open document's kernels and launches their figures, besides itself. */
  private unitsFor(uri: string, file: string): string[] {
    const key = indexKey(uri);
    const facts = this.documents.facts(uri);
    const units = new Set<string>();
    if (HEADER.test(file)) {
      // Its kernels, and the kernels it launches (a header of host wrappers): the units that name them compile them.
      const defined = (facts?.kernels ?? this.analyzer.index.get(key)?.kernels ?? [])
        .filter((k) => k.isDefinition)
        .map((k) => k.name);
      const kernelNames = [...defined, ...(facts?.launches ?? []).map((l) => l.baseName)];
      const includers = this.analyzer.index.includersOf(key);
      for (const unit of unitsForHeader({
        includers,
        databaseFiles: new Set(this.compile.databaseFiles().map(toIndexPath)),
        kernelNames,
      }))
        units.add(unit);
    }
    for (const target of facts?.launchTargets ?? []) {
      const defined = target.kernelPath;
      if (defined && defined !== key && /\.cu$/i.test(defined)) units.add(defined);
    }
    return [...units];
  }

  /** Another file's text for a fix's edit in it (a kernel's header): as open in the editor, else from disk (the index reads it so). */
  private fileText(file: string): string | null {
    const open = this.documents.facts(pathToFileURL(file).href)?.source.text;
    if (open !== undefined) return open;
    try {
      return readBoundedFileSync(file, {
        maxBytes: Math.min(1024 * 1024, this.settings['limits.fileMB'] * 1024 * 1024),
      }).text;
    } catch {
      return null;
    }
  }

  /** A document closed: the background units it alone wanted stop compiling. */
  private releaseUnits(uri: string): void {
    for (const [unit, wanting] of this.backgroundUnits) {
      if (!wanting.delete(uri) || wanting.size > 0) continue;
      this.backgroundUnits.delete(unit);
      if (!this.documents.has(unit)) this.compile.close(unit);
    }
  }

  /** Files compile_commands.json lists but the workspace scan did not reach: indexed, so headers find the units that include them. */
  private indexDatabaseFiles(): void {
    this.safely('workspace index', undefined, () => {
      let added = 0;
      for (const file of this.compile.databaseFiles()) {
        if (added >= 2000) break;
        if (this.analyzer.index.get(toIndexPath(file))) continue;
        if (updateFromDisk(this.analyzer.index, file, undefined, this.indexError)) added++;
      }
    });
  }

  private onCompileStart(uri: string, archs: string[]): void {
    this.safely('compile start', undefined, () => {
      this.analyzer.setCompileState(uri, { state: 'running', archs, since: Date.now() });
      this.refreshFigures();
    });
  }

  /** A run ended without a result (cancelled by a newer save, closed): back to what the last result said. */
  private onCompileEnd(uri: string): void {
    this.safely('compile end', undefined, () => {
      // Caps whose check did not finish (a newer save cancelled it) are asked again after the next compile.
      if (this.capsInFlight.get(uri)?.size) this.analyzer.clearRunningCapChecks(uri);
      this.capsInFlight.delete(uri);
      if (this.analyzer.compileState(uri)?.state !== 'running') return;
      // A newer save asked for another compile: it is coming.
      if (this.compile.pending(uri))
        this.analyzer.setCompileState(uri, { state: 'running', archs: [], since: Date.now(), queued: true });
      else this.analyzer.setCompileState(uri, this.lastOutcome.get(uri) ?? null);
      this.refreshFigures();
    });
  }

  /**
   * After an open document's figures are in: the register caps its fixes propose that ptxas has not
   * checked for this text, marked as being checked (the fixes and the hover say so until they are).
   */
  private capVariantsToCheck(uri: string): Array<{ key: string; text: string; flags: string[] }> {
    return this.safely('register caps', [], () => {
      if (!this.documents.has(uri)) return [];
      const report = this.analyzer.report(uri);
      if (!report) return [];
      const text = report.facts.source.text;
      const variants = this.analyzer.capVariants(report).filter((v) => !this.analyzer.capCheckState(uri, text, v.key));
      const inFlight = new Map<string, { text: string; variant: CapVariant }>();
      for (const variant of variants) {
        this.analyzer.setCapCheck(uri, text, variant, { state: 'checking' });
        inFlight.set(variant.key, { text, variant });
      }
      this.capsInFlight.set(uri, inFlight);
      return variants.map((v) => ({ key: v.key, text: v.text, flags: v.flags }));
    });
  }

  private onVariantCompiled({ uri, key, result }: VariantResult): void {
    this.safely('register cap check', undefined, () => {
      const pending = this.capsInFlight.get(uri)?.get(key);
      if (!pending || !this.documents.has(uri)) return;
      this.capsInFlight.get(uri)!.delete(key);
      this.analyzer.setCapCheck(
        uri,
        pending.text,
        pending.variant,
        result.status === 'ok'
          ? { state: 'done', entries: result.entries }
          : { state: 'failed', message: result.firstError?.text ?? `nvcc ${result.status}` },
      );
      // LSP has no request that refreshes code actions; a client asks for them again when the document's
      // diagnostics are published (VS Code's light bulb does), so the fixes' titles stop saying "checking".
      this.scheduleDiagnostics(uri);
    });
  }

  private onCompiled(result: DocumentFigures): void {
    this.safely('compile result', undefined, () => {
      if (!this.documents.has(result.uri) && !this.backgroundUnits.has(result.uri)) return;
      const stale = result.stale
        ? result.error
          ? `last compile failed: ${result.error.text}`
          : 'last compile failed'
        : null;
      this.analyzer.setCompiled(result.uri, { perArch: result.perArch, producedAt: result.updatedAt, stale });
      const error = result.error;
      const failed = result.last.status !== 'ok' && !this.compiledAtRunTime(result.uri, result.path);
      const outcome: CompileState | null = failed
        ? {
            state: 'failed',
            error: error ? { text: error.text, message: error.message, file: error.file, line: error.line } : null,
          }
        : null;
      this.lastOutcome.set(result.uri, outcome);
      this.analyzer.setCompileState(result.uri, outcome);
      this.refreshAll();
    });
  }

  /** Kernel source a program compiles at run time (no #include, no host code): its failed compile is not shown. */
  private compiledAtRunTime(uri: string, file: string): boolean {
    const open = this.documents.facts(uri)?.source.text;
    if (open !== undefined) return looksCompiledAtRunTime(open);
    try {
      return looksCompiledAtRunTime(readFileSync(file, 'utf8'));
    } catch {
      return false;
    }
  }

  /** Compile states changed: hovers read them when asked; lenses and the status bar are told now. */
  private refreshFigures(): void {
    if (this.params.capabilities.workspace?.codeLens?.refreshSupport)
      void this.connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
    this.sendStatus();
  }

  private onPtx(ptx: DocumentPtx): void {
    this.safely('ptx result', undefined, () => {
      if (!this.documents.has(ptx.uri)) return;
      this.analyzer.setPtx(ptx.uri, { text: ptx.text, filePath: ptx.path, sourceHash: ptx.sourceHash, sass: ptx.sass });
      this.scheduleDiagnostics(ptx.uri);
      // The pressure lens follows the PTX.
      if (this.params.capabilities.workspace?.codeLens?.refreshSupport)
        void this.connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
    });
  }

  private invalidateOthers(changed: string | null): void {
    for (const uri of this.documents.uris()) if (uri !== changed) this.documents.invalidate(uri);
    this.refreshAll(changed);
  }

  /** New figures or settings: republish diagnostics and ask the client to re-read lenses. */
  private refreshAll(except: string | null = null): void {
    for (const uri of this.documents.uris()) if (uri !== except) this.scheduleDiagnostics(uri);
    if (this.params.capabilities.workspace?.codeLens?.refreshSupport)
      void this.connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
    this.sendStatus();
  }

  private trusted(): boolean {
    return ((this.params.initializationOptions ?? {}) as InitializationOptions).workspaceTrusted !== false;
  }

  private sendStatus(): void {
    const running = this.compile.running;
    const trusted = this.trusted();
    const failures = this.analyzer.compileFailures();
    const failed = failures.map(({ path: file, error }) => {
      const text = describeCompileFailure(error, 'editor');
      return `nvcc failed for ${path.basename(file)}: ${text.summary}${text.hint ? `; ${text.hint}` : ''}`;
    });
    const status: ServerStatus = {
      state:
        running > 0
          ? 'compiling'
          : this.compile.disabledReason?.startsWith('nvcc not found')
            ? 'nvcc-missing'
            : !trusted
              ? 'untrusted'
              : failures.length
                ? 'nvcc-failed'
                : 'ready',
      archs: this.archs(),
      archSource: this.archSource(),
      gpus: this.analyzer.gpus.parts.map((p) => p.name),
      gpuChoices: GPU_PARTS.map((p) => ({ name: p.name, arch: p.arch })),
      message: [
        this.compile.disabledReason,
        trusted
          ? null
          : 'Untrusted workspace: nvcc runs without flags from workspace settings or compile_commands.json; the static analysis keeps working.',
        ...failed.slice(0, 3),
        failed.length > 3 ? `and ${failed.length - 3} more files` : null,
        this.logNote,
        this.buildNote,
      ]
        .filter(Boolean)
        .join('\n\n'),
      compilesRunning: running,
      analysing: this.completing.length,
      compileFailures: failures.length,
    };
    void this.connection.sendNotification(STATUS_NOTIFICATION, status);
  }

  /**
   * Analyse the kernel bodies a first pass left pending, a slice at a time so that requests
   * are answered in between, one document after another (each keeps its syntax tree while it
   * is worked on); then publish its diagnostics again and ask for new lenses.
   */
  private completeInBackground(uri: string): void {
    if (this.completing.includes(uri)) return;
    this.completing.push(uri);
    if (this.completing.length === 1) this.sendStatus();
    // After a pause: the requests that came with the document (a first hover) are answered first.
    this.completionTimer ??= setTimeout(() => this.completionStep(), BACKGROUND_START_DELAY_MS);
  }

  private completionStep(): void {
    this.completionTimer = undefined;
    const uri = this.completing[0];
    if (uri === undefined) return;
    const more =
      this.documents.has(uri) &&
      this.safely(
        'background analysis',
        false,
        () => this.documents.complete(uri, BACKGROUND_SLICE_MS) && (this.documents.facts(uri)?.pendingKernels ?? 0) > 0,
      );
    if (!more) {
      this.completing.shift();
      if (this.documents.has(uri)) {
        // At once: the version's debounce has passed already (or a hover asked for it).
        clearTimeout(this.pendingDiagnostics.get(uri));
        this.pendingDiagnostics.delete(uri);
        this.publishDiagnostics(uri);
        if (this.params.capabilities.workspace?.codeLens?.refreshSupport)
          void this.connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
      }
    }
    if (this.completing.length > 0) this.completionTimer = setTimeout(() => this.completionStep(), 0);
    else if (!more) {
      this.sendStatus();
      this.collector.settled();
    }
  }

  private scheduleDiagnostics(uri: string): void {
    clearTimeout(this.pendingDiagnostics.get(uri));
    this.pendingDiagnostics.set(
      uri,
      setTimeout(() => {
        this.pendingDiagnostics.delete(uri);
        this.publishDiagnostics(uri);
      }, DIAGNOSTICS_DELAY_MS),
    );
  }

  /**
   * Diagnostics of a version are published once its kernel bodies are all analysed (the
   * background pass publishes them when it ends), so warnings do not arrive in two waves; a
   * pass that takes longer than PARTIAL_DIAGNOSTICS_AFTER_MS publishes what is known meanwhile.
   */
  private publishDiagnostics(uri: string): void {
    const tooLarge = this.documents.tooLarge(uri);
    if (tooLarge) {
      void this.connection.sendDiagnostics({
        uri,
        version: this.documents.version(uri),
        diagnostics: [tooLargeDiagnostic(tooLarge)],
      });
      return;
    }
    const report = this.safely('diagnostics', undefined, () => this.report(uri));
    if (!report) return;
    if (report.facts.pendingKernels > 0) {
      const since = this.pendingSince.get(uri);
      if (!since || since.version !== report.facts.version)
        this.pendingSince.set(uri, { version: report.facts.version, at: Date.now() });
      else if (Date.now() - since.at >= PARTIAL_DIAGNOSTICS_AFTER_MS) this.sendDiagnostics(uri, report);
      if (!since || since.version !== report.facts.version)
        setTimeout(() => this.documents.has(uri) && this.publishDiagnostics(uri), PARTIAL_DIAGNOSTICS_AFTER_MS);
      return;
    }
    this.pendingSince.delete(uri);
    this.sendDiagnostics(uri, report);
  }

  private sendDiagnostics(uri: string, report: DocumentReport): void {
    const diagnostics = report.findings.map((f) => toDiagnostic(f, uri));
    void this.connection.sendDiagnostics({ uri, version: report.facts.version, diagnostics });
    // The answers of this version come from the report while it is current; its snapshot is made once the document moves on.
    this.answers.published(uri, report.facts.version);
    this.unsnapshotted.set(uri, { report, diagnostics });
    // Answered from an incremental parse near an error: a fresh parse on the worker thread checks it.
    const unsettled = this.documents.unsettled(uri);
    if (unsettled && unsettled.version === report.facts.version)
      this.freshParses.request(uri, unsettled.version, unsettled.text);
  }

  /**
   * The fresh parse's shape of a version answered from an unsettled incremental parse: the same
   * tree, or the version is parsed again here and its diagnostics and lenses sent again.
   */
  private onFreshShape(uri: string, version: number, shape: string | null): void {
    if (!this.documents.has(uri)) return;
    // Without a shape (the thread failed), the version is parsed again here.
    if (this.documents.settle(uri, version, shape ?? '') !== 'parsed again') return;
    this.publishDiagnostics(uri);
    if (this.params.capabilities.workspace?.codeLens?.refreshSupport)
      void this.connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
  }
}

function filePath(uri: string): string | null {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : null;
  } catch {
    return null;
  }
}

/** The workspace index knows files by absolute path; untitled documents by their URI. */
function indexKey(uri: string): string {
  const file = filePath(uri);
  return file ? toIndexPath(file) : uri;
}
