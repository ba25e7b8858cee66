/**
 * Markdown and one-line texts for a launch and a kernel, built from the core's
 * plain data. The hover, the code lens and the CLI's text format share them.
 */
import type { Kernel } from '../types';
import type { ArchOccupancy, CandidateOccupancy, CompileNote, KernelFigures, LaunchAnalysis } from './launch-analysis';
import type { BudgetLevel } from '../gpu/register-budget';
import type { CompiledInstance } from './document-report';
import type { OccupancyResult } from '../gpu/occupancy';
import type { LatencyReading } from '../gpu/latency';
import {
  ago,
  blocks,
  bytes,
  counted,
  dim3Text,
  LIMIT_NAMES,
  listAnd,
  listOr,
  mdText,
  originText,
  percent,
} from './format';
import { INT_MAX } from '../gpu/occupancy';
import { loadsText, paceText } from './latency-text';

export interface ReportExtras {
  /** Extra lines per arch-independent section (next step, latency), already markdown. */
  lines?: string[];
  /** The latency estimate is given on named GPUs (in `lines`), with their own figures: no per-architecture one. */
  latencyOnGpus?: boolean;
  now?: number;
  /** What ptxas did with the next step's register caps (register-caps.ts), or "checking with ptxas…". */
  capChecks?: { launchBounds?: string | null; maxrregcount?: { fix: string; text: string } | null };
}

/**
 * The launch's heading, markdown: "**k\<256\>**: 256 threads, 8 warps per block, 0 B dynamic shared memory".
 * `short`: a long template argument list is cut to its first arguments (the hover's height is
 * scarce; the code the hover is on shows them all).
 */
export function launchTitle(analysis: LaunchAnalysis, { short = false }: { short?: boolean } = {}): string {
  const { name, shape } = titleParts(analysis, short);
  return `**${mdText(name)}**: ${shape}`;
}

/** The same heading as plain text, for a terminal: "k<256>: 256 threads, 8 warps per block, 0 B dynamic shared memory". */
export function launchTitleText(analysis: LaunchAnalysis): string {
  const { name, shape } = titleParts(analysis);
  return `${name}: ${shape}`;
}

/** Template arguments longer than this are cut in a short title. */
const SHORT_ARGS_CHARS = 24;

