/**
 * The register pressure heat map (TOGGLE_PRESSURE_HEATMAP_COMMAND): each kernel line the PTX covers
 * is shaded by its share of the kernel's peak, with "≈ N live" after it, from the server's
 * PRESSURE_REQUEST. While it is on, it follows the active editor and saves (the PTX comes after
 * the compile); an edit clears the document's shading, which no longer matches the PTX.
 */
import * as vscode from 'vscode';
import type { ClientContext } from './client-context';
import { levelColor, PRESSURE_LEVELS, pressureLevel } from './pressure-levels';
import {
  PRESSURE_REQUEST,
  TOGGLE_PRESSURE_HEATMAP_COMMAND,
  type PressureParams,
  type PressureResult,
} from '../../server/src/protocol';

/** After a save: when to ask again (the compile and the PTX take a while). */
const AFTER_SAVE_MS = [1500, 5000, 15000];

export function registerPressureHeatmap(ctx: ClientContext): void {
  const levels = Array.from({ length: PRESSURE_LEVELS }, (_, level) =>
    vscode.window.createTextEditorDecorationType({
      backgroundColor: levelColor(level),
      isWholeLine: true,
      after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em' },
    }),
  );
  let on = false;
  const timers = new Set<NodeJS.Timeout>();
  const clear = (editor: vscode.TextEditor) => levels.forEach((d) => editor.setDecorations(d, []));
  const draw = async (editor: vscode.TextEditor | undefined, quiet: boolean) => {
    if (!editor || editor.document.languageId !== 'cuda-cpp' || !ctx.client?.isRunning()) return;
    const uri = editor.document.uri.toString();
    const version = editor.document.version;
    const params: PressureParams = { uri };
    let result: PressureResult;
    try {
      result = await ctx.client.sendRequest<PressureResult>(PRESSURE_REQUEST, params);
    } catch (error) {
      ctx.output.warn(`pressure request: ${String(error)}`);
      return;
    }
    if (!on || editor.document.version !== version) return;
    if (!result || result.kernels.length === 0) {
      clear(editor);
      if (!quiet)
        void vscode.window.showInformationMessage(
          'CUDA Occupancy Lens: no register pressure for this file yet. It comes from the PTX, after the saved file compiles with nvcc (cudaOccupancy.pressure.enabled).',
        );
      return;
    }
    const byLevel: vscode.DecorationOptions[][] = levels.map(() => []);
    for (const kernel of result.kernels) {
      for (const line of kernel.lines) {
        if (line.line >= editor.document.lineCount) continue;
        byLevel[pressureLevel(line.live, kernel.peak)].push({
          range: editor.document.lineAt(line.line).range,
          renderOptions: {
            after: {
              contentText: `${kernel.source === 'sass' ? '' : '≈ '}${line.live} live${line.line === kernel.peakLine ? ' (peak)' : ''}`,
            },
          },
          hoverMessage:
            kernel.source === 'sass'
              ? `Register pressure (SASS${result.arch ? ` for ${result.arch}` : ''}, after register allocation): ${line.live} registers live; ${kernel.kernel} peaks at ${kernel.peak}${kernel.allocated !== null ? `, ptxas allocated ${kernel.allocated}` : ''}.`
              : `Register pressure (estimate, PTX${result.arch ? ` for ${result.arch}` : ''}): about ${line.live} values live; ${kernel.kernel} peaks at ${kernel.peak}${kernel.allocated !== null ? `, ptxas allocated ${kernel.allocated}` : ''}.`,
        });
      }
    }
    levels.forEach((d, level) => editor.setDecorations(d, byLevel[level]));
  };
  ctx.subscriptions.push(
    ...levels,
    vscode.commands.registerCommand(TOGGLE_PRESSURE_HEATMAP_COMMAND, async () => {
      on = !on;
      if (!on) {
        vscode.window.visibleTextEditors.forEach(clear);
        return;
      }
      await draw(vscode.window.activeTextEditor, false);
    }),
    vscode.window.onDidChangeActiveTextEditor((editor) => on && void draw(editor, true)),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (!on || e.contentChanges.length === 0) return;
      for (const editor of vscode.window.visibleTextEditors) if (editor.document === e.document) clear(editor);
    }),
    vscode.workspace.onDidSaveTextDocument((doc) => {
      if (!on) return;
      for (const ms of AFTER_SAVE_MS) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
          if (editor) void draw(editor, true);
        }, ms);
        timers.add(timer);
      }
    }),
    { dispose: () => timers.forEach(clearTimeout) },
  );
}
