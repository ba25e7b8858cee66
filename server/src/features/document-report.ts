/**
 * Everything the editor shows for one document version, computed once from its
 * facts and kept until the version, the settings or the compiler figures change.
 */
import type { DocumentFacts } from '../core/analyze-document';
import type { Finding, Kernel } from '../core/types';
import { analyzeLaunch, type FiguresFor, type LaunchAnalysis } from '../core/launch-analysis';
import { findKernelForLaunch } from '../core/kernel-match';

export interface DocumentReport {
  facts: DocumentFacts;
  archs: string[];
  analyses: LaunchAnalysis[];
  /** Launch analyses per kernel of this document, in the order of its kernels. */
  byKernel: Map<Kernel, LaunchAnalysis[]>;
  findings: Finding[];
}

export interface ReportInput {
  facts: DocumentFacts;
  archs: string[];
  figuresFor: FiguresFor;
  /** Kernels declared elsewhere (headers, other files) that launches here may start. */
  otherKernels?: readonly Kernel[];
  findings?: (report: Omit<DocumentReport, 'findings'>) => Finding[];
}

export function buildDocumentReport({ facts, archs, figuresFor, otherKernels = [], findings }: ReportInput): DocumentReport {
  const allKernels = [...facts.kernels, ...otherKernels];
  const analyses = facts.launches.map((launch) => analyzeLaunch(launch, findKernelForLaunch(launch, facts.kernels) ?? findKernelForLaunch(launch, allKernels), archs, figuresFor));
  const byKernel = new Map<Kernel, LaunchAnalysis[]>();
  for (const kernel of facts.kernels) {
    byKernel.set(kernel, analyses.filter((a) => a.kernel !== null && a.kernel.qualifiedName === kernel.qualifiedName));
  }
  const partial = { facts, archs, analyses, byKernel };
  return { ...partial, findings: findings ? findings(partial) : [] };
}
