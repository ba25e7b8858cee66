/** Code lenses: one over each kernel, one over each launch whose block size is known. */
import type { CodeLens } from 'vscode-languageserver/node';
import type { DocumentReport } from '../core/report/document-report';
import { toRange } from './lsp-convert';
import { kernelLensTitle, launchLensTitle } from '../core/report/launch-report';
import { SHOW_CHART_COMMAND } from '../protocol';

export function codeLenses(report: DocumentReport): CodeLens[] {
  const lenses: CodeLens[] = [];
  for (const [kernel, analyses] of report.byKernel) {
    if (!kernel.isDefinition && analyses.length === 0) continue;
    const line = kernel.span.start.line;
    lenses.push({
      range: toRange({ start: { line, character: 0 }, end: { line, character: 0 } }),
      command: { title: kernelLensTitle(kernel, analyses), command: SHOW_CHART_COMMAND, arguments: [{ uri: report.facts.uri, kernel: kernel.qualifiedName, line: kernel.nameSpan.start.line }] },
    });
  }
  for (const analysis of report.analyses) {
    if (analysis.threadsPerBlock === null || !analysis.kernel) continue;
    lenses.push({
      range: toRange(analysis.launch.nameSpan),
      command: { title: launchLensTitle(analysis), command: SHOW_CHART_COMMAND, arguments: [{ uri: report.facts.uri, kernel: analysis.kernel.qualifiedName, line: analysis.launch.span.start.line }] },
    });
  }
  return lenses;
}
