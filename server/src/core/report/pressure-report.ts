/**
 * Register pressure per source line of a document's kernels, from the PTX liveness pass
 * (compiler/ptx-liveness.ts): the lines of each kernel's body, how many 32-bit values are live
 * at the busiest instruction of each, where the kernel peaks, and what ptxas allocated. The
 * hover, the peak's lens, the heat map request and the CLI read it from the report.
 *
 * An estimate, and said to be one wherever it is shown: PTX virtual registers before ptxas
 * allocates them (docs/register-pressure.md gives the typical ratio to ptxas's count).
 */
import type { Kernel, Position } from '../types';
import { ptxPressure, type KernelPressure } from '../compiler/ptx-liveness';
import { entryNamesKernel, fileIdsFor, ptxFiles } from '../compiler/ptx-line-costs';

/** A PTX module's pressure, computed once per PTX text (the facade keeps it with the PTX). */
export interface ModulePressure {
  files: ReadonlyMap<number, string>;
  /** The PTX's `.target` (`sm_80`), or null when it names none. */
  arch: string | null;
  kernels: readonly KernelPressure[];
}

export function modulePressure(ptx: string): ModulePressure {
  const target = /^\s*\.target\s+(sm_\w+)/m.exec(ptx);
  return { files: ptxFiles(ptx), arch: target ? target[1] : null, kernels: ptxPressure(ptx) };
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
  allocated: (kernel: Kernel, entry: string, arch: string | null) => number | null = () => null,
): Map<Kernel, KernelPressureView> {
  const ids = fileIdsFor(module, filePath);
  const views = new Map<Kernel, KernelPressureView>();
  if (ids.size === 0) return views;
  for (const kernel of kernels) {
    if (!kernel.isDefinition) continue;
    const entries = module.kernels.filter((k) => entryNamesKernel(k.name, kernel.name));
    let best: KernelPressureView | null = null;
    for (const entry of entries) {
      const view = viewOf(kernel, entry, ids, module.arch, entries.length);
      if (view && (!best || view.peak > best.peak)) best = view;
    }
    if (best) views.set(kernel, { ...best, allocated: allocated(kernel, best.entry, best.arch) });
  }
  return views;
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

/** "About 17 values live at this line (PTX, before register allocation; ptxas allocated 20). …" */
export function pressureHoverMarkdown(view: KernelPressureView, line: LinePressure): string {
  const allocated =
    view.allocated !== null ? `; ptxas allocated ${view.allocated}${view.arch ? ` on ${view.arch}` : ''}` : '';
  const parts = [
    `**Register pressure (estimate):** about ${line.live} values live at this line (PTX, before register allocation${allocated}).`,
  ];
  const inlined = line.inlinedFrom.map(
    (f) => `${f.function ? `\`${f.function.replace(/`/g, "'")}\`` : 'a device function'} at line ${f.line}`,
  );
  if (inlined.length)
    parts.push(
      `Counts code inlined from ${inlined.slice(0, 3).join(', ')}${inlined.length > 3 ? ` and ${inlined.length - 3} more` : ''}.`,
    );
  if (view.peakLine === line.line) parts.push(`The kernel's pressure peaks here.`);
  else if (view.peakLine !== null) parts.push(`The kernel peaks at about ${view.peak} on line ${view.peakLine + 1}.`);
  if (view.instances > 1) parts.push(`Of ${view.instances} instantiations, the one with the highest peak.`);
  return parts.join(' ');
}

/** The lens on a kernel's peak line. */
export function pressureLensTitle(view: KernelPressureView): string {
  return `pressure peaks here (about ${view.peak} values live)`;
}

/** Per-line pressure of a document, for the heat map request and the CLI (0-based lines). */
export interface PressureResult {
  /** The architecture of the PTX the estimate comes from. */
  arch: string | null;
  estimate: 'ptx';
  kernels: Array<{
    kernel: string;
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
    estimate: 'ptx',
    kernels: views.map((v) => ({
      kernel: v.kernel.qualifiedName,
      line: v.kernel.nameSpan.start.line,
      peak: v.peak,
      peakLine: v.peakLine,
      allocated: v.allocated,
      lines: v.lines.map((l) => ({ line: l.line, live: l.live })),
    })),
  };
}
