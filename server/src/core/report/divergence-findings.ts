/**
 * `divergent-branch` findings, by what a split costs: a warning when the thread indices prove the
 * split and the issue slots a split warp spends with lanes idle are material, both in number
 * (`minCostThreshold` per warp) and against the kernel they are in (`minSharePercent` of its issue
 * slots) in every block (a split each thread passes once, in no loop, only when long), or when a
 * loop on per-lane data has a long body (see `materiality`); else
 * a hint (the branch's hover explains it either way); a branch the compiled code shows predicated is at most a hint
 * (every warp issues it whether its lanes agree or not: no regrouping of lanes saves anything), and
 * so is one whose arms are the same code on different operands (body/merged-arms.ts: one copy);
 * nothing for warp-uniform and tail branches, nothing for a split that idles no issue slot
 * regrouping could give back (a path one lane takes is issued once either way), and nothing for
 * paths run one after the other at 100% issue efficiency (one of them is empty: the warp issues
 * no more than if its lanes agreed, and a note that says so is noise).
 */
import type { Finding, Severity } from '../types';
import { DEFAULT_DIVERGENCE_COST_THRESHOLD, DEFAULT_DIVERGENCE_MIN_SHARE, type Branch } from '../body/divergence';

export interface DivergenceSeverityOptions {
  /** Idle-lane issue slots per warp a divergent branch costs before it is a warning. */
  minCostThreshold?: number;
  /** ... and the share of its kernel's issue slots they are, in percent. */
  minSharePercent?: number;
}

/**
 * A path no more than this share of a split warp's lanes runs (a leader, a few lanes per group) is
 * work for few lanes: worth rewriting only when it is long (LONG_PATH times the threshold) and
 * repeats work (a loop) the idle lanes could take a share of. A leader's straight-line write after a
 * reduction has nothing to hand out: every lane of its group holds the same values.
 */
const FEW_LANES = 0.25;
/** How many times the cost threshold a path for few lanes, or a loop on per-lane data, must cost. */
const LONG_PATH = 3;

type Materiality = 'material' | 'small' | 'few-lanes' | 'data' | 'some-blocks' | 'once';

/**
 * Whether the lanes a split idles are worth a programmer's time. A split the thread indices prove
 * (every block splits so) is weighed by its idle issue slots, per warp and against its kernel. A
 * path only a few lanes of the warp run is the cost of narrow work rather than of a split, and is
 * material only when long. A split on per-lane data happens only where the data differ: only a loop
 * whose trip count follows the data (each warp runs its slowest lane's iterations) with a long body
 * is weighed, by what one iteration costs.
 */
function materiality(b: Branch, minCost: number, minShare: number): Materiality {
  const ofKernel = (slots: number) => slots * 100 >= minShare * Math.max(1, b.kernelIssueSlots);
  // For some values of a uniform unknown only (`TILE_SIZE`, a kernel's argument): not proven.
  if (!b.split?.dataDependent && (b.split?.onlyFor?.length ?? 0) > 0) return 'data';
  // Only the blocks the block index picks split (one block of the grid, its diagonal): the cost per
  // warp is proven, how many warps of the launch pay it is not.
  if (b.split?.someBlocks) return 'some-blocks';
  if (b.split?.dataDependent) {
    const body = b.paths[0]?.cost ?? 0;
    return b.construct === 'loop' && body >= LONG_PATH * minCost && ofKernel(body) ? 'material' : 'data';
  }
  // What the block pays, per warp: a split of warp 0 alone (a leader, a reduction's last step) costs
  // its idle slots once among all the block's warps.
  const idle = b.idleIssueSlots * (b.split?.warpShare ?? 1);
  if (!(idle >= minCost && ofKernel(idle))) return 'small';
  const few = b.laneActivity !== undefined && b.laneActivity <= FEW_LANES && oneSided(b);
  if (few && (idle < LONG_PATH * minCost || !b.paths[0]?.loops)) return 'few-lanes';
  // Passed once by each thread (in no loop of the kernel): its idle slots are paid once in a warp's
  // life, next to its loads and launch, and are worth a rewrite only when long. A path that runs a
  // loop may be counted one round of it (the PTX counts loops once): not known short.
  const repeats = b.paths.some((p) => p.repeats);
  return b.oncePerThread && !repeats && idle < LONG_PATH * minCost ? 'once' : 'material';
}

function names(list: readonly string[]): string {
  const quoted = list.map((n) => `\`${n}\``);
  return quoted.length <= 1
    ? (quoted[0] ?? 'a value')
    : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
}

/** Only the first path has work (an if without else, a loop's body): the others' lanes wait. */
function oneSided(b: Branch): boolean {
  return b.paths.slice(1).every((p) => p.cost === 0);
}

/** What a divergent branch's finding is: a warning, a hint, or none. */
export function divergenceSeverity(
  b: Branch,
  {
    minCostThreshold = DEFAULT_DIVERGENCE_COST_THRESHOLD,
    minSharePercent = DEFAULT_DIVERGENCE_MIN_SHARE,
  }: DivergenceSeverityOptions = {},
): Severity | null {
  if (b.kind !== 'divergent' || b.idleIssueSlots <= 0 || serializesNothing(b)) return null;
  // Weighed against a helper alone, any split looks large: what it costs the kernel that calls it
  // is not known here.
  if (b.predicated || b.calledFrom) return 'hint';
  // One copy of the arms' shared code is issued, split or not: only the differing operands are paid twice.
  if (b.mergedArms) return 'hint';
  return materiality(b, minCostThreshold, minSharePercent) === 'material' ? 'warning' : 'hint';
}