function titleParts(analysis: LaunchAnalysis, short = false): { name: string; shape: string } {
  const l = analysis.launch;
  const args = l.templateArgs?.join(', ') ?? null;
  const cut =
    short && args !== null && args.length > SHORT_ARGS_CHARS && l.templateArgs!.length > 2
      ? `${l.templateArgs!.slice(0, 2).join(', ')}, …`
      : args;
  const name = cut !== null ? `${l.kernelName}<${cut}>` : l.kernelName;
  const block = l.block.value;
  const threads = analysis.threadsPerBlock;
  const candidates = analysis.candidates;
  // A template's launch read from the instances the unit calls (facts/template-instances.ts).
  const calls = l.blockFromInstances
    ? `${l.blockFromInstances === 1 ? 'the call' : `the ${l.blockFromInstances} calls`} of \`${l.enclosingFunction}\` in this unit`
    : '';
  const shape =
    block && threads !== null
      ? `${counted(threads, 'thread')}${block.y !== 1 || block.z !== 1 ? ` (${dim3Text(block)})` : ''}${calls ? ` (from ${l.blockFromInstances === 1 ? '' : 'each of '}${calls})` : ''}, ${counted(Math.ceil(threads / 32), 'warp')} per block`
      : candidates
        ? `block size \`${l.block.text || '?'}\` one of ${listOr(candidates.map((c) => dim3Text(c.block)))} threads${calls ? ` over ${calls}` : ', whichever a run-time condition or the build picks'}`
        : `block size \`${l.block.text || '?'}\`${l.block.known ? ` = ${l.block.known}` : ''} not known statically${l.block.note ? ` (${l.block.note})` : ''}`;
  const smem =
    analysis.dynamicSmemBytes !== null
      ? `${bytes(analysis.dynamicSmemBytes)} dynamic shared memory`
      : `dynamic shared memory \`${l.dynamicSmem.text}\` not known statically`;
  return { name, shape: `${shape}, ${smem}` };
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

/** Short names for the other ceilings' row, where five of them share a cell. */
const SHORT_LIMIT_NAMES: Record<string, string> = {
  registers: 'regs',
  sharedMemory: 'smem',
  warps: 'warp slots',
  blocks: 'block slots',
  barriers: 'barriers',
};

/**
 * The answer first, in as few rows as VS Code's hover (250 px by default, diagnostics above it
 * included) can show whole: one column per architecture; the occupancy with blocks and warps per
 * SM, the ceiling that binds with its blocks, then every other ceiling by how soon it would bind.
 */
export function occupancyTable(perArch: readonly ArchOccupancy[]): string {
  const withResult = shownArchs(perArch);
  if (withResult.length === 0) return '';
  const header = `| | ${withResult.map((a) => a.arch).join(' | ')} |\n|---|${withResult.map(() => '---').join('|')}|`;
  const row = (label: string, cell: (r: OccupancyResult, a: ArchOccupancy) => string) =>
    `| ${label} | ${withResult.map((a) => cell(a.result!, a)).join(' | ')} |`;
  const le = (a: ArchOccupancy) => (a.upperBound ? '≤ ' : '');
  const ceilings = (r: OccupancyResult) =>
    (
      [
        ['registers', r.blockLimitRegs],
        ['sharedMemory', r.blockLimitSharedMem],
        ['warps', r.blockLimitWarps],
        ['blocks', r.blockLimitBlocks],
        ['barriers', r.blockLimitBarriers],
      ] as const
    ).filter(([, n]) => n < INT_MAX);
  return [
    header,
    row(
      'occupancy',
      (r, a) =>
        `**${occupancyPercent(a)}** · ${blocksPerSm(a)} block${r.activeBlocksPerMultiprocessor === 1 ? '' : 's'}/SM · ${le(a)}${r.activeWarps}/${r.maxWarpsPerMultiprocessor} warps`,
    ),
    row('limited by', (r) => {
      if (r.limitingFactors.length === 0) return 'no ceiling';
      const binding = ceilings(r).find(([f]) => r.limitingFactors.includes(f));
      return `**${r.limitingFactors.map((f) => LIMIT_NAMES[f] ?? f).join('** and **')}**${binding ? ` (${blocks(binding[1])})` : ''}`;
    }),
    row('other ceilings', (r) => {
      const others = ceilings(r)
        .filter(([f]) => !r.limitingFactors.includes(f))
        .sort((x, y) => x[1] - y[1]);
      return others.length ? others.map(([f, n]) => `${SHORT_LIMIT_NAMES[f]} ${n}`).join(' · ') : '-';
    }),
  ].join('\n');
}

/** "40 registers, 1 KB static smem (ptxas, sm_80 and sm_90, 2 min ago)" */
export function figuresLine(
  perArch: ReadonlyArray<Pick<ArchOccupancy, 'arch' | 'figures'>>,
  kernel: Kernel | null,
  now = Date.now(),
): string {
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
    const compile = f.compile;
    if (compile?.state === 'not-compiled' && compile.compiler === 'starting')
      return `registers not known yet for {archs}${smem} (starting: nvcc compiles once the settings are read)`;
    if (compile?.state === 'running')
      return `registers not known yet for {archs}${smem} (${runningText(compile, now)})`;
    if (compile?.state === 'failed') return `registers unknown for {archs}${smem}: ${failedText(compile)}`;
    if (compile?.state === 'no-instance')
      return `registers unknown for {archs}${smem}: ptxas compiled ${baseName(compile.unit)}, with no instance of this kernel that fits this launch${f.note ? ` (${f.note})` : ''}`;
    const note = f.note ? ` (${f.note})` : '';
    const elsewhere = 'pass a build log, or add `// occupancy: regs=N` above the kernel';
    // Ask for nvcc only where it is missing: with nvcc found, the file or a unit including it has to be compiled.
    if (compile?.state === 'not-compiled')
      return compile.compiler === 'missing'
        ? `registers unknown for {archs}${smem}${note}: nvcc was not found; save with nvcc available (\`cudaOccupancy.nvcc.path\`), ${elsewhere}`
        : compile.compiler === 'off'
          ? `registers unknown for {archs}${smem}${note}: nvcc is switched off (\`cudaOccupancy.nvcc.enabled\`); ${elsewhere}`
          : `registers unknown for {archs}${smem}${note}: no compile has covered this kernel yet; save its file or a \`.cu\` that includes it, ${elsewhere}`;
    return `registers unknown for {archs}${smem}${note}: compile with nvcc, ${elsewhere}`;
  }
  const spread = f.instances && f.instances.length > 1 ? f.instances : null;
  const regs = spread ? rangeText(spread.map((i) => i.figures.numRegs ?? 0)) : `${f.numRegs}`;
  const smem = spread
    ? rangeText(
        spread.map((i) => i.figures.sharedSizeBytes ?? kernel?.staticSharedBytes ?? 0),
        bytes,
      )
    : bytes(f.sharedSizeBytes ?? kernel?.staticSharedBytes ?? 0);
  const parts = [`${regs} registers`, `${smem} static smem`];
  if (spread) parts[0] = `${regs} registers over ${spread.length} instantiations that could run here`;
  if (f.spillStoreBytes && !spread) parts.push(`${f.spillStoreBytes} B spill stores`);
  const when = ago(f.producedAt, now);
  const origin = [
    f.origin ? `${f.source}: ${originText(f.origin)}` : f.source,
    '{archs}',
    when,
    f.stale ? 'stale' : null,
  ]
    .filter(Boolean)
    .join(', ');
  const compile =
    f.compile?.state === 'running'
      ? `; ${runningText(f.compile, now)}`
      : f.stale && f.compile?.state === 'failed'
        ? `: ${failedText(f.compile)}`
        : f.stale && f.note
          ? `: ${f.note}`
          : '';
  return `${parts.join(', ')} (${origin})${compile}`;
}

