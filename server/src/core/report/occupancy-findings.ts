/** Findings from the occupancy figures: occupancy below the user's threshold, and latency that the resident warps cannot cover. */
import type { Finding, Span } from '../types';
import type { LaunchAnalysis } from './launch-analysis';
import { LIMIT_NAMES, percent } from './format';
import { loadsText } from './latency-text';

/** `configSpan`: where a launch's configuration is written (launch-config-span.ts): the notes go there. */
export function occupancyFindings(
  analyses: readonly LaunchAnalysis[],
  warnBelowPercent: number,
  configSpan: (a: LaunchAnalysis) => Span = (a) => a.launch.nameSpan,
): Finding[] {
  const findings: Finding[] = [];
  for (const a of analyses) {
    const name = a.launch.templateArgs
      ? `${a.launch.kernelName}<${a.launch.templateArgs.join(', ')}>`
      : a.launch.kernelName;
    const low = a.perArch.filter(
      (p) => p.result && p.result.activeBlocksPerMultiprocessor > 0 && p.result.occupancy * 100 < warnBelowPercent,
    );
    if (warnBelowPercent > 0 && low.length) {
      findings.push({
        code: 'low-occupancy',
        severity: 'hint',
        message: `${name}: occupancy ${low.map((p) => `${percent(p.result!.occupancy)} on ${p.arch} (limited by ${p.result!.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ')})`).join(', ')}, below the ${warnBelowPercent}% set in cudaOccupancy.occupancyWarningBelow.`,
        span: configSpan(a),
        related: [],
      });
    }
    const short = a.perArch.filter((p) => p.latency && p.latency.bandwidthBound.deficitWarps > 0);
    if (short.length) {
      const p = short[0];
      const b = p.latency!.bandwidthBound;
      findings.push({
        code: 'latency-deficit',
        severity: 'hint',
        message: `${name} on ${p.arch}: ${b.warpsResident} warps resident, about ${b.warpsNeeded} needed to ${b.assumptions.limit === 'issue' ? 'keep the schedulers busy' : 'keep DRAM busy'} (estimate: L ≈ ${b.assumptions.latencyCycles} cycles, ${loadsText(b.assumptions)}); ${percent(b.coveredFraction)} of the latency is covered. More independent loads per thread (ILP) help as much as more warps.`,
        span: configSpan(a),
        related: [],
      });
    }
  }
  return findings;
}