/**
 * The branch's words measure it by issue efficiency (paths run one after the other: an if/else, a
 * switch) and that is 100%: nothing is serialized. (A one-sided branch, a loop or an early exit is
 * measured by its idle lanes instead.)
 */
function serializesNothing(b: Branch): boolean {
  if (b.efficiency < 1) return false;
  if (b.construct === 'switch') return true;
  if (b.construct === 'loop' || b.construct === 'return' || b.construct === 'break' || b.construct === 'continue')
    return false;
  const second = b.paths[1];
  return !!second && second.cost !== 0;
}

/** Why a divergent branch is (or is not) a warning, in words, for its hover. */
export function severityNote(b: Branch, options: DivergenceSeverityOptions = {}): string | null {
  if (b.kind !== 'divergent') return null;
  const { minCostThreshold = DEFAULT_DIVERGENCE_COST_THRESHOLD, minSharePercent = DEFAULT_DIVERGENCE_MIN_SHARE } =
    options;
  const share = Math.round((100 * b.idleIssueSlots) / Math.max(1, b.kernelIssueSlots));
  const where = b.inDeviceFunction ? 'the function' : 'the kernel';
  const idle = Math.round(b.idleIssueSlots * 10) / 10;
  const measured = `${idle} issue slot${idle === 1 ? '' : 's'} per warp with lanes idle, ${share}% of ${where}'s ${b.kernelIssueSlots}`;
  const rule = `a warning from ${minCostThreshold} slots and ${minSharePercent}% (\`cudaOccupancy.divergence.minCost\`, \`cudaOccupancy.divergence.minShare\`)`;
  const severity = divergenceSeverity(b, options);
  if (severity === null && serializesNothing(b))
    return 'Not reported: one of its paths is empty, so the warp issues no more than if its lanes agreed (issue efficiency 100%).';
  if (severity === null)
    return 'Not reported: the split idles no issue slot that regrouping the lanes would give back (a path one lane takes is issued once either way).';
  if (b.predicated)
    return `A hint, not a warning: ${measured}, but the compiler predicated the branch, so every warp issues it split or not.`;
  if (b.mergedArms)
    return `A hint, not a warning: ${measured} if each arm ran apart, but the arms are the same code on different operands, which the compiler makes one copy of (the operands chosen per lane): a split warp issues it once.`;
  if (b.calledFrom)
    return `A hint, not a warning: ${measured}; read where \`${b.calledFrom.kernel}\` in ${b.calledFrom.file} calls the function, whose other work this file does not show, so what the split costs that kernel is not known.`;
  if (severity === 'warning') return `**Warning:** ${measured}; ${rule}.`;
  const why = materiality(b, minCostThreshold, minSharePercent);
  if (why === 'data' && !b.split?.dataDependent)
    return `A hint, not a warning: the warps split only for some values of ${names(b.split?.onlyFor ?? [])}, which the source does not fix; ${measured}.`;
  if (why === 'data')
    return `A hint, not a warning: the lanes split only where their data differ, which the source does not tell; ${measured}. A loop on per-lane data whose body costs ${Math.round(LONG_PATH * minCostThreshold * 100) / 100} slots or more, and ${minSharePercent}% of ${where}'s, is a warning.`;
  if (why === 'some-blocks')
    return `A hint, not a warning: ${measured}, but only some blocks split (the block index decides which: one block of the grid, or its diagonal), so what the launch pays depends on its grid, which the source does not fix.`;
  if (why === 'once')
    return `A hint, not a warning: ${measured}, but each thread passes the branch once (it is in no loop of the kernel, nor holds one), so a warp pays them once; such a split is a warning from ${Math.round(LONG_PATH * minCostThreshold * 100) / 100} slots.`;
  if (why === 'few-lanes')
    return `A hint, not a warning: ${measured}, but only a few lanes of the warp run the path (a leader's work): it is worth rewriting when it holds a loop the idle lanes could share and costs ${Math.round(LONG_PATH * minCostThreshold * 100) / 100} slots or more.`;
  const warpShare = b.split?.warpShare ?? 1;
  if (warpShare < 1) {
    const spread = Math.round(b.idleIssueSlots * warpShare * 10) / 10;
    return `A hint, not a warning: ${measured}, but only ${b.split!.warps} splits, ${spread} slots per warp over the block; ${rule}.`;
  }
  return `A hint, not a warning: ${measured}; ${rule}.`;
}

export function divergenceFindings(branches: readonly Branch[], options: DivergenceSeverityOptions = {}): Finding[] {
  const seen = new Set<string>();
  const findings: Finding[] = [];
  // A device function reached from several kernels: its worst verdict, once.
  const ordered = [...branches].sort(
    (a, b) =>
      (divergenceSeverity(b, options) === 'warning' ? 1 : 0) - (divergenceSeverity(a, options) === 'warning' ? 1 : 0),
  );
  for (const b of ordered) {
    const severity = divergenceSeverity(b, options);
    if (!severity) continue;
    const key = `${b.span.start.line}:${b.span.start.character}:${b.construct}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push({
      code: 'divergent-branch',
      severity,
      message: b.explanation,
      span: b.conditionSpan,
      related: [{ uri: null, span: b.source.span, message: `the thread index comes from \`${b.source.text}\`` }],
    });
  }
  return findings.sort(
    (a, b) => a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character,
  );
}