/** "ptxas running for sm_80 on main.cu, 3 s", or "compiling main.cu…" before nvcc starts. */
function runningText(c: Extract<CompileNote, { state: 'running' }>, now: number): string {
  const seconds = Math.max(0, Math.round((now - c.since) / 1000));
  if (c.queued) return `compiling${c.unit ? ` ${baseName(c.unit)}` : ''}…`;
  return `ptxas running for ${c.archs.length ? listAnd([...c.archs]) : 'the target architectures'}${c.unit ? ` on ${baseName(c.unit)}` : ''}, ${seconds} s`;
}

/** "nvcc failed on main.cu: `cublas_v2.h`: no such file; set ..." */
function failedText(c: Extract<CompileNote, { state: 'failed' }>): string {
  return `nvcc failed on ${baseName(c.unit)}: ${c.message}${c.hint ? `; ${c.hint}` : ''}`;
}

/** `40–56`, or `40` when all are the same. */
function rangeText(values: readonly number[], format: (n: number) => string = String): string {
  const min = Math.min(...values);
  const max = Math.max(...values);
  return min === max ? format(min) : `${format(min)}–${format(max)}`;
}

function baseName(path: string): string {
  return path.slice(path.replace(/\\/g, '/').lastIndexOf('/') + 1);
}

/**
 * "100% ≤ 32 · 75% ≤ 40 · 50% ≤ 64 registers per thread": for each occupancy level reachable at
 * the launch's block size and shared memory, the most registers per thread that reach it.
 */
