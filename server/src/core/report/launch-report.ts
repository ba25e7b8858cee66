/**
 * Markdown and one-line texts for a launch and a kernel, built from the core's
 * plain data. The hover, the code lens and the CLI's text format share them.
 */
import type { Kernel } from '../types';
import type { ArchOccupancy, KernelFigures, LaunchAnalysis } from './launch-analysis';
import type { OccupancyResult } from '../gpu/occupancy';
import { ago, blocks, bytes, dim3Text, LIMIT_NAMES, listAnd, mdText, percent } from './format';

export interface ReportExtras {
  /** Extra lines per arch-independent section (next step, latency), already markdown. */
  lines?: string[];
  now?: number;
}

export function launchTitle(analysis: LaunchAnalysis): string {
  const l = analysis.launch;
  const name = l.templateArgs ? `${l.kernelName}<${l.templateArgs.join(', ')}>` : l.kernelName;
  const block = l.block.value;
  const threads = analysis.threadsPerBlock;
  const shape = block && threads !== null
    ? `${threads} threads${block.y !== 1 || block.z !== 1 ? ` (${dim3Text(block)})` : ''}, ${Math.ceil(threads / 32)} warp${Math.ceil(threads / 32) === 1 ? '' : 's'} per block`
    : `block size \`${l.block.text || '?'}\`${l.block.known ? ` = ${l.block.known}` : ''} not known statically${l.block.note ? ` (${l.block.note})` : ''}`;
  const smem = analysis.dynamicSmemBytes !== null ? `${bytes(analysis.dynamicSmemBytes)} dynamic shared memory` : `dynamic shared memory \`${l.dynamicSmem.text}\` not known statically`;
  return `**${mdText(name)}**: ${shape}, ${smem}`;
}

/** An occupancy figure as shown: `75%`, or `≤ 75%` when it is an upper bound. */
export function occupancyPercent(a: Pick<ArchOccupancy, 'result' | 'upperBound'>): string {
  return a.result ? `${a.upperBound ? '≤ ' : ''}${percent(a.result.occupancy)}` : '-';
}

/** Blocks per SM as shown: `8`, or `≤ 8` when the figure is an upper bound. */
export function blocksPerSm(a: Pick<ArchOccupancy, 'result' | 'upperBound'>): string {
  return a.result ? `${a.upperBound ? '≤ ' : ''}${a.result.activeBlocksPerMultiprocessor}` : '-';
}

/** The architectures with an occupancy figure to show: a result, and a launch that can run. */
export function shownArchs(perArch: readonly ArchOccupancy[]): ArchOccupancy[] {
  return perArch.filter((a) => a.result && !a.fails);
}

/** The ceilings table: one column per architecture, the binding limit marked. */
export function occupancyTable(perArch: readonly ArchOccupancy[]): string {
  const withResult = shownArchs(perArch);
  if (withResult.length === 0) return '';
  const header = `| | ${withResult.map((a) => a.arch).join(' | ')} |\n|---|${withResult.map(() => '---').join('|')}|`;
  const row = (label: string, cell: (r: OccupancyResult, a: ArchOccupancy) => string) => `| ${label} | ${withResult.map((a) => cell(a.result!, a)).join(' | ')} |`;
  const limit = (factor: string, value: (r: OccupancyResult) => number) => (r: OccupancyResult) =>
    r.limitingFactors.includes(factor as never) ? `**${blocks(value(r))}** ◀ limit` : blocks(value(r));
  const rows = [
    row('occupancy', (r, a) => `**${occupancyPercent(a)}** (${a.upperBound ? '≤ ' : ''}${r.activeWarps} / ${r.maxWarpsPerMultiprocessor} warps)`),
    row('blocks / SM', (_r, a) => blocksPerSm(a)),
    row('registers', limit('registers', (r) => r.blockLimitRegs)),
    row('shared memory', limit('sharedMemory', (r) => r.blockLimitSharedMem)),
    row('warp slots', limit('warps', (r) => r.blockLimitWarps)),
    row('block slots', limit('blocks', (r) => r.blockLimitBlocks)),
  ];
  if (withResult.some((a) => a.result!.blockLimitBarriers < 2147483647)) rows.push(row('barriers', limit('barriers', (r) => r.blockLimitBarriers)));
  return [header, ...rows].join('\n');
}

/** "40 registers, 1 KB static smem (ptxas, sm_80 and sm_90, 2 min ago)" */
export function figuresLine(perArch: ReadonlyArray<Pick<ArchOccupancy, 'arch' | 'figures'>>, kernel: Kernel | null, now = Date.now()): string {
  const groups = new Map<string, string[]>();
  for (const a of perArch) {
    const key = figuresText(a.figures, kernel, now);
    groups.set(key, [...(groups.get(key) ?? []), a.arch]);
  }
  return [...groups.entries()].map(([text, archs]) => text.replace('{archs}', listAnd(archs))).join('; ');
}

