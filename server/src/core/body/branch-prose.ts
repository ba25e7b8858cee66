/** What a branch's hover and warning say: its verdict, how it splits the warp and what it costs, in words, and a suggestion. */
import type { Branch, SplitSummary } from './divergence';
import type { Verdict } from './branch-verdicts';

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

function describeGroups(split: SplitSummary): string {
  const g = split.groups;
  // Groups that change with an unknown's value are one sample's: not shown.
  if (!g || split.groupsVary) return '';
  if (g.length === 2 && g[0] === g[1]) return ` into two groups of ${g[0]} lanes`;
  if (g.length === 2) return ` (${g[0]} lanes against ${g[1]})`;
  return ` into ${g.length} groups (${g.join(' + ')} lanes)`;
}

export function explain(b: Branch, basis: Verdict['basis'] | null, shapesKnown: boolean): string {
  const cond = `\`${b.condition}\``;
  if (b.kind === 'tail') {
    if (basis === 'block-tail')
      return `bounds guard: ${cond} splits at most one warp per block (the one holding the boundary).`;
    return b.construct === 'loop'
      ? `tail of a grid-stride loop: ${cond} splits at most the last warp.`
      : `tail guard: splits at most the last warp.`;
  }
  if (b.kind === 'warp-uniform') {
    const shape = shapesKnown ? 'for the launched block sizes' : 'assuming blockDim.x is a multiple of 32';
    return `warp-uniform: ${cond} has the same value in all 32 lanes of each warp (${shape}), so whole warps take one side and nothing is serialized.`;
  }
  const ptx = b.costSource === 'ptx';
  const instructions = (c: number) => `instruction${c === 1 ? '' : 's'}`;
  const amount = (c: number) =>
    ptx ? `${c} PTX ${instructions(c)}` : `about ${c} ${instructions(c)}, estimated from the syntax`;
  const slots = ptx ? 'PTX instructions' : 'estimated from the syntax';
  const split = b.split;
  const who = split?.dataDependent
    ? `${cond} depends on per-lane data (from \`${b.source.text}\`), so lanes of a warp disagree whenever their values do`
    : `${cond} splits ${split?.warps ?? 'warps'}${split ? describeGroups(split) : ''}${split?.when ? ` when ${split.when}` : ''}`;
  const lanes =
    b.laneActivity !== undefined
      ? ` (${pct(b.laneActivity)} of the lanes active there${split?.variesBySteps ? ', averaged over the steps' : ''})`
      : '';
  const [first, second] = b.paths;
  let body: string;
  if (b.construct === 'loop') {
    body = `${who}: lanes leave the loop at different iterations, and the warp keeps issuing the body (${amount(first.cost)} per iteration) until its last lane is done, with finished lanes idle.`;
  } else if (b.construct === 'return' || b.construct === 'break' || b.construct === 'continue') {
    const rest = b.construct === 'return' ? 'the rest of the function' : 'the rest of the loop body';
    body = `${who}: the lanes that ${b.construct} early idle while the others run ${rest} (${amount(first.cost)})${b.laneActivity !== undefined ? `, with ${pct(b.laneActivity)} of the lanes active` : ''}.`;
  } else if (b.construct === 'switch') {
    const k = Math.max(...b.concurrentPaths.map((s) => s.length));
    body = `${who}: the lanes of a warp go to up to ${k} cases, run one after the other: ${b.divergedCost} issue slot${b.divergedCost === 1 ? '' : 's'} against ${b.idealCost} if the lanes agreed (issue efficiency ${pct(b.efficiency)}; ${slots}).`;
  } else if (second && second.cost === 0) {
    const what =
      b.construct === 'short-circuit'
        ? `the right operand (${amount(first.cost)})`
        : `the body (${amount(first.cost)})`;
    body = `${who}; the idle lanes wait through ${what}${lanes}. The ${b.construct === 'short-circuit' ? 'skip' : 'else'} path is empty, so no extra issue slots are paid.`;
  } else {
    body = `${who}: the warp runs both paths one after the other: ${b.divergedCost} issue slot${b.divergedCost === 1 ? '' : 's'} against ${b.idealCost} if the lanes agreed (issue efficiency ${pct(b.efficiency)}; ${slots}).`;
  }
  if (b.predicated) {
    const tool = b.predicated.source === 'ptx' ? 'the PTX' : 'the SASS';
    const cost =
      b.predicated.cost !== null
        ? `its ${b.predicated.cost} ${b.predicated.source === 'ptx' ? 'PTX' : 'SASS'} instructions`
        : 'both paths';
    body += ` The compiler predicated it (no branch instruction in ${tool}): every warp issues ${cost}, whether its lanes agree or not.`;
  } else if (b.mergedArms)
    body +=
      ' The arms are the same code on different operands: the compiler makes one copy of it, the operands chosen per lane, so a split warp issues it once.';
  else if (b.likelyPredicated)
    body += ' It is short: the compiler will likely predicate it instead of branching (the idle lanes still issue it).';
  return body;
}

export function suggest(b: Branch): string | null {
  if (b.kind !== 'divergent') return null;
  const c = b.condition;
  if (b.split?.dataDependent)
    return 'If the data allows, group the work so the lanes of a warp see similar values (sort or bin it), or compute both sides without a branch.';
  if (b.split?.when && /<\s*32\b/.test(b.split.when))
    return 'Finish the last steps (fewer than 32 active lanes) inside one warp with `__shfl_down_sync`, which needs no branch.';
  if (/%/.test(c) && /==|!=/.test(c) && b.split?.warps === 'every warp')
    return 'Index the work so the active lanes are contiguous (e.g. sequential addressing `tid < s` instead of `tid % (2*s) == 0`): whole warps then drop out together.';
  if (b.construct === 'loop')
    return 'Balance the trip counts across the lanes of a warp (or give each warp its own work item) so the lanes finish together.';
  if (isLeaderBranch(b)) return null;
  if (b.paths.length >= 2 && b.paths.filter((p) => p.cost > 0).length >= 2)
    return 'Move work common to the paths out of the branch, or regroup the data so the lanes of a warp agree.';
  if (/[<>]/.test(c))
    return 'Align the condition to warp boundaries (a multiple of 32 lanes) so whole warps take one side.';
  return 'Align the condition to warp boundaries, move work out of the branch, or use warp-level primitives.';
}

/** `if (lane == 0) ...`: one lane against the rest with no else, the way warp-level code elects a leader. */
export function isLeaderBranch(b: Branch): boolean {
  const g = b.split?.groups;
  return (
    !!g &&
    g.length === 2 &&
    g[1] === 1 &&
    (b.construct === 'if' || b.construct === 'else-if') &&
    (b.paths[1]?.cost ?? 0) === 0
  );
}
