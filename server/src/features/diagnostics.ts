/** All findings of a document, from every analysis, in one list. */
import type { DocumentReport } from './document-report';
import type { Finding } from '../core/types';

export function documentFindings(report: Omit<DocumentReport, 'findings'>): Finding[] {
  const findings: Finding[] = [];
  for (const analysis of report.analyses) {
    const bounds = analysis.kernel?.launchBounds;
    const threads = analysis.threadsPerBlock;
    if (bounds?.maxThreadsPerBlock != null && threads !== null && threads > bounds.maxThreadsPerBlock) {
      findings.push({
        code: 'launch-exceeds-bounds',
        severity: 'error',
        message: `${analysis.launch.kernelName} is launched with ${threads} threads per block, but its \`${bounds.text}\` allows at most ${bounds.maxThreadsPerBlock}: this launch fails with cudaErrorInvalidConfiguration (too many resources requested for launch).`,
        span: analysis.launch.span,
        related: [{ uri: null, span: bounds.span, message: `the launch bound of ${analysis.kernel!.qualifiedName}` }],
      });
    }
  }
  return findings;
}
