/**
 * Quick fixes and refactors on a launch, each edit computed from the core's
 * numbers: a `__launch_bounds__` that reaches the next occupancy level, the
 * block size with the best occupancy, the dynamic shared memory opt-in, and a
 * `-maxrregcount` for the whole file. Plain data: lsp/code-actions.ts makes
 * LSP code actions of them, with edits in this document.
 */
import type { Position, Span } from '../types';
import type { DocumentReport } from './document-report';
import type { LaunchAnalysis } from './launch-analysis';
import { contains, offsetAt, positionAt } from '../text/source-text';
import { percent } from './format';

/** The client command that adds an argument to `cudaOccupancy.nvcc.args`. */
export const ADD_NVCC_ARGUMENT_COMMAND = 'cudaOccupancy.addNvccArgument';

export interface SourceEdit {
  span: Span;
  newText: string;
}

export interface QuickFix {
  title: string;
  kind: 'quickfix' | 'refactor.rewrite';
  isPreferred?: boolean;
  /** Edits in the report's document. */
  edits?: SourceEdit[];
  command?: { title: string; command: string; arguments: unknown[] };
  /** The finding this fixes (its code and span), for the editor to tie them together. */
  fixes?: { code: string; span: Span };
}

/** The findings in view of the request, as the editor sends them back. */
export interface FindingInView {
  code: string | number | undefined;
  span: Span;
}

/** The fixes for launches that `span` overlaps, and for the findings in view. */
export function quickFixes(report: DocumentReport, span: Span, findings: readonly FindingInView[]): QuickFix[] {
  const fixes: QuickFix[] = [];
  for (const analysis of report.analyses) {
    if (!overlaps(analysis.launch.span, span)) continue;
    fixes.push(...exceedsBoundsActions(report, analysis), ...launchBoundsActions(report, analysis), ...blockSizeActions(report, analysis), ...maxrregcountActions(analysis));
  }
  for (const finding of findings) {
    if (finding.code !== 'dynamic-smem-needs-opt-in') continue;
    const analysis = report.analyses.find((a) => contains(a.launch.span, finding.span.start));
    const fix = analysis && optInAction(report, analysis, { code: finding.code, span: finding.span });
    if (fix) fixes.push(fix);
  }
  return fixes;
}

/**
 * Whether the requested range and the launch share a position, ends included: a cursor inside
 * or at either end of the launch, a selection inside it, and a range around it (a whole line,
 * as Neovim sends for `vim.lsp.buf.code_action()`) all count.
 */
function overlaps(launch: Span, range: Span): boolean {
  return !before(range.end, launch.start) && !before(launch.end, range.start);
}

const before = (a: Position, b: Position) => a.line < b.line || (a.line === b.line && a.character < b.character);

function first(analysis: LaunchAnalysis) {
  return analysis.perArch.find((p) => p.result && p.nextStep);
}

