/** `cuda-occupancy check --format text`: per file, kernels and launches, architectures side by side. */
import * as path from 'node:path';
import type { CheckFile } from './check-json';
import { LIMIT_NAMES } from '../core/report/format';
import { blocksPerSm, launchTitle, occupancyPercent } from '../core/report/launch-report';

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
      for (const p of a.perArch) {
        if (p.result && !p.fails) {
          const limiter = p.result.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ');
          const bound = p.upperBound ? `  (upper bound: ${p.upperBound})` : '';
          out.push(`    ${p.arch.padEnd(7)} ${occupancyPercent(p).padStart(6)}  ${blocksPerSm(p).padStart(2)} blocks/SM  ${(p.upperBound ? '≤ ' : '') + String(p.result.activeWarps).padStart(2)}/${p.result.maxWarpsPerMultiprocessor} warps  limited by ${limiter}  [${p.figures.numRegs} regs, ${p.figures.source}]${bound}`);
        } else {
          out.push(`    ${p.arch.padEnd(7)}      -  ${p.fails ?? p.reason}`);
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
