/**
 * The VS Code extension: starts the bundled language server for `cuda-cpp`
 * documents and owns everything that must be disposed in one context.
 */
import * as vscode from 'vscode';
import { ClientContext } from './client-context';
import type { MemoryUsage } from '../../server/src/protocol';

let context: ClientContext | undefined;

export async function activate(extension: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('CUDA Occupancy Lens', { log: true });
  extension.subscriptions.push(output);
  const start = async () => {
    await context?.dispose();
    context = new ClientContext(extension, output);
    await context.start();
  };
  extension.subscriptions.push(
    vscode.commands.registerCommand('cudaOccupancy.restartServer', async () => {
      output.info('restarting the server');
      await start();
    }),
    vscode.commands.registerCommand('cudaOccupancy.showOutput', () => output.show(true)),
    // For bug reports (as rust-analyzer's Memory Usage): what the server process holds, in the log and a message.
    vscode.commands.registerCommand('cudaOccupancy.memoryUsage', async () => {
      const usage = await context?.memoryUsage();
      if (!usage) {
        void vscode.window.showWarningMessage('CUDA Occupancy Lens: the language server is not running.');
        return undefined;
      }
      const summary = describeMemoryUsage(usage);
      output.info(`memory usage: ${summary}`);
      void vscode.window.showInformationMessage(`CUDA Occupancy Lens server: ${summary}`);
      return usage;
    }),
    { dispose: () => void context?.dispose() },
    // Trust granted: restart so that nvcc may use the workspace's settings and compile_commands.json.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      output.info('workspace trusted: restarting the server with the workspace nvcc settings');
      void start();
    }),
  );
  try {
    await start();
  } catch (error) {
    // VS Code shows nothing when activation fails: say why.
    const message = `CUDA Occupancy Lens could not start its language server: ${error instanceof Error ? error.message : String(error)}`;
    output.error(message);
    void vscode.window.showErrorMessage(message, 'Show Log').then((choice) => choice && output.show());
  }
}

export async function deactivate(): Promise<void> {
  await context?.dispose();
  context = undefined;
}

function describeMemoryUsage(usage: MemoryUsage): string {
  return `RSS ${usage.rssMb} MB: JavaScript heap ${usage.heapTotalMb} MB reserved, ${usage.heapUsedMb} MB used (limit ${usage.heapLimitMb} MB); parser and buffers ${usage.externalMb} MB; ${usage.openDocuments} open document${usage.openDocuments === 1 ? '' : 's'}; ${usage.idleCollections === null ? 'no idle-time collections (gc not exposed)' : `${usage.idleCollections} idle-time collection${usage.idleCollections === 1 ? '' : 's'} (${usage.idleCompactions ?? 0} compacting)`}`;
}