function figuresText(f: KernelFigures, kernel: Kernel | null, now: number): string {
  if (f.source === 'unknown' || f.numRegs === null) {
    const smem = kernel?.staticSharedBytes ? `, ${bytes(kernel.staticSharedBytes)} static smem (from the source)` : '';
    return `registers unknown for {archs}${smem}${f.note ? ` (${f.note})` : ''}: save with nvcc available, pass a build log, or add \`// occupancy: regs=N\` above the kernel`;
  }
  const smem = f.sharedSizeBytes ?? kernel?.staticSharedBytes ?? 0;
  const parts = [`${f.numRegs} registers`, `${bytes(smem)} static smem`];
  if (f.spillStoreBytes) parts.push(`${f.spillStoreBytes} B spill stores`);
  const when = ago(f.producedAt, now);
  const origin = [f.source, '{archs}', when, f.stale ? 'stale' : null].filter(Boolean).join(', ');
  return `${parts.join(', ')} (${origin})${f.stale && f.note ? `: ${f.note}` : ''}`;
}

export function launchHoverMarkdown(analysis: LaunchAnalysis, extras: ReportExtras = {}): string {
  const parts = [launchTitle(analysis)];
  const table = occupancyTable(analysis.perArch);
  if (table) parts.push(table);
  const bounded = shownArchs(analysis.perArch).filter((a) => a.upperBound);
  for (const [why, archs] of groupBy(bounded, (a) => a.upperBound!)) {
    parts.push(`Upper bounds for ${listAnd(archs.map((a) => a.arch))}: ${why} (\`${mdCode(analysis.launch.dynamicSmem.text)}\`), and every byte of it per block can only lower them. The next step and the latency estimate need it.`);
  }
  const missing = analysis.perArch.filter((a) => a.fails || (!a.result && a.reason));
  for (const [reason, archs] of groupBy(missing, (a) => a.fails ?? a.reason!)) parts.push(`No occupancy for ${listAnd(archs.map((a) => a.arch))}: ${reason}.`);
  if (!analysis.kernel) parts.push(`Kernel \`${analysis.launch.kernelName}\` is not defined in view.`);
  parts.push(`Figures: ${figuresLine(analysis.perArch, analysis.kernel, extras.now)}.`);
  const next = nextStepLine(analysis);
  if (next) parts.push(next);
  const latency = latencyLine(analysis);
  if (latency) parts.push(latency);
  parts.push(...(extras.lines ?? []));
  return parts.join('\n\n');
}

/** "sm_80 75% · sm_90 75% at 256 threads · limited by registers (40/thread) · 1 KB smem" */
export function kernelLensTitle(kernel: Kernel, analyses: readonly LaunchAnalysis[]): string {
  const resolved = analyses.filter((a) => shownArchs(a.perArch).length > 0);
  if (resolved.length === 0) {
    const count = analyses.length;
    const bounds = kernel.launchBounds ? ` · ${kernel.launchBounds.text}` : '';
    return count === 0 ? `no launches in view${bounds}` : `${count} launch${count === 1 ? '' : 'es'} in view · occupancy needs ${analyses.some((a) => a.threadsPerBlock !== null) ? 'register figures' : 'a static block size'}${bounds}`;
  }
  const sizes = [...new Set(resolved.map((a) => a.threadsPerBlock))].sort((x, y) => (x ?? 0) - (y ?? 0));
  const shown = resolved[0];
  const occ = shownArchs(shown.perArch).map((a) => `${a.arch} ${occupancyPercent(a)}`).join(' · ');
  const first = shownArchs(shown.perArch)[0];
  const limiter = first.result!.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ');
  const regs = [...new Set(shownArchs(shown.perArch).map((a) => a.figures.numRegs).filter((n): n is number => n !== null))].sort((a, b) => a - b);
  const regText = regs.length > 1 ? `${regs[0]}–${regs[regs.length - 1]}` : `${regs[0]}`;
  const detail = first.result!.limitingFactors.includes('registers') && regs.length ? ` (${regText}/thread)` : '';
  const smem = first.figures.sharedSizeBytes ?? kernel.staticSharedBytes;
  const at = sizes.length > 1 ? `at ${sizes[0]}–${sizes[sizes.length - 1]} threads (showing ${shown.threadsPerBlock})` : `at ${shown.threadsPerBlock} threads`;
  return `${occ} ${at} · limited by ${limiter}${detail}${smem ? ` · ${bytes(smem)} smem` : ''}`;
}

