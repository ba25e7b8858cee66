/** The hover's text: a launch's occupancy report, a kernel's figures and launches, or a thread-index branch's verdict and costs. */
import type { Position, Span } from '../types';
import { contains } from '../text/source-text';
import type { DocumentReport } from './document-report';
import { counted, mdText } from './format';
import {
  compiledLines,
  compiledText,
  issueBoundMatters,
  launchHoverMarkdown,
  occupancyTable,
  figuresLine,
  kernelLensTitle,
  type ReportExtras,
} from './launch-report';
import { branchesAt, branchHoverMarkdown } from './branch-report';
import { memoryHoverMarkdown, memoryRecordsAt } from './memory-findings';
import { gpuLines } from './gpu-text';
import { pressureAt, pressureHoverMarkdown } from './pressure-report';
import { registerCaps } from './quick-fixes';
import { capCheckText } from './register-caps';

/** Markdown for the hover at a place, and the span it is about. */
export interface HoverText {
  markdown: string;
  span: Span;
}

export function hoverText(
  report: DocumentReport,
  position: Position,
  extras: (analysisIndex: number) => ReportExtras = () => ({}),
): HoverText | null {
  const index = report.analyses.findIndex(
    (a) => contains(a.launch.nameSpan, position) || contains(a.launch.span, position),
  );
  if (index >= 0) {
    const analysis = report.analyses[index];
    const more = extras(index);
    const onGpus = gpuLines(report.gpus[index] ?? [], (arch) => {
      const p = analysis.perArch.find((x) => x.arch === arch);
      const i = p?.latency?.issueBound;
      // With the work between loads known, the reading already says what the schedulers need.
      const matters =
        i &&
        p.result &&
        p.latency?.bandwidthBound.assumptions.instructionsPerIteration === undefined &&
        issueBoundMatters(i, p.result.maxWarpsPerMultiprocessor);
      return {
        numRegs: p?.figures.numRegs ?? null,
        issueBound: matters
          ? `Issue-bound, the upper bound for a load on every instruction: ${i.warpsNeeded} (${i.deficitWarps > 0 ? `${i.deficitWarps} short` : 'covered'}).`
          : null,
      };
    });
    const latencyOnGpus = (report.gpus[index] ?? []).some((g) => g.latency !== null);
    return {
      markdown: launchHoverMarkdown(analysis, {
        ...more,
        latencyOnGpus,
        capChecks: capChecksOf(report, analysis),
        lines: [...onGpus, ...(more.lines ?? [])],
      }),
      span: analysis.launch.nameSpan,
    };
  }
  for (const [kernel, analyses] of report.byKernel) {
    if (!contains(kernel.nameSpan, position)) continue;
    const lines = [
      `**${mdText(kernel.qualifiedName)}**${kernel.launchBounds ? ` · \`${kernel.launchBounds.text}\`` : ''}`,
    ];
    const compiled = report.compiled.get(kernel) ?? [];
    if (analyses.length === 0) {
      lines.push('No launches of this kernel in view.');
      if (compiled.some((i) => Object.values(i.resources).some((f) => f.numRegs !== null)))
        lines.push(
          `${compiledText(compiled).replace(/^./, (c) => c.toUpperCase())}:\n\n${compiledLines(compiled).join('\n')}`,
        );
    } else {
      const first = analyses.find((a) => a.perArch.some((x) => x.result)) ?? analyses[0];
      // The answer first, as on a launch: a long hover is cut off at the bottom.
      const table = occupancyTable(first.perArch);
      if (table)
        lines.push(`At ${first.threadsPerBlock} threads (line ${first.launch.span.start.line + 1}):\n\n${table}`);
      else lines.push(kernelLensTitle(kernel, analyses, compiled));
      lines.push(`Figures: ${figuresLine(first.perArch, kernel)}.`);
      lines.push(
        `Launches in view: ${analyses.map((a) => `line ${a.launch.span.start.line + 1} (${a.threadsPerBlock !== null ? counted(a.threadsPerBlock, 'thread') : `\`${a.launch.block.text}\` threads`})`).join(', ')}.`,
      );
    }
    return { markdown: lines.join('\n\n'), span: kernel.nameSpan };
  }
  const memory = memoryRecordsAt(report.memory, position);
  if (memory.length > 0) return { markdown: memoryHoverMarkdown(memory), span: memory[0].span };
  const branches = branchesAt(report.branches, position);
  if (branches.length > 0)
    return { markdown: branchHoverMarkdown(branches, report.divergenceSeverity), span: branches[0].conditionSpan };
  // Anywhere else in a kernel's body: the register pressure of the line, when the PTX has it.
  const pressure = pressureAt(report.pressure, position);
  if (pressure) {
    const lineEnd =
      report.facts.source.text.split(/\r?\n|\r/, position.line + 1)[position.line]?.length ?? position.character;
    return {
      markdown: pressureHoverMarkdown(pressure.view, pressure.line),
      span: { start: { line: position.line, character: 0 }, end: { line: position.line, character: lineEnd } },
    };
  }
  return null;
}

/** What ptxas did with the register caps the launch's next step proposes (none asked: empty). */
function capChecksOf(
  report: DocumentReport,
  analysis: DocumentReport['analyses'][number],
): NonNullable<ReportExtras['capChecks']> {
  if (report.capChecks.size === 0) return {};
  const out: NonNullable<ReportExtras['capChecks']> = {};
  for (const { cap, arch } of registerCaps(report).filter((c) => c.analysis === analysis)) {
    const text = capCheckText(analysis, arch, report.capChecks.get(cap.key));
    if (!text) continue;
    if (cap.kind === 'launch-bounds') out.launchBounds = text;
    else out.maxrregcount = { fix: cap.fix, text };
  }
  return out;
}