export function budgetText(levels: readonly BudgetLevel[]): string {
  return `${levels.map((l) => `${percent(l.occupancy)} ≤ ${l.maxRegsPerThread}`).join(' · ')} registers per thread`;
}

/** The register budget lines of a launch without register figures, one per group of architectures with the same budget. */
export function budgetLines(analysis: LaunchAnalysis): string[] {
  const groups = new Map<string, string[]>();
  for (const p of analysis.perArch) {
    if (!p.budget) continue;
    const text = budgetText(p.budget);
    groups.set(text, [...(groups.get(text) ?? []), p.arch]);
  }
  const smem = analysis.dynamicSmemBytes ? ` and ${bytes(analysis.dynamicSmemBytes)} of dynamic shared memory` : '';
  const k = analysis.kernel;
  const unknownStatic =
    k && k.staticSharedBytes === null && k.sharedDeclarations.some((d) => !d.isExtern)
      ? ' Its static shared memory is not known from the source and is counted as 0: more would lower these.'
      : '';
  return [...groups].map(
    ([text, archs]) =>
      `**Register budget** at ${analysis.threadsPerBlock} threads${smem} (${listAnd(archs)}): ${text}.${unknownStatic}`,
  );
}

/** One architecture's line when there is no single occupancy: the spread of the instances that could run, or the register budget. */
export function noOccupancyText(p: ArchOccupancy): string {
  if (p.budget)
    return `${p.reason}; ${budgetText(p.budget).replace(/ registers per thread$/, '')} registers per thread`;
  return p.reason ?? 'no occupancy';
}

/** "56 regs" or "40–56 regs over 24 instantiations", for a result's figures. */
export function registersShort(p: Pick<ArchOccupancy, 'figures' | 'spread'>): string {
  if (p.spread)
    return `${p.spread.minRegs === p.spread.maxRegs ? p.spread.minRegs : `${p.spread.minRegs}–${p.spread.maxRegs}`} regs over ${p.spread.instances} instantiations`;
  return `${p.figures.numRegs} regs`;
}

/**
 * One row per candidate block size, one column per architecture: occupancy, blocks per SM and the
 * binding limit, or why there is none.
 */
export function candidatesTable(candidates: readonly CandidateOccupancy[]): string {
  if (candidates.length === 0) return '';
  const archs = candidates[0].perArch.map((a) => a.arch);
  const header = `| block | ${archs.join(' | ')} |\n|---|${archs.map(() => '---').join('|')}|`;
  const cell = (a: ArchOccupancy) =>
    a.result
      ? `**${percent(a.result.occupancy)}** (${a.result.activeBlocksPerMultiprocessor} block${a.result.activeBlocksPerMultiprocessor === 1 ? '' : 's'}/SM, ${a.result.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ') || 'no limit'})`
      : a.reason?.startsWith('the launch fails')
        ? 'fails: above the launch bounds'
        : a.figures.numRegs === null
          ? 'registers unknown'
          : 'no occupancy';
  const rows = candidates.map(
    (c) =>
      `| ${dim3Text(c.block)}${c.block.y !== 1 || c.block.z !== 1 ? ` (${c.threadsPerBlock})` : ''} | ${c.perArch.map(cell).join(' | ')} |`,
  );
  return [header, ...rows].join('\n');
}

/**
 * The hover on a launch, the answer first: VS Code caps a hover's height (250 px in a default
 * window, the diagnostics at the place shown above it), so the occupancy table comes right under
 * the title, then the next step, then where the figures come from, then the latency and the rest.
 * Without an occupancy the figures line is the answer (why none: compiling, nvcc failed, unknown)
 * and the register budget follows it.
 */