export function launchLensTitle(analysis: LaunchAnalysis): string {
  const with_ = shownArchs(analysis.perArch);
  const failing = analysis.perArch.find((a) => a.fails);
  if (failing) return `${analysis.threadsPerBlock} threads · ${failing.fails!.replace(/`/g, '')}`;
  if (with_.length === 0) return `${analysis.threadsPerBlock} threads · occupancy needs register figures`;
  const limiter = with_[0].result!.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ');
  const bound = with_.some((a) => a.upperBound) ? ` · upper bound: ${with_.find((a) => a.upperBound)!.upperBound}` : '';
  return `${with_.map((a) => `${a.arch} ${occupancyPercent(a)} (${blocksPerSm(a)} blocks/SM)`).join(' · ')} · limited by ${limiter}${bound}`;
}

/** Text for inside a markdown code span. */
function mdCode(text: string): string {
  return text.replace(/`/g, "'");
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) map.set(key(item), [...(map.get(key(item)) ?? []), item]);
  return map;
}

/** "**Next step:** at ≤ 32 registers per thread, 8 blocks fit (100%). Try `__launch_bounds__(256, 8)` ..." */
export function nextStepLine(analysis: LaunchAnalysis): string | null {
  const p = analysis.perArch.find((x) => x.result && x.nextStep && !x.fails && !x.upperBound);
  const threads = analysis.threadsPerBlock;
  if (!p || threads === null) return null;
  const r = p.result!;
  const { sharedMemory, blockSize } = p.nextStep!;
  const warps = Math.ceil(threads / 32);
  const occAt = (blocks: number) => percent(Math.min(blocks * warps, r.maxWarpsPerMultiprocessor) / r.maxWarpsPerMultiprocessor);
  const steps: string[] = [];
  const cap = p.atRegisterCap;
  if (cap && p.figures.numRegs !== null && cap.numRegs < p.figures.numRegs) {
    const bounds = p.launchBoundsCapForNext !== null ? ` Try \`__launch_bounds__(${threads}, ${cap.activeBlocks})\` (ptxas may spill to meet it).` : '';
    steps.push(`at ≤ ${cap.numRegs} registers per thread, ${cap.activeBlocks} blocks fit (${percent(cap.occupancy)}) on ${p.arch}.${bounds}`);
  }
  if (sharedMemory.maxSharedMemPerBlock !== null && r.limitingFactors.includes('sharedMemory')) {
    steps.push(`at ≤ ${bytes(sharedMemory.maxSharedMemPerBlock)} shared memory per block (now ${bytes(r.allocatedSharedMemPerBlock)} allocated), ${sharedMemory.targetBlocks} blocks fit (${occAt(sharedMemory.targetBlocks)}).`);
  }
  if (blockSize.best && blockSize.best.blockSize !== threads && (analysis.launchBounds?.maxThreadsPerBlock ?? Infinity) >= blockSize.best.blockSize) {
    steps.push(`${blockSize.best.blockSize} threads per block give ${percent(blockSize.best.occupancy)} (${blockSize.best.activeWarps} warps).`);
  }
  if (steps.length === 0) return r.occupancy >= 1 ? null : `**Next step:** nothing short of a different block shape raises occupancy on ${p.arch}: ${r.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ')} bind.`;
  return `**Next step:** ${steps.join(' ')}`;
}

/** "**Latency (estimate):** 48 warps resident. About 17 are needed to keep DRAM busy ..." */
export function latencyLine(analysis: LaunchAnalysis): string | null {
  if (analysis.latencyPending && analysis.perArch.some((x) => x.result && x.result.activeWarps > 0)) {
    return '**Latency (estimate):** waiting for the analysis of this kernel\'s loads (it runs in the background on a first open).';
  }
  const p = analysis.perArch.find((x) => x.latency);
  if (!p) return null;
  const { bandwidthBound: b, issueBound: i } = p.latency!;
  const verdict = b.deficitWarps > 0 ? `${b.deficitWarps} short: about ${percent(b.coveredFraction)} of the latency is covered` : 'so latency is covered';
  const p_ = b.assumptions.independentOpsPerWarp;
  return `**Latency (estimate, ${p.arch}):** ${b.warpsResident} warps resident. About ${b.warpsNeeded} are needed to keep DRAM busy (bandwidth-bound: L ≈ ${b.assumptions.latencyCycles} cycles, ${p_} load${p_ === 1 ? '' : 's'} in flight per warp, ${b.assumptions.referencePart ?? 'reference part'}), ${verdict}. Issue-bound, ${i.warpsNeeded} would be needed. Little's law, W = ⌈L × r / p⌉; ILP lowers it as much as occupancy does.`;
}
