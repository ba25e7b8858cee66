/**
 * Everything the editor shows for one document version, computed once from its
 * facts and kept until the version, the settings, the compiler figures or the
 * PTX change.
 */
import type { DocumentFacts } from '../core/analyze-document';
import type { Finding, Kernel } from '../core/types';
import { analyzeLaunch, type FiguresFor, type LaunchAnalysis } from '../core/launch-analysis';
import { divergenceFindings, refineBranchesWithPtx, type Branch } from '../core/divergence';
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
  /** facts.branches, with the divergent ones' path costs counted in the PTX when it was given. */
  branches: Branch[];
}

/** PTX of this document's text (`nvcc -ptx -lineinfo`); `filePath` is the file nvcc compiled. */
export interface ReportPtx {
  text: string;
  filePath: string;
}

export interface ReportInput {
  facts: DocumentFacts;
  archs: string[];
  figuresFor: FiguresFor;
  settings?: ReportSettings;
  /** Findings from the compiler's own output (spills, unmet launch bounds). */
  compilerFindings?: Finding[];
  /** Only for PTX compiled from exactly `facts.source.text`: its `.loc` lines are read against the facts' spans. */
  ptx?: ReportPtx | null;
}

export function buildDocumentReport({ facts, archs, figuresFor, settings = DEFAULT_REPORT_SETTINGS, compilerFindings = [], ptx = null }: ReportInput): DocumentReport {
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
  const branches = ptx && facts.branches.some((b) => b.kind === 'divergent') ? refineBranchesWithPtx(facts.branches, ptx.text, ptx.filePath) : facts.branches;
  const findings = [
    ...facts.findings,
    ...compilerFindings,
    ...(settings.divergenceEnabled ? divergenceFindings(branches, { minCostThreshold: settings.divergenceMinCost }) : []),
    ...impossibleLaunchFindings(analyses),
    ...occupancyFindings(analyses, settings.occupancyWarningBelow),
  ];
  return { facts, archs, analyses, byKernel, findings, branches };
}
