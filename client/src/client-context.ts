/**
 * One running client: the language client, the status bar item and the
 * features' subscriptions. Restart disposes the context and makes a new one.
 */
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  TransportKind,
  type ErrorHandler,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { decideRestart } from './restart-backoff';
import { StatusBar } from './status-bar';
import { registerChart } from './chart/chart-panel';
import { registerArchitecturePicker } from './architecture-picker';
import { registerNvccArgumentCommand } from './nvcc-argument-command';
import { registerPressureHeatmap } from './pressure-heatmap';
import { settingsOrigins } from './settings-origins';
import {
  MEMORY_USAGE_REQUEST,
  STATUS_NOTIFICATION,
  type MemoryUsage,
  type ServerStatus,
} from '../../server/src/protocol';

export class ClientContext {
  readonly subscriptions: vscode.Disposable[] = [];
  client: LanguageClient | undefined;
  readonly statusBar: StatusBar;
  private crashes: number[] = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(
    readonly extension: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {
    this.statusBar = new StatusBar();
    this.subscriptions.push(this.statusBar);
  }

  async start(): Promise<void> {
    const serverModule = this.extension.asAbsolutePath('dist/server/server.js');
    // The Node options and environment the server bundle's shebang gives it (scripts/server-launch.cjs: memory and garbage-collection settings).
    const nodeArgs = typeof SERVER_NODE_ARGS === 'undefined' ? [] : SERVER_NODE_ARGS;
    // Added to the extension host's environment (vscode-languageclient merges them).
    const env = typeof SERVER_ENV === 'undefined' ? {} : SERVER_ENV;
    const serverOptions: ServerOptions = {
      run: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: nodeArgs, env } },
      debug: {
        module: serverModule,
        transport: TransportKind.ipc,
        options: { execArgv: [...nodeArgs, '--nolazy', '--inspect=6019'], env },
      },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'cuda-cpp' },
        { scheme: 'untitled', language: 'cuda-cpp' },
      ],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      synchronize: { configurationSection: 'cudaOccupancy' },
      initializationOptions: { workspaceTrusted: vscode.workspace.isTrusted },
      middleware: { workspace: settingsOrigins },
      errorHandler: this.errorHandler(),
    };
    this.client = new LanguageClient('cudaOccupancy', 'CUDA Occupancy Lens', serverOptions, clientOptions);
    this.subscriptions.push(
      this.client.onDidChangeState((e) =>
        this.statusBar.setClientState(
          e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped',
        ),
      ),
    );
    this.statusBar.setClientState('starting');
    await this.client.start();
    this.subscriptions.push(
      this.client.onNotification(STATUS_NOTIFICATION, (status: ServerStatus) => this.statusBar.setServerStatus(status)),
    );
    registerChart(this);
    registerArchitecturePicker(this);
    registerNvccArgumentCommand(this);
    registerPressureHeatmap(this);
  }

  /** The server process's memory (MEMORY_USAGE_REQUEST), or undefined when it is not running. */
  async memoryUsage(): Promise<MemoryUsage | undefined> {
    return this.client?.isRunning() ? this.client.sendRequest<MemoryUsage>(MEMORY_USAGE_REQUEST, null) : undefined;
  }

  /**
   * A crashed server is restarted with backoff (the client re-sends the open
   * documents; settings live in VS Code), and the status bar says what happens.
   */
  private errorHandler(): ErrorHandler {
    return {
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: () => {
        if (this.disposed) return { action: CloseAction.DoNotRestart, handled: true };
        const { decision, crashes } = decideRestart(this.crashes, Date.now());
        this.crashes = crashes;
        if (decision.delayMs === null) {
          const message = `The CUDA Occupancy server stopped ${decision.crashes} times in 3 minutes and was not restarted. Run "CUDA Occupancy: Restart Server" after looking at the log.`;
          this.output.error(message);
          this.statusBar.setClientState('stopped', message);
          void vscode.window.showErrorMessage(message, 'Show Log').then((choice) => choice && this.output.show());
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        this.output.warn(`the server stopped (${decision.crashes} in 3 minutes); restarting in ${decision.delayMs} ms`);
        this.statusBar.setClientState(
          'stopped',
          `The server stopped; restarting in ${Math.ceil(decision.delayMs / 1000)} s.`,
        );
        clearTimeout(this.restartTimer);
        this.restartTimer = setTimeout(() => {
          if (this.disposed || !this.client) return;
          this.client.start().catch((error) => this.output.error(`restarting the server: ${String(error)}`));
        }, decision.delayMs);
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    for (const d of this.subscriptions.splice(0)) d.dispose();
    if (client) {
      try {
        await client.stop(2000);
      } catch (error) {
        this.output.warn(`stopping the server: ${String(error)}`);
      }
    }
  }
}