/** A launch above its kernel's `__launch_bounds__` fails: launch with the bound, or raise the bound to the launch. */
function exceedsBoundsActions(report: DocumentReport, analysis: LaunchAnalysis): QuickFix[] {
  const bounds = analysis.launchBounds;
  const threads = analysis.threadsPerBlock;
  if (!bounds || bounds.maxThreadsPerBlock === null || threads === null || threads <= bounds.maxThreadsPerBlock) return [];
  const actions: QuickFix[] = [];
  const block = blockArgumentRange(report, analysis);
  if (block && /^\d+$/.test(analysis.launch.block.text.trim())) {
    actions.push({
      title: `Launch with ${bounds.maxThreadsPerBlock} threads per block, the most \`${bounds.text}\` allows (the grid must cover the work with smaller blocks)`,
      kind: 'quickfix',
      isPreferred: true,
      edits: [{ span: block, newText: String(bounds.maxThreadsPerBlock) }],
    });
  }
  const kernel = analysis.kernel;
  const literal = /^(__launch_bounds__\s*\(\s*)(\d+)/.exec(bounds.text);
  if (kernel && literal && sameDocument(report, kernel) && threads <= 1024) {
    const start = offsetAt(report.facts.source, bounds.span.start) + literal[1].length;
    const source = report.facts.source;
    actions.push({
      title: `Raise the bound to \`__launch_bounds__(${threads}${bounds.args.length > 1 ? ', …' : ''})\` (ptxas then compiles ${kernel.name} for ${threads}-thread blocks, with fewer registers per thread if it must)`,
      kind: 'quickfix',
      edits: [{ span: { start: positionAt(source, start), end: positionAt(source, start + literal[2].length) }, newText: String(threads) }],
    });
  }
  return actions;
}

/** `__launch_bounds__(threads, blocks + 1)`: asks ptxas for the register cap at which one more block fits. */
function launchBoundsActions(report: DocumentReport, analysis: LaunchAnalysis): QuickFix[] {
  const kernel = analysis.kernel;
  const p = first(analysis);
  const threads = analysis.threadsPerBlock;
  if (!kernel || !p || threads === null || !kernel.isDefinition || !sameDocument(report, kernel)) return [];
  const cap = p.atRegisterCap;
  if (!cap || p.launchBoundsCapForNext === null || p.figures.numRegs === null || cap.numRegs >= p.figures.numRegs) return [];
  const target = cap.activeBlocks;
  const text = `__launch_bounds__(${threads}, ${target})`;
  const edit: SourceEdit = kernel.launchBounds
    ? { span: kernel.launchBounds.span, newText: text }
    : { span: { start: kernel.nameSpan.start, end: kernel.nameSpan.start }, newText: `${text} ` };
  return [
    {
      title: `Cap registers for ${target} blocks/SM at ${threads} threads (${percent(cap.occupancy)} on ${p.arch}): ${kernel.launchBounds ? 'change to' : 'add'} \`${text}\` (ptxas targets ≤ ${p.launchBoundsCapForNext} registers, now ${p.figures.numRegs}; it may spill to meet it)`,
      kind: 'quickfix',
      edits: [edit],
    },
  ];
}

/** Replace a literal block size with the one that maximises occupancy (within the kernel's launch bounds). */
function blockSizeActions(report: DocumentReport, analysis: LaunchAnalysis): QuickFix[] {
  const p = first(analysis);
  const block = analysis.launch.block;
  if (!p || !/^\d+$/.test(block.text.trim())) return [];
  const best = p.nextStep!.blockSize.best;
  const bound = analysis.launchBounds?.maxThreadsPerBlock ?? null;
  if (!best || (bound !== null && best.blockSize > bound) || best.blockSize === analysis.threadsPerBlock) return [];
  const range = blockArgumentRange(report, analysis);
  if (!range) return [];
  return [
    {
      title: `Use ${best.blockSize} threads per block (the best occupancy for ${analysis.launch.kernelName} on ${p.arch}: ${percent(best.occupancy)}, now ${percent(p.result!.occupancy)})`,
      kind: 'refactor.rewrite',
      edits: [{ span: range, newText: String(best.blockSize) }],
    },
  ];
}

function maxrregcountActions(analysis: LaunchAnalysis): QuickFix[] {
  const p = first(analysis);
  const cap = p?.atRegisterCap;
  if (!p || !cap || p.figures.numRegs === null || cap.numRegs >= p.figures.numRegs || p.figures.source !== 'ptxas') return [];
  const arg = `-maxrregcount=${cap.numRegs}`;
  return [
    {
      title: `Limit registers with \`${arg}\` (all kernels compiled with these settings; ${cap.activeBlocks} blocks/SM for ${analysis.launch.kernelName} on ${p.arch})`,
      kind: 'quickfix',
      command: { title: `Add ${arg} to cudaOccupancy.nvcc.args`, command: ADD_NVCC_ARGUMENT_COMMAND, arguments: [arg] },
    },
  ];
}

function optInAction(report: DocumentReport, analysis: LaunchAnalysis, finding: { code: string; span: Span }): QuickFix | null {
  const bytesNeeded = analysis.dynamicSmemBytes;
  if (bytesNeeded === null || analysis.launch.inMacro) return null;
  const source = report.facts.source;
  const start = offsetAt(source, analysis.launch.span.start);
  const lineStart = source.text.lastIndexOf('\n', start - 1) + 1;
  const indent = /^[ \t]*/.exec(source.text.slice(lineStart))![0];
  const kernelExpr = analysis.launch.templateArgs ? `${analysis.launch.kernelName}<${analysis.launch.templateArgs.join(', ')}>` : analysis.launch.kernelName;
  const at = positionAt(source, lineStart);
  return {
    title: `Opt in to ${bytesNeeded} bytes of dynamic shared memory: insert \`cudaFuncSetAttribute(${kernelExpr}, cudaFuncAttributeMaxDynamicSharedMemorySize, ${bytesNeeded});\``,
    kind: 'quickfix',
    fixes: finding,
    isPreferred: true,
    edits: [{ span: { start: at, end: at }, newText: `${indent}cudaFuncSetAttribute(${kernelExpr}, cudaFuncAttributeMaxDynamicSharedMemorySize, ${bytesNeeded});\n` }],
  };
}

/** The range of the block argument inside `<<<grid, block, ...>>>` (or the API call's argument list). */
function blockArgumentRange(report: DocumentReport, analysis: LaunchAnalysis): Span | null {
  const source = report.facts.source;
  const from = offsetAt(source, analysis.launch.span.start);
  const to = offsetAt(source, analysis.launch.span.end);
  const masked = source.masked.slice(from, to);
  const chevrons = /<<<|<<\s+</.exec(masked);
  if (!chevrons) return null;
  let depth = 0;
  let argument = 0;
  for (let i = chevrons.index + chevrons[0].length; i < masked.length; i++) {
    const c = masked[i];
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0 && ++argument === 1) {
      const rest = masked.slice(i + 1);
      const m = /^\s*(\d+)\s*(?=[,>])/.exec(rest);
      if (!m) return null;
      const s = from + i + 1 + m[0].indexOf(m[1]);
      return { start: positionAt(source, s), end: positionAt(source, s + m[1].length) };
    }
  }
  return null;
}

function sameDocument(report: DocumentReport, kernel: { nameSpan: unknown }): boolean {
  return report.facts.kernels.some((k) => k.nameSpan === kernel.nameSpan);
}
