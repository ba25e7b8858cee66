/**
 * `check`'s register pressure per kernel (core/report/pressure-report.ts, from the PTX of the file):
 * the JSON field `kernels[].pressure` (per-line figures with `--lines`) and the text line under a
 * kernel's figures. 1-based lines, as everywhere in check's output. An estimate: PTX values live
 * before ptxas allocates registers (docs/register-pressure.md); where the toolkit has nvdisasm, the
 * registers live after allocation, from SASS (`estimate: 'sass'`).
 */
import type { DocumentReport } from '../core/analyzer';
import type { Kernel } from '../core/types';

export interface KernelPressureJson {
  /** The most 32-bit values live at one instruction of the kernel (a 64-bit value counts twice). */
  peak: number;
  /** Where the peak is first reached (1-based), or null when the PTX gives no line. */
  peakLine: number | null;
  /** 'ptx': values live before register allocation (an estimate); 'sass': registers live after it (nvdisasm). */
  estimate: 'ptx' | 'sass';
  /** The architecture the PTX was compiled for (the first target). */
  arch: string | null;
  /** Registers ptxas allocated on `arch`, when known. */
  allocated: number | null;
  /** With `--lines`: each kernel line the PTX covers, in order. */
  lines?: Array<{ line: number; live: number }>;
}

export function kernelPressureJson(
  report: DocumentReport,
  kernel: Kernel,
  withLines: boolean,
): KernelPressureJson | null {
  const view = report.pressure.get(kernel);
  if (!view) return null;
  const json: KernelPressureJson = {
    peak: view.peak,
    peakLine: view.peakLine === null ? null : view.peakLine + 1,
    estimate: view.source,
    arch: view.arch,
    allocated: view.allocated,
  };
  if (withLines) json.lines = view.lines.map((l) => ({ line: l.line + 1, live: l.live }));
  return json;
}

/** "    pressure peaks at line 10: about 17 values live (PTX estimate for sm_80; ptxas allocated 12)" */
export function kernelPressureLines(report: DocumentReport, kernel: Kernel): string[] {
  const view = report.pressure.get(kernel);
  if (!view || view.peakLine === null) return [];
  const allocated = view.allocated !== null ? `; ptxas allocated ${view.allocated}` : '';
  if (view.source === 'sass')
    return [
      `    pressure peaks at line ${view.peakLine + 1}: ${view.peak} registers live (SASS${view.arch ? ` for ${view.arch}` : ''}, after register allocation${allocated})`,
    ];
  return [
    `    pressure peaks at line ${view.peakLine + 1}: about ${view.peak} values live (PTX estimate${view.arch ? ` for ${view.arch}` : ''}, before register allocation${allocated})`,
  ];
}
