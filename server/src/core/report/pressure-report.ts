/**
 * Register pressure per source line of a document's kernels, from the PTX liveness pass
 * (compiler/ptx-liveness.ts): the lines of each kernel's body, how many 32-bit values are live
 * at the busiest instruction of each, where the kernel peaks, and what ptxas allocated. The
 * hover, the peak's lens, the heat map request and the CLI read it from the report.
 *
 * An estimate, and said to be one wherever it is shown: PTX virtual registers before ptxas
 * allocates them (docs/register-pressure.md gives the typical ratio to ptxas's count). Where the
 * user's toolkit has nvdisasm, its life ranges of the same compile's cubin
 * (compiler/sass-life-ranges.ts) replace the estimate with the registers live after allocation,
 * and place the local-memory stores and loads (`STL`/`LDL`) at their lines.
 */
import type { Finding, Kernel, Position } from '../types';
import { ptxPressure, type KernelPressure } from '../compiler/ptx-liveness';
import { entryNamesKernel, fileIdsFor, ptxFiles } from '../compiler/ptx-line-costs';
import { parseSassLifeRanges, type SassFunction } from '../compiler/sass-life-ranges';

/** A PTX module's pressure, computed once per PTX text (the facade keeps it with the PTX). */
export interface ModulePressure {
  files: ReadonlyMap<number, string>;
  /** The PTX's `.target` (`sm_80`), or null when it names none. */
  arch: string | null;
  kernels: readonly KernelPressure[];
  /** nvdisasm's life ranges of the same compile's cubin for `arch`, or null without nvdisasm. */
  sass: readonly SassFunction[] | null;
}

/** `sass`: `nvdisasm --print-life-ranges --print-line-info` of the cubin compiled with this PTX, when there is one. */
export function modulePressure(ptx: string, sass: string | null = null): ModulePressure {
  const target = /^\s*\.target\s+(sm_\w+)/m.exec(ptx);
  return {
    files: ptxFiles(ptx),
    arch: target ? target[1] : null,
    kernels: ptxPressure(ptx),
    sass: sass ? parseSassLifeRanges(sass) : null,
  };
}

/** What ptxas reported for an entry on an arch: its registers, and what it spilled. */
export interface EntryFigures {
  numRegs: number | null;
  spillStoreBytes: number;
  spillLoadBytes: number;
  stackFrameBytes: number;
}

/** Local-memory stores and loads (`STL`/`LDL`) of one source line, from SASS. */
export interface LineSpills {
  /** 0-based line of the kernel's own source (inlined code at its call). */
  line: number;
  stores: number;
  loads: number;
}

export interface LinePressure {
  /** 0-based line of the kernel's own source. */
  line: number;
  /** 32-bit values live at the busiest instruction of the line (a 64-bit value counts twice). */
  live: number;
  /** Functions whose code, inlined at this line, is counted here, and the 1-based line they are written on. */
  inlinedFrom: Array<{ function: string | null; line: number }>;
}

export interface KernelPressureView {
  kernel: Kernel;
  /** The PTX entry shown (for a template: the instantiation with the highest peak), and how many entries the kernel has. */
  entry: string;
  instances: number;
  /** The architecture the PTX was compiled for. */
  arch: string | null;
  peak: number;
  /** 0-based line where the peak is first reached, or null when no instruction has a line. */
  peakLine: number | null;
  /** In line order. */
  lines: LinePressure[];
  /** Registers ptxas allocated to the entry on `arch`, when known. */
  allocated: number | null;
  /** 'sass': registers live after allocation (nvdisasm); 'ptx': the estimate before it. */
  source: 'ptx' | 'sass';
  /** SASS only: the lines with local-memory stores and loads, in line order. */
  localAccesses: LineSpills[];
  /** What ptxas spilled for the entry on `arch`, when known. */
  spilled: { storeBytes: number; loadBytes: number; stackFrameBytes: number } | null;
}

/**
 * The pressure of each kernel definition of the document that has an entry in the PTX: only
 * instructions whose `.loc` is in the document (`filePath`, as nvcc compiled it) and in the
 * kernel's span, inlined code counted at its call.
 */
export function kernelPressures(
  kernels: readonly Kernel[],
  module: ModulePressure,
  filePath: string,
  figuresOf: (kernel: Kernel, entry: string, arch: string | null) => EntryFigures | null = () => null,
): Map<Kernel, KernelPressureView> {
  const ids = fileIdsFor(module, filePath);
  const views = new Map<Kernel, KernelPressureView>();
  if (ids.size === 0) return views;
  const sassByName = new Map((module.sass ?? []).map((f) => [f.name, f]));
  for (const kernel of kernels) {
    if (!kernel.isDefinition) continue;
    const entries = module.kernels.filter((k) => entryNamesKernel(k.name, kernel.name));
    let best: KernelPressureView | null = null;
    for (const entry of entries) {
      const ptxView = viewOf(kernel, entry, ids, module.arch, entries.length);
      const sass = sassByName.get(entry.name);
      const view = (ptxView && sass && sassViewOf(ptxView, sass, filePath)) || ptxView;
      if (view && (!best || view.peak > best.peak)) best = view;
    }
    if (!best) continue;
    const figures = figuresOf(kernel, best.entry, best.arch);
    views.set(kernel, {
      ...best,
      allocated: figures?.numRegs ?? null,
      spilled: figures
        ? {
            storeBytes: figures.spillStoreBytes,
            loadBytes: figures.spillLoadBytes,
            stackFrameBytes: figures.stackFrameBytes,
          }
        : null,
    });
  }
  return views;
}

