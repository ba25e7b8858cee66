/** The code lenses' texts: one over each kernel, one over each launch whose block size is known; each opens the kernel's chart. */
import type { Span } from '../types';
import type { DocumentReport } from './document-report';
import { kernelLensTitle, launchLensTitle } from './launch-report';
import { wavesShort } from './gpu-text';
import { pressureLensTitle } from './pressure-report';

export interface Lens {
  span: Span;
  title: string;
  /** The kernel the lens's chart is for, and the line it sits on. */
  chart: { uri: string; kernel: string; line: number };
  /** What clicking it does: open the kernel's chart (default), or toggle the pressure heat map. */
  action?: 'chart' | 'pressure-heatmap';
}

export interface LensOptions {
  /** Append the waves on the first named GPU to each launch's lens (cudaOccupancy.codeLens.waves). */
  waves?: boolean;
}

export function lenses(report: DocumentReport, options: LensOptions = {}): Lens[] {
  const uri = report.facts.uri;
  const found: Lens[] = [];
  for (const [kernel, analyses] of report.byKernel) {
    if (!kernel.isDefinition && analyses.length === 0) continue;
    const line = kernel.span.start.line;
    found.push({
      span: { start: { line, character: 0 }, end: { line, character: 0 } },
      title: kernelLensTitle(kernel, analyses, report.compiled.get(kernel)),
      chart: { uri, kernel: kernel.qualifiedName, line: kernel.nameSpan.start.line },
    });
  }
  for (const [kernel, view] of report.pressure) {
    if (view.peakLine === null) continue;
    found.push({
      span: { start: { line: view.peakLine, character: 0 }, end: { line: view.peakLine, character: 0 } },
      title: pressureLensTitle(view),
      chart: { uri, kernel: kernel.qualifiedName, line: kernel.nameSpan.start.line },
      action: 'pressure-heatmap',
    });
  }
  report.analyses.forEach((analysis, k) => {
    if (analysis.threadsPerBlock === null || !analysis.kernel) return;
    const waves = options.waves ? (report.gpus[k] ?? []).map(wavesShort).find((w) => w !== null) : undefined;
    found.push({
      span: analysis.launch.nameSpan,
      title: `${launchLensTitle(analysis)}${waves ? ` · ${waves}` : ''}`,
      chart: { uri, kernel: analysis.kernel.qualifiedName, line: analysis.launch.span.start.line },
    });
  });
  return found;
}
