/** Hover: the core's hover text at a position, as LSP markdown. */
import { MarkupKind, type Hover, type Position } from 'vscode-languageserver/node';
import type { DocumentReport } from '../core/analyzer';
import { hoverText } from '../core/analyzer';
import type { ReportExtras } from '../core/analyzer';
import { toRange } from './lsp-convert';

export function hoverAt(
  report: DocumentReport,
  position: Position,
  extras?: (analysisIndex: number) => ReportExtras,
): Hover | null {
  const text = hoverText(report, position, extras);
  return text ? { contents: { kind: MarkupKind.Markdown, value: text.markdown }, range: toRange(text.span) } : null;
}