export function launchHoverMarkdown(analysis: LaunchAnalysis, extras: ReportExtras = {}): string {
  const table = occupancyTable(analysis.perArch);
  const figures = `Figures: ${figuresLine(analysis.perArch, analysis.kernel, extras.now)}.`;
  const parts = [launchTitle(analysis, { short: true })];
  const through = analysis.launch.through;
  if (through?.kind === 'wrapper' && through.definedIn)
    parts.push(
      `Launched by \`${mdCode(through.name)}\`, defined in ${mdText(through.definedIn.slice(through.definedIn.lastIndexOf('/') + 1))} (another translation unit), with this call's values.`,
    );
  if (table) parts.push(table);
  else parts.push(figures, ...budgetLines(analysis));
  if (analysis.candidates) parts.push(candidatesTable(analysis.candidates));
  const bounded = shownArchs(analysis.perArch).filter((a) => a.upperBound);
  for (const [why, archs] of groupBy(bounded, (a) => a.upperBound!)) {
    parts.push(
      `Upper bounds for ${listAnd(archs.map((a) => a.arch))}: ${why} (\`${mdCode(analysis.launch.dynamicSmem.text)}\`), and every byte of it per block can only lower them. The next step and the latency estimate need it.`,
    );
  }
  // Unknown registers: the figures line says why, and the budget follows.
  const missing = analysis.candidates
    ? []
    : analysis.perArch.filter((a) => a.fails || (!a.result && a.reason && !(a.figures.numRegs === null && a.budget)));
  for (const [reason, archs] of groupBy(missing, (a) => a.fails ?? a.reason!))
    parts.push(`No occupancy for ${listAnd(archs.map((a) => a.arch))}: ${reason}.`);
  if (!analysis.kernel) parts.push(`Kernel \`${analysis.launch.kernelName}\` is not defined in view.`);
  const next = nextStepLine(analysis, extras.capChecks);
  if (next) parts.push(next);
  if (table) parts.push(figures, ...budgetLines(analysis));
  const latency = extras.latencyOnGpus ? null : latencyLine(analysis);
  if (latency) parts.push(latency);
  parts.push(...(extras.lines ?? []));
  return parts.join('\n\n');
}

/** "sm_80 75% · sm_90 75% at 256 threads · limited by registers (40/thread) · 1 KB smem" */
export function kernelLensTitle(
  kernel: Kernel,
  analyses: readonly LaunchAnalysis[],
  compiled: readonly CompiledInstance[] = [],
): string {
  const resolved = analyses.filter((a) => shownArchs(a.perArch).length > 0);
  if (resolved.length === 0) {
    const spread = analyses.find((a) => a.perArch.some((x) => x.spread));
    if (spread) return `${spreadText(spread)} at ${spread.threadsPerBlock} threads`;
    const count = analyses.length;
    const bounds = kernel.launchBounds ? ` · ${kernel.launchBounds.text}` : '';
    const figures = compiled.length ? ` · ${compiledText(compiled)}` : '';
    return count === 0
      ? `no launches in view${figures}${bounds}`
      : `${count} launch${count === 1 ? '' : 'es'} in view · occupancy needs ${analyses.some((a) => a.threadsPerBlock !== null) ? 'register figures' : 'a static block size'}${figures}${bounds}`;
  }
  const sizes = [...new Set(resolved.map((a) => a.threadsPerBlock))].sort((x, y) => (x ?? 0) - (y ?? 0));
  const shown = resolved[0];
  const occ = shownArchs(shown.perArch)
    .map((a) => `${a.arch} ${occupancyPercent(a)}`)
    .join(' · ');
  const first = shownArchs(shown.perArch)[0];
  const limiter = first.result!.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ');
  const regs = [
    ...new Set(
      shownArchs(shown.perArch)
        .flatMap((a) => (a.spread ? [a.spread.minRegs, a.spread.maxRegs] : [a.figures.numRegs]))
        .filter((n): n is number => n !== null),
    ),
  ].sort((a, b) => a - b);
  const regText = regs.length > 1 ? `${regs[0]}–${regs[regs.length - 1]}` : `${regs[0]}`;
  const instances = first.spread ? `, ${first.spread.instances} instantiations` : '';
  const detail =
    first.result!.limitingFactors.includes('registers') && regs.length
      ? ` (${regText}/thread${instances})`
      : first.spread
        ? ` (${first.spread.instances} instantiations)`
        : '';
  const smem = first.figures.sharedSizeBytes ?? kernel.staticSharedBytes;
  const at =
    sizes.length > 1
      ? `at ${sizes[0]}–${sizes[sizes.length - 1]} threads (showing ${shown.threadsPerBlock})`
      : `at ${shown.threadsPerBlock} threads`;
  return `${occ} ${at} · limited by ${limiter}${detail}${smem ? ` · ${bytes(smem)} smem` : ''}`;
}

