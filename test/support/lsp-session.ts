/**
 * Test what ships: spawn the bundled server (dist/server/server.js --stdio) and
 * speak LSP to it with a real JSON-RPC client.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type CodeLens,
  type Diagnostic,
  type Hover,
  type InitializeResult,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const SERVER_BUNDLE = path.join(REPO_ROOT, 'dist', 'server', 'server.js');

export interface SessionOptions {
  settings?: Record<string, unknown>;
  rootDir?: string;
  serverPath?: string;
  env?: NodeJS.ProcessEnv;
  initializationOptions?: unknown;
}

/** scripts/server-launch.cjs: how the server process is started, read back from a bundle's shebang. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script of the build, read as it ships
const { launchFromShebang } = require(path.join(REPO_ROOT, 'scripts', 'server-launch.cjs')) as {
  launchFromShebang(firstLine: string): { env: Record<string, string>; args: string[] };
};

/** The environment and Node options in a bundle's shebang: the server runs with them as it ships. */
export function launchOf(bundlePath: string): { env: Record<string, string>; args: string[] } {
  return launchFromShebang(readFileSync(bundlePath, 'utf8').split('\n', 1)[0]);
}

export class LspSession {
  readonly diagnostics = new Map<string, PublishDiagnosticsParams>();
  /** Every publication, in order (a client that re-reads code actions when diagnostics arrive watches these). */
  readonly published: PublishDiagnosticsParams[] = [];
  readonly logs: string[] = [];
  private readonly waiters: Array<() => void> = [];
  private versions = new Map<string, number>();
  initializeResult!: InitializeResult;

  private constructor(
    readonly process: ChildProcessWithoutNullStreams,
    readonly connection: ProtocolConnection,
    private settings: Record<string, unknown>,
  ) {}

  static async start(options: SessionOptions = {}): Promise<LspSession> {
    const serverPath = options.serverPath ?? SERVER_BUNDLE;
    const launch = launchOf(serverPath);
    const child = spawn(process.execPath, [...launch.args, serverPath, '--stdio'], {
      env: { ...process.env, ...launch.env, ...options.env },
      stdio: 'pipe',
    });
    const connection = createProtocolConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    const session = new LspSession(child, connection, options.settings ?? {});
    child.stderr.on('data', (d) => session.logs.push(String(d)));
    connection.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      session.diagnostics.set(p.uri, p);
      session.published.push(p);
      session.notify();
    });
    connection.onNotification('window/logMessage', (p: { message: string }) => session.logs.push(p.message));
    connection.onRequest('workspace/configuration', (p: { items: Array<{ section?: string }> }) =>
      p.items.map(() => session.settings),
    );
    connection.onRequest('workspace/codeLens/refresh', () => null);
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onRequest('client/registerCapability', () => null);
    connection.listen();
    const root = options.rootDir ?? REPO_ROOT;
    try {
      session.initializeResult = await connection.sendRequest('initialize', {
        processId: process.pid,
        rootUri: pathToFileURL(root).href,
        workspaceFolders: [{ uri: pathToFileURL(root).href, name: path.basename(root) }],
        capabilities: {
          workspace: {
            configuration: true,
            didChangeConfiguration: { dynamicRegistration: false },
            codeLens: { refreshSupport: true },
          },
          textDocument: { hover: { contentFormat: ['markdown'] }, publishDiagnostics: { relatedInformation: true } },
        },
        initializationOptions: options.initializationOptions,
      });
    } catch (error) {
      connection.dispose();
      child.kill();
      throw error;
    }
    await connection.sendNotification('initialized', {});
    return session;
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  open(uri: string, text: string, languageId = 'cuda-cpp'): void {
    this.versions.set(uri, 1);
    void this.connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId, version: 1, text },
    });
  }

  change(
    uri: string,
    changes: Array<{
      range?: { start: { line: number; character: number }; end: { line: number; character: number } };
      text: string;
    }>,
  ): void {
    const version = (this.versions.get(uri) ?? 1) + 1;
    this.versions.set(uri, version);
    void this.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges: changes,
    });
  }

  close(uri: string): void {
    void this.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  setSettings(settings: Record<string, unknown>): void {
    this.settings = settings;
    void this.connection.sendNotification('workspace/didChangeConfiguration', { settings: {} });
  }

  hover(uri: string, position: { line: number; character: number }): Promise<Hover | null> {
    return this.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position });
  }

  codeLenses(uri: string): Promise<CodeLens[] | null> {
    return this.connection.sendRequest('textDocument/codeLens', { textDocument: { uri } });
  }

  request<T>(method: string, params: unknown): Promise<T> {
    return this.connection.sendRequest(method, params);
  }

  /** Wait (polling on notifications, no fixed sleeps) until the diagnostics for `uri` satisfy `accept`. */
  async waitForDiagnostics(
    uri: string,
    accept: (d: Diagnostic[]) => boolean = () => true,
    timeoutMs = 10000,
  ): Promise<Diagnostic[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = this.diagnostics.get(uri);
      if (
        current &&
        (current.version === undefined || current.version === this.versions.get(uri)) &&
        accept(current.diagnostics)
      )
        return current.diagnostics;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no matching diagnostics for ${uri} within ${timeoutMs} ms; last: ${JSON.stringify(current?.diagnostics)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    try {
      await Promise.race([this.connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 2000))]);
      void this.connection.sendNotification('exit');
    } catch {
      // the server may already be gone
    }
    this.connection.dispose();
    if (this.process.exitCode === null) this.process.kill();
  }
}

/** A `.cu` snippet with a `|` cursor marker: the text without it and the cursor's position. */
export function withCursor(
  snippet: string,
  marker = '|',
): { text: string; position: { line: number; character: number } } {
  const offset = snippet.indexOf(marker);
  if (offset < 0) throw new Error('snippet has no cursor marker');
  const text = snippet.slice(0, offset) + snippet.slice(offset + marker.length);
  const before = text.slice(0, offset).split('\n');
  return { text, position: { line: before.length - 1, character: before[before.length - 1].length } };
}

export const fileUri = (p: string) => pathToFileURL(p).href;
