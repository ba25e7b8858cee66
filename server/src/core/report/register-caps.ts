/**
 * Register caps checked by ptxas. A register-capping fix (`__launch_bounds__(threads, blocks)` on a
 * kernel, `-maxrregcount=N` for the file) is proposed on arithmetic alone; whether ptxas then spills
 * decides whether it helps. This module names each cap a document's fixes propose (a variant: the
 * document's text with the edit applied, or the flag to add), and words what ptxas did with it:
 * "ptxas: 48 registers, no spills → 62.5%". The adapters compile the variants (nvcc/compile-variant.ts)
 * and hand the figures back through the facade.
 */
import type { Kernel } from '../types';
import type { DocumentReport } from './document-report';
import { occupancyFor, type LaunchAnalysis } from './launch-analysis';
import { offsetAt, type SourceText } from '../text/source-text';
import { bytes, percent } from './format';

/** What ptxas reported for the capped kernel on one architecture. */
export interface CapFigures {
  numRegs: number;
  spillStoreBytes: number;
  spillLoadBytes: number;
  stackFrameBytes: number;
}

/** Where a cap's check stands: compiling, ptxas's figures per architecture, or why there are none. */
export type CapCheck =
  { state: 'checking' } | { state: 'done'; perArch: Record<string, CapFigures> } | { state: 'failed'; message: string };

export interface CapEdit {
  span: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

/** One register cap a fix proposes: the variant to compile. */
export interface RegisterCap {
  /** Same key for the same variant of the same kernel (a `-maxrregcount` variant compiles once: the cache answers for the file's other kernels). */
  key: string;
  kind: 'launch-bounds' | 'maxrregcount';
  /** `__launch_bounds__(256, 5)` or `-maxrregcount=48`. */
  fix: string;
  /** The kernel whose figures decide (the launch's). */
  kernel: Kernel;
  /** For `launch-bounds`: the edit of the document; for `maxrregcount`: none (the flag is added). */
  edits: CapEdit[];
  flag: string | null;
}

export function launchBoundsCapKey(kernel: Kernel, text: string): string {
  return `launch-bounds|${kernel.qualifiedName}|${kernel.nameSpan.start.line}:${kernel.nameSpan.start.character}|${text}`;
}

export function maxrregcountCapKey(kernel: Kernel, numRegs: number): string {
  return `maxrregcount|${kernel.qualifiedName}|${kernel.nameSpan.start.line}:${kernel.nameSpan.start.character}|${numRegs}`;
}

/** The document's text with a cap's edits applied (edits do not overlap). */
export function variantText(source: SourceText, edits: readonly CapEdit[]): string {
  const ordered = edits
    .map((e) => ({ start: offsetAt(source, e.span.start), end: offsetAt(source, e.span.end), text: e.newText }))
    .sort((a, b) => b.start - a.start);
  let text = source.text;
  for (const e of ordered) text = text.slice(0, e.start) + e.text + text.slice(e.end);
  return text;
}

/** Per architecture of the launch: ptxas's figures under the cap and the occupancy they give at the launch's block. */
export function checkedOccupancy(
  analysis: LaunchAnalysis,
  check: CapCheck | undefined,
): Record<string, CapFigures & { occupancy: number | null }> | null {
  if (!check || check.state !== 'done') return null;
  const out: Record<string, CapFigures & { occupancy: number | null }> = {};
  for (const p of analysis.perArch) {
    const f = check.perArch[p.arch];
    if (!f) continue;
    const at = occupancyFor(
      p.arch,
      {
        ...p.figures,
        numRegs: f.numRegs,
        spillStoreBytes: f.spillStoreBytes,
        spillLoadBytes: f.spillLoadBytes,
        stackFrameBytes: f.stackFrameBytes,
        instances: undefined,
      },
      analysis.threadsPerBlock,
      analysis.dynamicSmemBytes,
      analysis.kernel,
    );
    out[p.arch] = { ...f, occupancy: at.result && !at.fails ? at.result.occupancy : null };
  }
  return out;
}

/**
 * "ptxas: 48 registers, no spills → 62.5%", with ": the spills may cost more than the occupancy
 * gains" when ptxas spilled; "checking with ptxas…" until it answers; null when no check was asked.
 */
export function capCheckText(analysis: LaunchAnalysis, arch: string, check: CapCheck | undefined): string | null {
  if (!check) return null;
  if (check.state === 'checking') return 'checking with ptxas…';
  if (check.state === 'failed') return `ptxas check failed: ${check.message}`;
  const f = checkedOccupancy(analysis, check)?.[arch];
  if (!f) return null;
  const spills = f.spillStoreBytes > 0 || f.spillLoadBytes > 0;
  const spillText = spills
    ? `${bytes(f.spillStoreBytes)} spill stores / ${bytes(f.spillLoadBytes)} loads`
    : 'no spills';
  const occupancy = f.occupancy !== null ? ` → ${percent(f.occupancy)}` : '';
  return `ptxas: ${f.numRegs} registers, ${spillText}${occupancy}${spills ? ': the spills may cost more than the occupancy gains' : ''}`;
}

/** The check of a cap in a report (only checks of the report's own text are in it). */
export function capCheckOf(report: DocumentReport, key: string): CapCheck | undefined {
  return report.capChecks.get(key);
}
