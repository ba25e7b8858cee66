/** The hover's and the CLI's words for a launch on named GPUs (see launch-on-gpus.ts). */
import type { LaunchOnGpu } from './launch-on-gpus';
import { wholeWavesGrid } from '../gpu/waves';
import { percent } from './format';
import { loadsText, paceText } from './latency-text';

const count = (n: number) => n.toLocaleString('en-US');
const blocksText = (n: number) => `${count(n)} block${n === 1 ? '' : 's'}`;

/**
 * One line per part: waves and tail, or waves per element, or one full wave. Null when there is
 * nothing to say. `named`: say which part (the CLI's lines); the hover names it in a heading.
 */
export function wavesText(g: LaunchOnGpu, named = true): string | null {
  const on = `${named ? `on the ${g.part.name} ` : ''}(${g.blocksPerSm} blocks per SM × ${g.part.sms} SMs = ${count(g.blocksPerSm * g.part.sms)} per wave)`;
  if (g.sizedFromDevice) return `The grid is sized from the device: one full wave ${on}, no tail.`;
  if (g.perElement)
    return `\`${g.perElement.variable}\` sets the grid: one wave per ${count(g.perElement.elementsPerWave)} elements of \`${g.perElement.variable}\` ${on}.`;
  const w = g.waves;
  // One block is a design (a final reduction, a serial step): nothing to say about waves.
  if (!w || g.gridBlocks === null || g.gridBlocks === 1) return null;
  if (w.wavesRun === 1 && w.lastWaveFill < 1) {
    const spread = w.spread
      .map((s) => `${count(s.sms)} SM${s.sms === 1 ? '' : 's'} run${s.sms === 1 ? 's' : ''} ${s.blocks}`)
      .join(' and ');
    const idle = w.idleSms > 0 ? `; ${count(w.idleSms)} SMs stay idle` : '';
    const share = w.waves < 0.01 ? 'under 1% of a wave' : `${w.waves.toFixed(2)} of a wave`;
    return `${blocksText(g.gridBlocks)} = ${share} ${on}: ${spread}, of the ${g.blocksPerSm} each could hold${idle}. The grid, not occupancy, limits this launch.`;
  }
  if (w.lastWaveFill === 1)
    return `${blocksText(g.gridBlocks)} = ${w.wavesRun} full wave${w.wavesRun === 1 ? '' : 's'} ${on}.`;
  const whole = wholeWavesGrid(g.gridBlocks, g.blocksPerSm, g.part.sms);
  return `${blocksText(g.gridBlocks)} = ${w.waves.toFixed(2)} waves ${on}: the last wave runs ${percent(Math.round(w.lastWaveFill * 1000) / 1000)} full, and about ${Math.round(w.idleFraction * 100)}% of the block slots idle over the run. A grid of ${count(whole)} blocks fills whole waves.`;
}

/** The launch lens's short form: `1.25 waves on the A100 SXM4 40GB (last 25% full)`, or null when there is nothing to say. */
export function wavesShort(g: LaunchOnGpu): string | null {
  if (g.sizedFromDevice) return `one full wave on the ${g.part.name}`;
  if (g.perElement)
    return `a wave per ${count(g.perElement.elementsPerWave)} of ${g.perElement.variable} on the ${g.part.name}`;
  const w = g.waves;
  if (!w || g.gridBlocks === null || g.gridBlocks === 1) return null;
  if (w.wavesRun === 1 && w.lastWaveFill < 1)
    return `${w.waves < 0.01 ? 'under 0.01' : w.waves.toFixed(2)} of a wave on the ${g.part.name}${w.idleSms > 0 ? `, ${count(w.idleSms)} SMs idle` : ''}`;
  const last = w.lastWaveFill < 1 ? ` (last ${percent(Math.round(w.lastWaveFill * 1000) / 1000)} full)` : '';
  return `${Number.isInteger(w.waves) ? w.waves : w.waves.toFixed(2)} waves on the ${g.part.name}${last}`;
}

/** The cluster limit, as the estimate it is. */
export function clusterText(g: LaunchOnGpu, named = true): string | null {
  const c = g.cluster;
  if (!c) return null;
  return `Clusters of ${c.clusterBlocks} blocks: about ${count(c.maxActiveClusters)} active at once${named ? ` on the ${g.part.name}` : ''} (${count(c.blocksInClusters)} blocks, against ${count(c.blocksWithoutClusters)} without clusters). An estimate: ${c.assumptions.join('; ')}.`;
}

/** Little's law on the part, over its published latencies, and the registers a kernel could spend. */
export function latencyRangeText(g: LaunchOnGpu, numRegs: number | null): string | null {
  const l = g.latency;
  if (!l) return null;
  const needed =
    l.warpsNeeded.low === l.warpsNeeded.high ? `${l.warpsNeeded.low}` : `${l.warpsNeeded.low}–${l.warpsNeeded.high}`;
  const cycles =
    l.latencyCycles.low === l.latencyCycles.high
      ? `${l.latencyCycles.low}`
      : `${l.latencyCycles.low}–${l.latencyCycles.high}`;
  const covered =
    l.warpsResident >= l.warpsNeeded.high
      ? 'covered even at the high latency'
      : l.warpsResident >= l.warpsNeeded.low
        ? `covered at the low latency, ${percent(Math.round((l.warpsResident / l.warpsNeeded.high) * 1000) / 1000)} at the high`
        : `short: ${percent(Math.round((l.warpsResident / l.warpsNeeded.low) * 1000) / 1000)} of the low latency covered`;
  const upTo = l.atLeast ? 'at most ' : '';
  const said = l.atLeast && l.warpsResident < l.warpsNeeded.high ? 'whether that is covered is not known' : covered;
  let text = `${upTo}${needed} warps needed to ${paceText(l.limit)}, L = ${cycles} cycles as published, ${loadsText({ ...l, instructionsPerIteration: l.instructionsPerIteration })}); ${l.warpsResident} resident, ${said}.`;
  if (g.registerHeadroom !== null && numRegs !== null && g.registerHeadroom > numRegs) {
    text += ` Aim for a full gap, not a full stadium: the kernel could use up to ${g.registerHeadroom} registers per thread (now ${numRegs}) on unrolling or ILP and still hold the ${l.warpsNeeded.high} warps.`;
  }
  return text;
}

/**
 * The hover's paragraph per part, in markdown: waves, clusters and the latency range under the
 * part's name. `onArch` gives the kernel's registers on an architecture and, where it matters,
 * the issue-bound reading's sentence.
 */
export function gpuLines(
  onGpus: readonly LaunchOnGpu[],
  onArch: (arch: string) => { numRegs: number | null; issueBound: string | null },
): string[] {
  const lines: string[] = [];
  for (const g of onGpus) {
    const { numRegs, issueBound } = onArch(g.arch);
    const range = latencyRangeText(g, numRegs);
    const latency =
      range &&
      `Latency (estimate): ${range}${issueBound ? ` ${issueBound}` : ''} Little's law, ${g.latency?.instructionsPerIteration === undefined ? 'W = ⌈L × r / p⌉' : 'W = ⌈min(r, S × p / n) × (L + n) / p⌉'}; ILP lowers it as much as occupancy does.`;
    const said = [wavesText(g, false), clusterText(g, false), latency].filter((t): t is string => t !== null);
    if (said.length) lines.push(`**On the ${g.part.name}:** ${said.join(' ')}`);
  }
  return lines;
}