/** "2 instantiations compiled: 16–48 regs (ptxas, sm_80)": what the units that compile a kernel made of it. */
export function compiledText(compiled: readonly CompiledInstance[]): string {
  const figures = compiled
    .flatMap((i) => Object.entries(i.resources).map(([arch, f]) => ({ arch, f })))
    .filter((x) => x.f.numRegs !== null);
  if (figures.length === 0) return '';
  const regs = rangeText(figures.map((x) => x.f.numRegs!));
  const archs = [...new Set(figures.map((x) => x.arch))];
  const what = compiled.length === 1 ? 'compiled' : `${compiled.length} instantiations compiled`;
  return `${what}: ${regs} regs (${[...new Set(figures.map((x) => x.f.source))].join(', ')}, ${listAnd(archs)}${figures.some((x) => x.f.stale) ? ', stale' : ''})`;
}

/** One line per compiled instance (the first few): "`gemm<float, 4>`: 16 registers, 0 B static smem on sm_80". */
export function compiledLines(compiled: readonly CompiledInstance[], limit = 8): string[] {
  const lines = compiled.slice(0, limit).map((i) => {
    const perArch = Object.entries(i.resources)
      .filter(([, f]) => f.numRegs !== null)
      .map(([arch, f]) => `${f.numRegs} registers, ${bytes(f.sharedSizeBytes ?? 0)} static smem on ${arch}`);
    return `- \`${i.signature ?? '?'}\`: ${perArch.join('; ') || 'no figures'}`;
  });
  if (compiled.length > limit) lines.push(`- and ${compiled.length - limit} more`);
  return lines;
}

/** "sm_80 50–75% · over 24 instantiations (32–56 regs)": the occupancy spread of the instances a launch could run. */
function spreadText(analysis: LaunchAnalysis): string {
  const withSpread = analysis.perArch.filter((a) => a.spread);
  const occ = withSpread
    .map(
      (a) =>
        `${a.arch} ${a.spread!.minOccupancy === a.spread!.maxOccupancy ? percent(a.spread!.minOccupancy) : `${percent(a.spread!.minOccupancy)}–${percent(a.spread!.maxOccupancy)}`}`,
    )
    .join(' · ');
  const s = withSpread[0].spread!;
  return `${occ} over ${s.instances} instantiations (${s.minRegs === s.maxRegs ? s.minRegs : `${s.minRegs}–${s.maxRegs}`} regs)`;
}

