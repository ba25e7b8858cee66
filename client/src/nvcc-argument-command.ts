/** The quick fix "Limit registers with -maxrregcount=N": adds the flag to `cudaOccupancy.nvcc.args` (replacing an older one). */
import * as vscode from 'vscode';
import type { ClientContext } from './client-context';

export function registerNvccArgumentCommand(ctx: ClientContext): void {
  ctx.subscriptions.push(
    vscode.commands.registerCommand('cudaOccupancy.addNvccArgument', async (arg: unknown) => {
      if (typeof arg !== 'string' || !/^-[\w-]+(=\S+)?$/.test(arg)) return;
      const config = vscode.workspace.getConfiguration('cudaOccupancy');
      const flag = arg.split('=')[0];
      const args = (config.get<string[]>('nvcc.args') ?? []).filter((a) => a.split('=')[0] !== flag);
      const target = vscode.workspace.workspaceFolders?.length
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
      await config.update('nvcc.args', [...args, arg], target);
      void vscode.window.showInformationMessage(
        `Added ${arg} to cudaOccupancy.nvcc.args: the figures are recomputed after the next compile. Add it to your build too.`,
      );
    }),
  );
}
