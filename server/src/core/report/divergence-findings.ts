/** `divergent-branch` warnings: divergent branches whose cost a programmer would want to remove. */
import type { Finding } from '../types';
import { DEFAULT_DIVERGENCE_COST_THRESHOLD, isLeaderBranch, type Branch } from '../body/divergence';

/**
 * `divergent-branch` warnings for divergent branches that cost at least
 * `minCostThreshold` issue slots; nothing for warp-uniform or tail. A leader
 * branch (one lane, no else: `if (lane == 0) out[w] = v;`) is how warp-level
 * code is written, so it needs four times the threshold.
 */
export function divergenceFindings(branches: readonly Branch[], { minCostThreshold = DEFAULT_DIVERGENCE_COST_THRESHOLD }: { minCostThreshold?: number } = {}): Finding[] {
  const seen = new Set<string>();
  const findings: Finding[] = [];
  for (const b of branches) {
    if (b.kind !== 'divergent' || b.divergedCost < minCostThreshold) continue;
    if (isLeaderBranch(b) && b.divergedCost < 4 * minCostThreshold) continue;
    const key = `${b.span.start.line}:${b.span.start.character}:${b.construct}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push({
      code: 'divergent-branch',
      severity: 'warning',
      message: b.explanation,
      span: b.conditionSpan,
      related: [{ uri: null, span: b.source.span, message: `the thread index comes from \`${b.source.text}\`` }],
    });
  }
  return findings;
}
