/**
 * The language server: wiring only. Each handler reads the stored facts of a
 * document version and calls a feature module; nothing here parses or computes.
 */
import {
  TextDocumentSyncKind,
  type CodeLens,
  type CodeLensParams,
  type Connection,
  type Hover,
  type HoverParams,
  type InitializeParams,
  type ServerCapabilities,
} from 'vscode-languageserver/node';
import { createCudaParser } from './core/cuda-parser';
import { DocumentStore } from './document-store';
import { readGrammarBytes } from './grammar-files';
import { makeSafely } from './safely';
import { DEFAULT_SETTINGS, readSettings, type Settings } from './settings';
import { hoverAt } from './features/hover';
import { codeLenses } from './features/code-lens';
import { toDiagnostic } from './lsp-convert';
import { documentFindings } from './features/diagnostics';
import { buildDocumentReport, type DocumentReport } from './features/document-report';
import { FiguresRegistry } from './figures-registry';
import { resolveArchs } from './core/launch-analysis';

const DEFAULT_ARCHS = ['sm_80', 'sm_90'];

const DIAGNOSTICS_DELAY_MS = 150;

export class CudaOccupancyServer {
  private settings: Settings = DEFAULT_SETTINGS;
  private readonly safely: ReturnType<typeof makeSafely>;
  private readonly pendingDiagnostics = new Map<string, NodeJS.Timeout>();
  private readonly reports = new Map<string, { key: string; report: DocumentReport }>();
  private readonly figures = new FiguresRegistry();
  private settingsGeneration = 0;

  private constructor(
    private readonly connection: Connection,
    private readonly documents: DocumentStore,
    private readonly clientCapabilities: InitializeParams['capabilities'],
  ) {
    this.safely = makeSafely((m) => connection.console.error(m));
  }

  static async initialize(connection: Connection, params: InitializeParams): Promise<CudaOccupancyServer> {
    const parser = await createCudaParser(readGrammarBytes());
    const documents = new DocumentStore({ parser, log: (m) => connection.console.warn(m) });
    const server = new CudaOccupancyServer(connection, documents, params.capabilities);
    server.register();
    return server;
  }

  capabilities(): ServerCapabilities {
    return {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
      hoverProvider: true,
      codeLensProvider: { resolveProvider: false },
    };
  }

  private register(): void {
    const c = this.connection;
    c.onInitialized(() => void this.onInitialized());
    c.onDidChangeConfiguration(() => void this.reloadSettings());
    c.onDidOpenTextDocument((p) => {
      this.documents.open(p.textDocument.uri, p.textDocument.languageId, p.textDocument.version, p.textDocument.text);
      this.scheduleDiagnostics(p.textDocument.uri);
    });
    c.onDidChangeTextDocument((p) => {
      this.documents.change(p.textDocument.uri, p.textDocument.version, p.contentChanges);
      this.scheduleDiagnostics(p.textDocument.uri);
    });
    c.onDidCloseTextDocument((p) => {
      this.documents.close(p.textDocument.uri);
      this.reports.delete(p.textDocument.uri);
      clearTimeout(this.pendingDiagnostics.get(p.textDocument.uri));
      this.pendingDiagnostics.delete(p.textDocument.uri);
      void c.sendDiagnostics({ uri: p.textDocument.uri, diagnostics: [] });
    });
    c.onHover((p) => this.onHover(p));
    c.onCodeLens((p) => this.onCodeLens(p));
    c.onShutdown(() => this.documents.dispose());
  }

  private async onInitialized(): Promise<void> {
    await this.reloadSettings();
  }

  private async reloadSettings(): Promise<void> {
    if (!this.clientCapabilities.workspace?.configuration) return;
    try {
      const raw = await this.connection.workspace.getConfiguration({ section: 'cudaOccupancy' });
      const { settings, problems } = readSettings(raw);
      for (const problem of problems) this.connection.console.warn(problem);
      if (JSON.stringify(settings) === JSON.stringify(this.settings)) return;
      this.settings = settings;
      this.settingsGeneration++;
      for (const uri of this.documents.uris()) this.scheduleDiagnostics(uri);
      void this.connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
    } catch (error) {
      this.connection.console.warn(`could not read settings, using defaults: ${String(error)}`);
    }
  }

  private archs(): string[] {
    const requested = this.settings.architectures.length ? this.settings.architectures : DEFAULT_ARCHS;
    const { archs } = resolveArchs(requested);
    return archs.length ? archs : DEFAULT_ARCHS;
  }

  /** The report of a document's current version, built once per version, settings and figures. */
  private report(uri: string): DocumentReport | undefined {
    const facts = this.documents.facts(uri);
    if (!facts) return undefined;
    const key = `${facts.version}/${this.settingsGeneration}/${this.figures.generation}`;
    const cached = this.reports.get(uri);
    if (cached && cached.key === key && cached.report.facts === facts) return cached.report;
    const report = buildDocumentReport({ facts, archs: this.archs(), figuresFor: this.figures.figuresFor, findings: documentFindings });
    this.reports.set(uri, { key, report });
    return report;
  }

  private onHover(params: HoverParams): Hover | null {
    return this.safely('hover', null, () => {
      const report = this.report(params.textDocument.uri);
      return report ? hoverAt(report, params.position) : null;
    });
  }

  private onCodeLens(params: CodeLensParams): CodeLens[] {
    return this.safely('codeLens', [], () => {
      const report = this.settings['codeLens.enabled'] ? this.report(params.textDocument.uri) : undefined;
      return report ? codeLenses(report) : [];
    });
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

  private publishDiagnostics(uri: string): void {
    const report = this.safely('diagnostics', undefined, () => this.report(uri));
    if (!report) return;
    const diagnostics = report.findings.map((f) => toDiagnostic(f, uri));
    void this.connection.sendDiagnostics({ uri, version: report.facts.version, diagnostics });
  }
}
