/** `cuda-occupancy check --format text`: per file, kernels and launches, architectures side by side. */
import * as path from 'node:path';
import type { CheckFile } from './check-json';
import { LIMIT_NAMES, percent } from '../core/report/format';
import { launchTitle } from '../core/report/launch-report';

export function checkText(archs: string[], files: CheckFile[], cwd: string): string {
  const out: string[] = [];
  for (const { path: file, report } of files) {
    out.push(`${path.relative(cwd, file) || file}`);
    for (const k of report.facts.kernels) {
      const bounds = k.launchBounds ? ` ${k.launchBounds.text}` : '';
      out.push(`  kernel ${k.qualifiedName} (line ${k.nameSpan.start.line + 1})${bounds}${k.isDefinition ? '' : ' [declaration]'}`);
    }
    for (const a of report.analyses) {
      out.push(`  launch line ${a.launch.span.start.line + 1}: ${launchTitle(a).replace(/\*\*/g, '')}`);
      if (a.candidates) {
        for (const c of a.candidates) {
          for (const p of c.perArch) {
            const cell = p.result ? `${percent(p.result.occupancy).padStart(6)}  ${String(p.result.activeBlocksPerMultiprocessor).padStart(2)} blocks/SM  limited by ${p.result.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ')}` : `     -  ${p.reason}`;
            out.push(`    ${String(c.threadsPerBlock).padStart(5)} threads  ${p.arch.padEnd(7)} ${cell}`);
          }
        }
        continue;
      }
      for (const p of a.perArch) {
        if (p.result) {
          const limiter = p.result.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ');
          out.push(`    ${p.arch.padEnd(7)} ${percent(p.result.occupancy).padStart(6)}  ${String(p.result.activeBlocksPerMultiprocessor).padStart(2)} blocks/SM  ${String(p.result.activeWarps).padStart(2)}/${p.result.maxWarpsPerMultiprocessor} warps  limited by ${limiter}  [${p.figures.numRegs} regs, ${p.figures.source}]`);
        } else {
          out.push(`    ${p.arch.padEnd(7)}      -  ${p.reason}`);
        }
      }
    }
    for (const f of report.findings) {
      out.push(`  ${f.severity} ${f.code} line ${f.span.start.line + 1}: ${f.message}`);
    }
    if (report.facts.kernels.length === 0 && report.analyses.length === 0) out.push('  no kernels or launches');
  }
  out.push(`architectures: ${archs.join(', ')}`);
  return out.join('\n') + '\n';
}
