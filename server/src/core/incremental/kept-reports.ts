/**
 * A document's report, reusing the launch analyses of the previous version's report: a launch a
 * chunk kept from that version (the same object), with the same kernel, bounds and latency inputs,
 * is not analysed again. The caller passes `previous` only when it was built with the same
 * architectures, figures and settings.
 */
import { analyzeLaunch, type LatencyOptions, type LaunchAnalysis } from '../report/launch-analysis';
import {
  buildDocumentReport,
  type DocumentReport,
  type LaunchAnalyzer,
  type ReportInput,
} from '../report/document-report';
import { objectTable } from './kept-tables';

export function reportWithKeptAnalyses(
  input: Omit<ReportInput, 'analyze'>,
  previous: DocumentReport | undefined,
): DocumentReport {
  const earlier = new Map(previous?.analyses.map((a) => [a.launch, a]));
  const analyze: LaunchAnalyzer = ({ launch, kernel, launchBounds, archs, figuresFor, latency, site }) => {
    const before = earlier.get(launch);
    if (
      before &&
      before.kernel === kernel &&
      before.launchBounds === launchBounds &&
      latencyInputs.get(before) === latencyKey(latency)
    )
      return before;
    const analysis = analyzeLaunch(launch, kernel, launchBounds, archs, figuresFor, latency, site);
    latencyInputs.set(analysis, latencyKey(latency));
    return analysis;
  };
  return buildDocumentReport({ ...input, analyze });
}

/** The latency options each analysis was made with (reuse needs the same). */
const latencyInputs = objectTable<LaunchAnalysis, string>('launch analysis latency inputs');
const latencyKey = (l: LatencyOptions) =>
  `${l.latencyCycles}|${l.independentOpsPerWarp}|${l.pending}|${l.work ? `${l.work.instructions}|${l.work.atLeast}|${l.work.source}|${l.work.loop?.line}` : ''}`;
