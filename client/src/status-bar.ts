/** The status bar item: target architectures, and the server's state in the tooltip. */
import * as vscode from 'vscode';
import type { ServerStatus } from '../../server/src/protocol';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'cudaOccupancy.status',
    vscode.StatusBarAlignment.Right,
    100,
  );
  private clientState: 'starting' | 'running' | 'stopped' = 'starting';
  private status: ServerStatus | undefined;
  private clientNote: string | undefined;

  constructor() {
    this.item.name = 'CUDA Occupancy';
    this.item.command = 'cudaOccupancy.pickArchitectures';
    this.render();
    this.item.show();
  }

  setClientState(state: 'starting' | 'running' | 'stopped', note?: string): void {
    this.clientState = state;
    this.clientNote = note;
    this.render();
  }

  /** The architectures the server analyses for now. */
  archs(): string[] {
    return this.status?.archs ?? [];
  }

  /** The named GPUs launches are shown on now, and every GPU the server knows. */
  gpus(): string[] {
    return this.status?.gpus ?? [];
  }

  gpuChoices(): Array<{ name: string; arch: string }> {
    return this.status?.gpuChoices ?? [];
  }

  setServerStatus(status: ServerStatus): void {
    this.status = status;
    this.render();
  }

  private render(): void {
    const archs = this.status?.archs.join(' ') ?? '';
    const state = this.clientState !== 'running' ? this.clientState : (this.status?.state ?? 'ready');
    const icon =
      state === 'compiling'
        ? '$(sync~spin)'
        : state === 'starting'
          ? '$(loading~spin)'
          : state === 'stopped' || state === 'error'
            ? '$(error)'
            : state === 'nvcc-missing' || state === 'nvcc-failed' || state === 'untrusted'
              ? '$(warning)'
              : '$(pulse)';
    this.item.text = `${icon} CUDA ${archs}`.trim();
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown(`**CUDA Occupancy Lens**: ${state}\n\n`);
    if (this.clientNote && this.clientState !== 'running') tooltip.appendMarkdown(`${this.clientNote}\n\n`);
    if (this.status) {
      tooltip.appendMarkdown(`Architectures: ${this.status.archs.join(', ')} (${this.status.archSource})\n\n`);
      if (this.status.gpus?.length) tooltip.appendMarkdown(`GPUs: ${this.status.gpus.join(', ')}\n\n`);
      if (this.status.analysing > 0)
        tooltip.appendMarkdown(
          `Analysing the kernel bodies of ${this.status.analysing} newly opened file${this.status.analysing > 1 ? 's' : ''}; diagnostics follow.\n\n`,
        );
      if (this.status.message) tooltip.appendMarkdown(`${this.status.message}\n\n`);
    }
    tooltip.appendMarkdown('Click to choose target architectures and GPUs.');
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      state === 'stopped' || state === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
