/** The hover's text: a launch's occupancy report, a kernel's figures and launches, or a thread-index branch's verdict and costs. */
import type { Position, Span } from '../types';
import { contains } from '../text/source-text';
import type { DocumentReport } from './document-report';
import { mdText } from './format';
import { launchHoverMarkdown, occupancyTable, figuresLine, kernelLensTitle, type ReportExtras } from './launch-report';
import { branchesAt, branchHoverMarkdown } from './branch-report';

/** Markdown for the hover at a place, and the span it is about. */
export interface HoverText {
  markdown: string;
  span: Span;
}

export function hoverText(report: DocumentReport, position: Position, extras: (analysisIndex: number) => ReportExtras = () => ({})): HoverText | null {
  const index = report.analyses.findIndex((a) => contains(a.launch.nameSpan, position) || contains(a.launch.span, position));
  if (index >= 0) {
    const analysis = report.analyses[index];
    return { markdown: launchHoverMarkdown(analysis, extras(index)), span: analysis.launch.nameSpan };
  }
  for (const [kernel, analyses] of report.byKernel) {
    if (!contains(kernel.nameSpan, position)) continue;
    const lines = [`**${mdText(kernel.qualifiedName)}**${kernel.launchBounds ? ` · \`${kernel.launchBounds.text}\`` : ''}`];
    if (analyses.length === 0) {
      lines.push('No launches of this kernel in view.');
    } else {
      lines.push(kernelLensTitle(kernel, analyses));
      const first = analyses.find((a) => a.perArch.some((x) => x.result)) ?? analyses[0];
      const table = occupancyTable(first.perArch);
      if (table) lines.push(`At ${first.threadsPerBlock} threads (line ${first.launch.span.start.line + 1}):\n\n${table}`);
      lines.push(`Figures: ${figuresLine(first.perArch, kernel)}.`);
      lines.push(`Launches in view: ${analyses.map((a) => `line ${a.launch.span.start.line + 1} (${a.threadsPerBlock ?? `\`${a.launch.block.text}\``} threads)`).join(', ')}.`);
    }
    return { markdown: lines.join('\n\n'), span: kernel.nameSpan };
  }
  const branches = branchesAt(report.branches, position);
  if (branches.length > 0) return { markdown: branchHoverMarkdown(branches, report.divergenceSeverity), span: branches[0].conditionSpan };
  return null;
}