/**
 * The PTX view of an entry redone from its SASS: the registers live at each line of the kernel after
 * allocation, and its local-memory accesses. Null when no SASS instruction has a line of the kernel
 * (a cubin without line information).
 */
function sassViewOf(ptx: KernelPressureView, fn: SassFunction, filePath: string): KernelPressureView | null {
  const first = ptx.kernel.span.start.line;
  const last = ptx.kernel.span.end.line;
  const names = [...new Set(fn.instructions.map((i) => i.file).filter((f): f is string => f !== null))];
  const ours = new Set<string>();
  const matching = fileIdsFor({ files: new Map(names.map((n, i) => [i, n])) }, filePath);
  for (const i of matching) ours.add(names[i]);
  const lines = new Map<number, LinePressure>();
  const local = new Map<number, LineSpills>();
  let peak = 0;
  let peakLine: number | null = null;
  for (const ins of fn.instructions) {
    if (ins.line === null || ins.file === null || !ours.has(ins.file)) continue;
    const line = ins.line - 1;
    if (line < first || line > last) continue;
    if (ins.local) {
      let at = local.get(line);
      if (!at) local.set(line, (at = { line, stores: 0, loads: 0 }));
      if (ins.local === 'store') at.stores++;
      else at.loads++;
    }
    if (ins.liveRegisters === null) continue;
    let at = lines.get(line);
    if (!at)
      lines.set(line, (at = { line, live: 0, inlinedFrom: ptx.lines.find((l) => l.line === line)?.inlinedFrom ?? [] }));
    at.live = Math.max(at.live, ins.liveRegisters);
    if (ins.liveRegisters > peak) {
      peak = ins.liveRegisters;
      peakLine = line;
    }
  }
  if (lines.size === 0) return null;
  return {
    ...ptx,
    source: 'sass',
    peak,
    peakLine,
    lines: [...lines.values()].sort((a, b) => a.line - b.line),
    localAccesses: [...local.values()].sort((a, b) => a.line - b.line),
  };
}

/**
 * `register-spill-here`: each line whose SASS stores to or loads from local memory, in a kernel ptxas
 * says spills on that arch (without spills, those instructions are a local array's, not spills).
 * Information, not a warning: the spill itself is `register-spill`'s warning on the kernel; these
 * say where the spilled values are stored and reloaded, so the programmer knows which lines to relieve.
 */
export function spillLineFindings(pressure: ReadonlyMap<Kernel, KernelPressureView>): Finding[] {
  const findings: Finding[] = [];
  for (const view of pressure.values()) {
    const spilled = view.spilled;
    if (view.source !== 'sass' || !spilled || (spilled.storeBytes === 0 && spilled.loadBytes === 0)) continue;
    // A stack frame larger than the spill stores holds local arrays too: their accesses look the same.
    const arrays = spilled.stackFrameBytes > spilled.storeBytes;
    for (const at of view.localAccesses) {
      const counts = [
        at.stores ? `${at.stores} local-memory store${at.stores > 1 ? 's' : ''} (STL)` : null,
        at.loads ? `${at.loads} local-memory load${at.loads > 1 ? 's' : ''} (LDL)` : null,
      ].filter(Boolean);
      findings.push({
        code: 'register-spill-here',
        severity: 'info',
        message: `${view.kernel.qualifiedName} spills registers here: ${counts.join(' and ')} in the SASS for ${view.arch ?? 'the first target'} (ptxas: ${spilled.storeBytes} B spill stores / ${spilled.loadBytes} B loads per thread)${arrays ? '; some may be a local array, which compiles to the same instructions' : ''}. Fewer values live across this line lets ptxas keep them in registers.`,
        span: {
          start: { line: at.line, character: 0 },
          end: { line: at.line, character: 0 },
        },
        related: [],
      });
    }
  }
  return findings;
}

