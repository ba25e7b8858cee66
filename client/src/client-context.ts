/**
 * One running client: the language client, the status bar item and the
 * features' subscriptions. Restart disposes the context and makes a new one.
 */
import * as vscode from 'vscode';
import { LanguageClient, RevealOutputChannelOn, State, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { StatusBar } from './status-bar';
import { registerChart } from './chart/chart-panel';
import { registerArchitecturePicker } from './architecture-picker';
import { registerNvccArgumentCommand } from './nvcc-argument-command';
import { STATUS_NOTIFICATION, type ServerStatus } from '../../server/src/protocol';

export class ClientContext {
  readonly subscriptions: vscode.Disposable[] = [];
  client: LanguageClient | undefined;
  readonly statusBar: StatusBar;

  constructor(
    readonly extension: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {
    this.statusBar = new StatusBar();
    this.subscriptions.push(this.statusBar);
  }

  async start(): Promise<void> {
    const serverModule = this.extension.asAbsolutePath('dist/server/server.js');
    const serverOptions: ServerOptions = {
      run: { module: serverModule, transport: TransportKind.ipc },
      debug: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
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
    };
    this.client = new LanguageClient('cudaOccupancy', 'CUDA Occupancy Lens', serverOptions, clientOptions);
    this.subscriptions.push(
      this.client.onDidChangeState((e) => this.statusBar.setClientState(e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped')),
    );
    this.statusBar.setClientState('starting');
    await this.client.start();
    this.subscriptions.push(this.client.onNotification(STATUS_NOTIFICATION, (status: ServerStatus) => this.statusBar.setServerStatus(status)));
    registerChart(this);
    registerArchitecturePicker(this);
    registerNvccArgumentCommand(this);
  }

  async dispose(): Promise<void> {
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
