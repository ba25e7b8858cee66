/**
 * Everything the editor shows for one document version, computed once from its
 * facts and kept until the version, the settings or the compiler figures change.
 */
import type { DocumentFacts } from '../core/analyze-document';
import type { Finding, Kernel } from '../core/types';
import { analyzeLaunch, type FiguresFor, type LaunchAnalysis } from '../core/launch-analysis';
import { divergenceFindings } from '../core/divergence';
import { occupancyFindings } from './occupancy-findings';
import { impossibleLaunchFindings } from '../core/compiler-findings';

export interface ReportSettings {
  latencyCycles: number;
  occupancyWarningBelow: number;
  divergenceMinCost: number;
  divergenceEnabled: boolean;
}

export const DEFAULT_REPORT_SETTINGS: ReportSettings = { latencyCycles: 0, occupancyWarningBelow: 0, divergenceMinCost: 4, divergenceEnabled: true };

export interface DocumentReport {
  facts: DocumentFacts;
  archs: string[];
  /** One per launch, in the order of facts.launches. */
  analyses: LaunchAnalysis[];
  /** Launch analyses per kernel of this document, in the order of its kernels. */
  byKernel: Map<Kernel, LaunchAnalysis[]>;
  findings: Finding[];
}

export interface ReportInput {
  facts: DocumentFacts;
  archs: string[];
  figuresFor: FiguresFor;
  settings?: ReportSettings;
  /** Findings from the compiler's own output (spills, unmet launch bounds). */
  compilerFindings?: Finding[];
}

export function buildDocumentReport({ facts, archs, figuresFor, settings = DEFAULT_REPORT_SETTINGS, compilerFindings = [] }: ReportInput): DocumentReport {
  const pOf = (kernel: Kernel | null) => {
    const mp = kernel ? facts.memoryParallelism.find((m) => m.kernel === kernel.qualifiedName || m.kernel === kernel.name) : undefined;
    return mp && mp.p > 0 ? mp.p : 1;
  };
  const analyses = facts.launches.map((launch, i) => {
    const target = facts.launchTargets[i];
    const kernel = target?.kernel ?? null;
    return analyzeLaunch(launch, kernel, target?.launchBounds ?? kernel?.launchBounds ?? null, archs, figuresFor, {
      latencyCycles: settings.latencyCycles,
      independentOpsPerWarp: pOf(kernel),
    });
  });
  const byKernel = new Map<Kernel, LaunchAnalysis[]>();
  for (const kernel of facts.kernels) {
    byKernel.set(kernel, analyses.filter((a) => a.kernel !== null && a.kernel.qualifiedName === kernel.qualifiedName));
  }
  const findings = [
    ...facts.findings,
    ...compilerFindings,
    ...(settings.divergenceEnabled ? divergenceFindings(facts.branches, { minCostThreshold: settings.divergenceMinCost }) : []),
    ...impossibleLaunchFindings(analyses),
    ...occupancyFindings(analyses, settings.occupancyWarningBelow),
  ];
  return { facts, archs, analyses, byKernel, findings };
}