function viewOf(
  kernel: Kernel,
  entry: KernelPressure,
  ids: ReadonlySet<number>,
  arch: string | null,
  instances: number,
): KernelPressureView | null {
  const first = kernel.span.start.line;
  const last = kernel.span.end.line;
  const lines = new Map<number, LinePressure>();
  let peak = 0;
  let peakLine: number | null = null;
  for (const ins of entry.instructions) {
    if (ins.line === null || ins.file === null || !ids.has(ins.file)) continue;
    const line = ins.line - 1;
    if (line < first || line > last) continue;
    let at = lines.get(line);
    if (!at) lines.set(line, (at = { line, live: 0, inlinedFrom: [] }));
    at.live = Math.max(at.live, ins.liveRegisters);
    const from = ins.inlinedFrom;
    if (from && !at.inlinedFrom.some((f) => f.function === from.function && f.line === from.line))
      at.inlinedFrom.push({ function: from.function, line: from.line });
    if (ins.liveRegisters > peak) {
      peak = ins.liveRegisters;
      peakLine = line;
    }
  }
  if (lines.size === 0) return null;
  return {
    kernel,
    entry: entry.name,
    instances,
    arch,
    peak,
    peakLine,
    lines: [...lines.values()].sort((a, b) => a.line - b.line),
    allocated: null,
    source: 'ptx',
    localAccesses: [],
    spilled: null,
  };
}

/** The kernel whose body holds `position`, and the pressure of its line, if the PTX has it. */
export function pressureAt(
  pressure: ReadonlyMap<Kernel, KernelPressureView>,
  position: Position,
): { view: KernelPressureView; line: LinePressure } | null {
  for (const view of pressure.values()) {
    const body = view.kernel.bodySpan;
    if (!body || position.line < body.start.line || position.line > body.end.line) continue;
    const line = view.lines.find((l) => l.line === position.line);
    return line ? { view, line } : null;
  }
  return null;
}

/**
 * "About 17 values live at this line (PTX, before register allocation; ptxas allocated 20). …", or from SASS
 * "15 registers live at this line (SASS from nvdisasm, after register allocation; ptxas allocated 20). …"
 */
export function pressureHoverMarkdown(view: KernelPressureView, line: LinePressure): string {
  const allocated =
    view.allocated !== null ? `; ptxas allocated ${view.allocated}${view.arch ? ` on ${view.arch}` : ''}` : '';
  const parts =
    view.source === 'sass'
      ? [
          `**Register pressure:** ${line.live} registers live at this line (SASS from nvdisasm, after register allocation${allocated}).`,
        ]
      : [
          `**Register pressure (estimate):** about ${line.live} values live at this line (PTX, before register allocation${allocated}).`,
        ];
  const local = view.localAccesses.find((l) => l.line === line.line);
  if (local)
    parts.push(
      `Local memory here: ${local.stores} store${local.stores === 1 ? '' : 's'} (STL), ${local.loads} load${local.loads === 1 ? '' : 's'} (LDL).`,
    );
  const inlined = line.inlinedFrom.map(
    (f) => `${f.function ? `\`${f.function.replace(/`/g, "'")}\`` : 'a device function'} at line ${f.line}`,
  );
  if (inlined.length)
    parts.push(
      `Counts code inlined from ${inlined.slice(0, 3).join(', ')}${inlined.length > 3 ? ` and ${inlined.length - 3} more` : ''}.`,
    );
  if (view.peakLine === line.line) parts.push(`The kernel's pressure peaks here.`);
  else if (view.peakLine !== null)
    parts.push(
      `The kernel peaks at ${view.source === 'sass' ? '' : 'about '}${view.peak} on line ${view.peakLine + 1}.`,
    );
  if (view.instances > 1) parts.push(`Of ${view.instances} instantiations, the one with the highest peak.`);
  return parts.join(' ');
}

/** The lens on a kernel's peak line. */
export function pressureLensTitle(view: KernelPressureView): string {
  return view.source === 'sass'
    ? `pressure peaks here (${view.peak} registers live, SASS)`
    : `pressure peaks here (about ${view.peak} values live)`;
}

/** Per-line pressure of a document, for the heat map request and the CLI (0-based lines). */
export interface PressureResult {
  /** The architecture of the PTX the estimate comes from. */
  arch: string | null;
  /** 'ptx': values live before register allocation (an estimate); 'sass': registers live after it (nvdisasm), for every kernel. */
  estimate: 'ptx' | 'sass';
  kernels: Array<{
    kernel: string;
    /** Where this kernel's figures come from (a kernel the SASS does not cover keeps the PTX estimate). */
    source: 'ptx' | 'sass';
    /** 0-based line of the kernel's name. */
    line: number;
    peak: number;
    peakLine: number | null;
    allocated: number | null;
    lines: Array<{ line: number; live: number }>;
  }>;
}

export function pressureResult(pressure: ReadonlyMap<Kernel, KernelPressureView>): PressureResult {
  const views = [...pressure.values()];
  return {
    arch: views[0]?.arch ?? null,
    estimate: views.length > 0 && views.every((v) => v.source === 'sass') ? 'sass' : 'ptx',
    kernels: views.map((v) => ({
      kernel: v.kernel.qualifiedName,
      source: v.source,
      line: v.kernel.nameSpan.start.line,
      peak: v.peak,
      peakLine: v.peakLine,
      allocated: v.allocated,
      lines: v.lines.map((l) => ({ line: l.line, live: l.live })),
    })),
  };
}
