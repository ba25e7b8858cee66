/** The status bar's picker: choose the target architectures, written to `cudaOccupancy.architectures`. */
import * as vscode from 'vscode';
import type { ClientContext } from './client-context';

/** Architectures users pick most; any other can be typed into the settings. */
const CHOICES: Array<{ arch: string; detail: string }> = [
  { arch: 'sm_70', detail: 'Volta (V100)' },
  { arch: 'sm_75', detail: 'Turing (T4, RTX 20)' },
  { arch: 'sm_80', detail: 'Ampere (A100)' },
  { arch: 'sm_86', detail: 'Ampere (RTX 30, A40)' },
  { arch: 'sm_87', detail: 'Ampere (Jetson Orin)' },
  { arch: 'sm_89', detail: 'Ada (RTX 40, L4, L40)' },
  { arch: 'sm_90', detail: 'Hopper (H100, H200)' },
  { arch: 'sm_100', detail: 'Blackwell (B200)' },
  { arch: 'sm_103', detail: 'Blackwell Ultra (B300)' },
  { arch: 'sm_110', detail: 'Jetson Thor' },
  { arch: 'sm_120', detail: 'Blackwell (RTX 50, RTX PRO)' },
  { arch: 'sm_121', detail: 'DGX Spark (GB10)' },
];

export function registerArchitecturePicker(ctx: ClientContext): void {
  ctx.subscriptions.push(
    vscode.commands.registerCommand('cudaOccupancy.pickArchitectures', async () => {
      const config = vscode.workspace.getConfiguration('cudaOccupancy');
      const current = new Set(config.get<string[]>('architectures') ?? []);
      const shown = ctx.statusBar.archs();
      const items = CHOICES.map((c) => ({ label: c.arch, description: c.detail, picked: current.size ? current.has(c.arch) : shown.includes(c.arch) }));
      const picked = await vscode.window.showQuickPick(items, { canPickMany: true, title: 'Target architectures for occupancy', placeHolder: 'None picked: take them from compile_commands.json, else sm_80 and sm_90' });
      if (!picked) return;
      const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
      await config.update('architectures', picked.map((p) => p.label), target);
    }),
  );
}
