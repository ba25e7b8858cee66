/** Code lenses: the core's lenses as LSP lenses whose command opens the occupancy chart (or, on a pressure peak, toggles the heat map). */
import type { CodeLens } from 'vscode-languageserver/node';
import type { DocumentReport } from '../core/analyzer';
import { lenses, type LensOptions } from '../core/analyzer';
import { SHOW_CHART_COMMAND, TOGGLE_PRESSURE_HEATMAP_COMMAND } from '../protocol';
import { toRange } from './lsp-convert';

export function codeLenses(report: DocumentReport, options: LensOptions = {}): CodeLens[] {
  return lenses(report, options).map((lens) => ({
    range: toRange(lens.span),
    command:
      lens.action === 'pressure-heatmap'
        ? { title: lens.title, command: TOGGLE_PRESSURE_HEATMAP_COMMAND, arguments: [{ uri: lens.chart.uri }] }
        : { title: lens.title, command: SHOW_CHART_COMMAND, arguments: [lens.chart] },
  }));
}