export function launchLensTitle(analysis: LaunchAnalysis): string {
  const with_ = shownArchs(analysis.perArch);
  const failing = analysis.perArch.find((a) => a.fails);
  if (failing) return `${analysis.threadsPerBlock} threads · ${failing.fails!.replace(/`/g, '')}`;
  if (with_.length === 0) {
    if (analysis.perArch.some((a) => a.spread)) return `${analysis.threadsPerBlock} threads · ${spreadText(analysis)}`;
    const compile = analysis.perArch.map((a) => a.figures.compile).find((c) => c);
    const state =
      (compile?.state === 'running' && compile.queued) ||
      (compile?.state === 'not-compiled' && compile.compiler === 'starting')
        ? 'compiling…'
        : compile?.state === 'running'
          ? 'ptxas running'
          : compile?.state === 'failed'
            ? 'nvcc failed'
            : 'registers unknown';
    const budget = analysis.perArch.find((a) => a.budget);
    if (budget) {
      const [top, next] = budget.budget!;
      return `${analysis.threadsPerBlock} threads · ${state} · ${budget.arch} ${percent(top.occupancy)} needs ≤ ${top.maxRegsPerThread} regs${next ? `, ${percent(next.occupancy)} ≤ ${next.maxRegsPerThread}` : ''}`;
    }
    return `${analysis.threadsPerBlock} threads · occupancy needs register figures`;
  }
  const limiter = with_[0].result!.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ');
  const instances = with_[0].spread ? ` · all ${with_[0].spread.instances} instantiations` : '';
  const bound = with_.some((a) => a.upperBound) ? ` · upper bound: ${with_.find((a) => a.upperBound)!.upperBound}` : '';
  return `${with_.map((a) => `${a.arch} ${occupancyPercent(a)} (${blocksPerSm(a)} ${a.result!.activeBlocksPerMultiprocessor === 1 ? 'block' : 'blocks'}/SM)`).join(' · ')} · limited by ${limiter}${instances}${bound}`;
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

/**
 * The `__launch_bounds__` that asks ptxas for `blocks` blocks per SM at this launch's block size,
 * as the hover proposes it and the quick fix writes it: the kernel's own first argument kept when
 * it says this launch's threads (`NUM_THREADS` of a template stays a parameter, not 256 for
 * every instantiation), and its cluster argument kept.
 */
export function launchBoundsFixText(analysis: LaunchAnalysis, blocks: number): string {
  const written = analysis.kernel?.launchBounds;
  const threads = analysis.threadsPerBlock;
  const first =
    written && analysis.launchBounds?.maxThreadsPerBlock === threads && written.args[0]?.trim()
      ? written.args[0].trim()
      : String(threads);
  const cluster = written?.args[2]?.trim();
  return `__launch_bounds__(${first}, ${blocks}${cluster ? `, ${cluster}` : ''})`;
}

/** "**Next step:** at ≤ 32 registers per thread, 8 blocks fit (100%). Try `__launch_bounds__(256, 8)` ..." */
export function nextStepLine(analysis: LaunchAnalysis, checks: ReportExtras['capChecks'] = {}): string | null {
  const p = analysis.perArch.find((x) => x.result && x.nextStep && !x.fails && !x.upperBound);
  const threads = analysis.threadsPerBlock;
  if (!p || threads === null) return null;
  const r = p.result!;
  const { sharedMemory, blockSize } = p.nextStep!;
  const warps = Math.ceil(threads / 32);
  const occAt = (blocks: number) =>
    percent(Math.min(blocks * warps, r.maxWarpsPerMultiprocessor) / r.maxWarpsPerMultiprocessor);
  const steps: string[] = [];
  const cap = p.atRegisterCap;
  if (cap && p.figures.numRegs !== null && cap.numRegs < p.figures.numRegs) {
    const bounds =
      p.launchBoundsCapForNext !== null
        ? ` Try \`${launchBoundsFixText(analysis, cap.activeBlocks)}\` (${checks.launchBounds ?? `ptxas targets ≤ ${p.launchBoundsCapForNext} registers and may spill to meet it`}).`
        : '';
    const flag = checks.maxrregcount ? ` With \`${checks.maxrregcount.fix}\`: ${checks.maxrregcount.text}.` : '';
    steps.push(
      `at ≤ ${cap.numRegs} registers per thread, ${cap.activeBlocks} blocks fit (${percent(cap.occupancy)}) on ${p.arch}.${bounds}${flag}`,
    );
  }
  if (sharedMemory.maxSharedMemPerBlock !== null && r.limitingFactors.includes('sharedMemory')) {
    steps.push(
      `at ≤ ${bytes(sharedMemory.maxSharedMemPerBlock)} shared memory per block (now ${bytes(r.allocatedSharedMemPerBlock)} allocated), ${sharedMemory.targetBlocks} blocks fit (${occAt(sharedMemory.targetBlocks)}).`,
    );
  }
  if (
    blockSize.best &&
    blockSize.best.blockSize !== threads &&
    (analysis.launchBounds?.maxThreadsPerBlock ?? Infinity) >= blockSize.best.blockSize
  ) {
    steps.push(
      `${blockSize.best.blockSize} threads per block give ${percent(blockSize.best.occupancy)} (${blockSize.best.activeWarps} warps).`,
    );
  }
  if (steps.length === 0)
    return r.occupancy >= 1
      ? null
      : `**Next step:** nothing short of a different block shape raises occupancy on ${p.arch}: ${r.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ')} bind.`;
  return `**Next step:** ${steps.join(' ')}`;
}

