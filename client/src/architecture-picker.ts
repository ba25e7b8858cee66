/**
 * The status bar's picker: choose the target architectures and the named GPUs launches are shown on,
 * written to `cudaOccupancy.architectures` and `cudaOccupancy.gpus`.
 */
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
      const currentGpus = new Set(config.get<string[]>('gpus') ?? []);
      const shownGpus = ctx.statusBar.gpus();
      type Item = vscode.QuickPickItem & { setting?: 'architectures' | 'gpus' };
      const items: Item[] = [
        { label: 'Architectures', kind: vscode.QuickPickItemKind.Separator },
        ...CHOICES.map((c) => ({
          label: c.arch,
          description: c.detail,
          picked: current.size ? current.has(c.arch) : shown.includes(c.arch),
          setting: 'architectures' as const,
        })),
        { label: 'GPUs (waves, tail, clusters, latency range)', kind: vscode.QuickPickItemKind.Separator },
        ...ctx.statusBar.gpuChoices().map((g) => ({
          label: g.name,
          description: g.arch,
          picked: currentGpus.size ? currentGpus.has(g.name) : shownGpus.includes(g.name),
          setting: 'gpus' as const,
        })),
      ];
      const picked = await vscode.window.showQuickPick(items, {
        canPickMany: true,
        title: 'Target architectures and GPUs for occupancy',
        placeHolder:
          'No architecture picked: from compile_commands.json, else sm_80 and sm_90; no GPU: one per architecture',
      });
      if (!picked) return;
      const target = vscode.workspace.workspaceFolders?.length
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
      await config.update(
        'architectures',
        picked.filter((p) => p.setting === 'architectures').map((p) => p.label),
        target,
      );
      await config.update(
        'gpus',
        picked.filter((p) => p.setting === 'gpus').map((p) => p.label),
        target,
      );
    }),
  );
}
