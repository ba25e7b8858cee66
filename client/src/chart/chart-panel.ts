/**
 * The `cudaOccupancy.showChart` command (run by the code lenses, or from the command
 * palette for the kernel at the cursor): one webview panel beside the editor, reused
 * for each kernel, that asks the server for the chart data (`cudaOccupancy/chartData`)
 * and hands it to the bundled chart script. The panel asks again when its architecture
 * picker changes, when the document changes, and when it is shown again.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { State, type LanguageClient } from 'vscode-languageclient/node';
import {
  CHART_DATA_REQUEST,
  SHOW_CHART_COMMAND,
  type ChartData,
  type ChartDataParams,
  type ChartTarget,
} from '../../../server/src/protocol';
import { chartHtml } from './chart-html';
import type { FromView, ToView } from './chart-model';

/** What the chart needs of the client context (ClientContext fits). */
export interface ChartHost {
  /** Read at each request: a restart replaces the client. */
  readonly client: LanguageClient | undefined;
  readonly subscriptions: vscode.Disposable[];
  readonly extension: vscode.ExtensionContext;
  readonly output?: vscode.LogOutputChannel;
}

const VIEW_TYPE = 'cudaOccupancy.chart';
const REFRESH_AFTER_EDIT_MS = 800;

/** Registers the command; call once per client context (the panel outlives a server restart). */
export function registerChart(ctx: ChartHost): void {
  ctx.subscriptions.push(
    vscode.commands.registerCommand(SHOW_CHART_COMMAND, (target?: ChartTarget) => {
      const resolved = target ?? targetAtCursor();
      if (!resolved) {
        void vscode.window.showInformationMessage(
          'Open a CUDA file and put the cursor in a kernel to chart its occupancy.',
        );
        return;
      }
      ChartPanel.show(ctx, resolved);
    }),
  );
}

/** From the command palette: the kernel at or above the cursor (an empty kernel name lets the server pick it by line). */
function targetAtCursor(): ChartTarget | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'cuda-cpp') return undefined;
  return { uri: editor.document.uri.toString(), kernel: '', line: editor.selection.active.line };
}

class ChartPanel {
  private static current: ChartPanel | undefined;

  private readonly disposables: vscode.Disposable[] = [];
  private arch: string | undefined;
  private last: ToView | undefined;
  private sequence = 0;
  private editTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly closeWithExtension: vscode.Disposable;

  static show(host: ChartHost, target: ChartTarget): void {
    if (ChartPanel.current) {
      ChartPanel.current.host = host;
      ChartPanel.current.retarget(target);
      ChartPanel.current.panel.reveal(vscode.ViewColumn.Beside, true);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      title(target),
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      {
        enableScripts: true,
        enableCommandUris: false,
        localResourceRoots: [vscode.Uri.joinPath(host.extension.extensionUri, 'dist')],
      },
    );
    ChartPanel.current = new ChartPanel(panel, host, target);
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private host: ChartHost,
    private target: ChartTarget,
  ) {
    const webview = panel.webview;
    webview.html = chartHtml({
      cspSource: webview.cspSource,
      scriptUri: webview
        .asWebviewUri(vscode.Uri.joinPath(host.extension.extensionUri, 'dist', 'client', 'chart-view.js'))
        .toString(),
      nonce: randomBytes(18).toString('base64'),
    });
    this.disposables.push(
      webview.onDidReceiveMessage((m: FromView) => this.onMessage(m)),
      panel.onDidDispose(() => this.dispose()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.toString() !== this.target.uri || e.contentChanges.length === 0) return;
        clearTimeout(this.editTimer);
        this.editTimer = setTimeout(() => void this.request(), REFRESH_AFTER_EDIT_MS);
      }),
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (d.uri.toString() === this.target.uri) void this.request();
      }),
    );
    // The panel outlives a client context, not the extension.
    this.closeWithExtension = { dispose: () => this.panel.dispose() };
    host.extension.subscriptions.push(this.closeWithExtension);
  }

  private retarget(target: ChartTarget): void {
    const changed =
      target.uri !== this.target.uri || target.kernel !== this.target.kernel || target.line !== this.target.line;
    this.target = target;
    this.panel.title = title(target);
    if (changed) void this.request();
  }

  private onMessage(m: FromView): void {
    switch (m.type) {
      case 'ready':
        // A (re)loaded page: show what we have, then ask again (the figures may have changed while it was hidden).
        if (this.last) void this.panel.webview.postMessage(this.last);
        void this.request();
        break;
      case 'arch':
        this.arch = m.arch;
        void this.request();
        break;
      case 'refresh':
        void this.request();
        break;
    }
  }

  private post(message: ToView): void {
    if (message.type === 'data' || !('loading' in message && message.loading)) this.last = message;
    void this.panel.webview.postMessage(message);
  }

  private async request(): Promise<void> {
    const id = ++this.sequence;
    const client = this.host.client;
    if (!client || client.state !== State.Running) {
      this.post({
        type: 'message',
        text: 'The CUDA Occupancy language server is not running. Run "CUDA Occupancy: Restart Server", or see "CUDA Occupancy: Show Log".',
      });
      return;
    }
    this.post({ type: 'message', text: 'Asking the language server…', loading: true });
    const params: ChartDataParams = { ...this.target, ...(this.arch ? { arch: this.arch } : {}) };
    let data: ChartData | null;
    try {
      data = await client.sendRequest<ChartData | null>(CHART_DATA_REQUEST, params);
    } catch (error) {
      if (id !== this.sequence) return;
      this.host.output?.warn(
        `chart data for ${this.target.kernel || `line ${this.target.line + 1}`}: ${error instanceof Error ? error.message : String(error)}`,
      );
      this.post({
        type: 'message',
        text: 'The language server could not compute the chart (see "CUDA Occupancy: Show Log").',
      });
      return;
    }
    if (id !== this.sequence) return; // a newer request is on its way
    if (!data) {
      const who = this.target.kernel ? `\`${this.target.kernel}\`` : 'the kernel at the cursor';
      this.post({
        type: 'message',
        text: `No occupancy figures for ${who} yet. The chart needs its registers per thread: save the file with nvcc available, set cudaOccupancy.ptxasLog to a build log, or write "// occupancy: regs=N" above the kernel.`,
      });
      return;
    }
    if (data.kernel && !this.target.kernel) this.panel.title = title({ ...this.target, kernel: data.kernel });
    this.post({ type: 'data', data });
  }

  private dispose(): void {
    if (ChartPanel.current === this) ChartPanel.current = undefined;
    const subscriptions = this.host.extension.subscriptions;
    const index = subscriptions.indexOf(this.closeWithExtension);
    if (index >= 0) subscriptions.splice(index, 1);
    clearTimeout(this.editTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

function title(target: ChartTarget): string {
  return target.kernel ? `Occupancy: ${target.kernel}` : 'Occupancy chart';
}