/**
 * "**Latency (estimate, sm_80):** 48 warps resident. About 38 are needed to keep DRAM busy ...":
 * the bandwidth-bound reading, which decides for a memory-bound kernel; with the work between
 * loads known (the PTX, or the source), the reading for that work, which may be the schedulers'
 * (a loop doing many FMAs per load has little gap to fill). The issue-bound reading (a load on
 * every instruction) is an upper bound, and is named only where occupancy could reach it: mostly
 * it asks for more warps (1,880 on sm_80) than an SM holds, and would flag every kernel. Nothing
 * when nothing tells how many loads the kernel issues.
 */
export function latencyLine(analysis: LaunchAnalysis): string | null {
  if (analysis.latencyPending && analysis.perArch.some((x) => x.result && x.result.activeWarps > 0)) {
    return "**Latency (estimate):** waiting for the analysis of this kernel's loads (it runs in the background on a first open).";
  }
  const p = analysis.perArch.find((x) => x.latency);
  if (!p) return null;
  const { bandwidthBound: b, issueBound: i } = p.latency!;
  const a = b.assumptions;
  const verdict =
    b.deficitWarps > 0
      ? `${b.deficitWarps} short: about ${percent(b.coveredFraction)} of the latency is covered`
      : b.warpsNeeded <= b.warpsResident
        ? 'so latency is covered'
        : 'so whether latency is covered is not known: fewer may do';
  const upper =
    a.instructionsPerIteration === undefined && issueBoundMatters(i, p.result!.maxWarpsPerMultiprocessor)
      ? ` Issue-bound, the upper bound for a load on every instruction: ${i.warpsNeeded} (${i.deficitWarps > 0 ? `${i.deficitWarps} short` : 'covered'}).`
      : '';
  const formula =
    a.instructionsPerIteration === undefined ? 'W = ⌈L × r / p⌉' : 'W = ⌈min(r, S × p / n) × (L + n) / p⌉';
  return `**Latency (estimate, ${p.arch}):** ${b.warpsResident} warps resident. ${b.upperBound ? 'At most' : 'About'} ${b.warpsNeeded} ${b.warpsNeeded === 1 ? 'is' : 'are'} needed to ${paceText(a.limit)}: L ≈ ${a.latencyCycles} cycles, ${loadsText({ ...a, atLeast: b.upperBound })}; ${a.referencePart ?? 'reference part'}), ${verdict}.${upper} Little's law, ${formula}; ILP lowers it as much as occupancy does.`;
}

/** The issue-bound reading says something occupancy can act on only when an SM could hold the warps it asks for. */
export function issueBoundMatters(issueBound: LatencyReading, maxWarpsPerMultiprocessor: number): boolean {
  return issueBound.warpsNeeded <= maxWarpsPerMultiprocessor;
}
