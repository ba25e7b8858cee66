/**
 * Quick fixes and refactors on a launch, each edit computed from the core's
 * numbers: a `__launch_bounds__` that reaches the next occupancy level, the
 * block size with the best occupancy, the dynamic shared memory opt-in, and a
 * `-maxrregcount` for the whole file.
 */
import { CodeActionKind, type CodeAction, type Diagnostic, type Position, type Range, type TextEdit } from 'vscode-languageserver/node';
import type { DocumentReport } from '../core/report/document-report';
import type { LaunchAnalysis } from '../core/report/launch-analysis';
import { offsetAt, positionAt } from '../core/text/source-text';
import { contains, toRange } from './lsp-convert';
import { percent } from '../core/report/format';

export const ADD_NVCC_ARGUMENT_COMMAND = 'cudaOccupancy.addNvccArgument';

export function codeActions(report: DocumentReport, range: Range, diagnostics: readonly Diagnostic[]): CodeAction[] {
  const uri = report.facts.uri;
  const actions: CodeAction[] = [];
  for (const analysis of report.analyses) {
    if (!overlaps(analysis.launch.span, range)) continue;
    actions.push(...exceedsBoundsActions(report, analysis), ...launchBoundsActions(report, analysis), ...blockSizeActions(report, analysis), ...maxrregcountActions(analysis));
  }
  for (const diagnostic of diagnostics) {
    if (diagnostic.code !== 'dynamic-smem-needs-opt-in') continue;
    const analysis = report.analyses.find((a) => contains(a.launch.span, diagnostic.range.start));
    const fix = analysis && optInAction(report, analysis, diagnostic);
    if (fix) actions.push(fix);
  }
  return actions.map((a) => (a.edit ? { ...a, edit: { changes: { [uri]: a.edit.changes![uri] } } } : a));
}

/**
 * Whether the requested range and the launch share a position, ends included: a cursor inside
 * or at either end of the launch, a selection inside it, and a range around it (a whole line,
 * as Neovim sends for `vim.lsp.buf.code_action()`) all count.
 */
function overlaps(span: { start: Position; end: Position }, range: Range): boolean {
  return !before(range.end, span.start) && !before(span.end, range.start);
}

const before = (a: Position, b: Position) => a.line < b.line || (a.line === b.line && a.character < b.character);

function first(analysis: LaunchAnalysis) {
  return analysis.perArch.find((p) => p.result && p.nextStep);
}

/** A launch above its kernel's `__launch_bounds__` fails: launch with the bound, or raise the bound to the launch. */
function exceedsBoundsActions(report: DocumentReport, analysis: LaunchAnalysis): CodeAction[] {
  const bounds = analysis.launchBounds;
  const threads = analysis.threadsPerBlock;
  if (!bounds || bounds.maxThreadsPerBlock === null || threads === null || threads <= bounds.maxThreadsPerBlock) return [];
  const uri = report.facts.uri;
  const actions: CodeAction[] = [];
  const block = blockArgumentRange(report, analysis);
  if (block && /^\d+$/.test(analysis.launch.block.text.trim())) {
    actions.push({
      title: `Launch with ${bounds.maxThreadsPerBlock} threads per block, the most \`${bounds.text}\` allows (the grid must cover the work with smaller blocks)`,
      kind: CodeActionKind.QuickFix,
      isPreferred: true,
      edit: { changes: { [uri]: [{ range: block, newText: String(bounds.maxThreadsPerBlock) }] } },
    });
  }
  const kernel = analysis.kernel;
  const literal = /^(__launch_bounds__\s*\(\s*)(\d+)/.exec(bounds.text);
  if (kernel && literal && sameDocument(report, kernel) && threads <= 1024) {
    const start = offsetAt(report.facts.source, bounds.span.start) + literal[1].length;
    const source = report.facts.source;
    actions.push({
      title: `Raise the bound to \`__launch_bounds__(${threads}${bounds.args.length > 1 ? ', …' : ''})\` (ptxas then compiles ${kernel.name} for ${threads}-thread blocks, with fewer registers per thread if it must)`,
      kind: CodeActionKind.QuickFix,
      edit: { changes: { [uri]: [{ range: toRange({ start: positionAt(source, start), end: positionAt(source, start + literal[2].length) }), newText: String(threads) }] } },
    });
  }
  return actions;
}

/** `__launch_bounds__(threads, blocks + 1)`: asks ptxas for the register cap at which one more block fits. */
function launchBoundsActions(report: DocumentReport, analysis: LaunchAnalysis): CodeAction[] {
  const kernel = analysis.kernel;
  const p = first(analysis);
  const threads = analysis.threadsPerBlock;
  if (!kernel || !p || threads === null || !kernel.isDefinition || !sameDocument(report, kernel)) return [];
  const cap = p.atRegisterCap;
  if (!cap || p.launchBoundsCapForNext === null || p.figures.numRegs === null || cap.numRegs >= p.figures.numRegs) return [];
  const target = cap.activeBlocks;
  const text = `__launch_bounds__(${threads}, ${target})`;
  const edit: TextEdit = kernel.launchBounds
    ? { range: toRange(kernel.launchBounds.span), newText: text }
    : { range: toRange({ start: kernel.nameSpan.start, end: kernel.nameSpan.start }), newText: `${text} ` };
  return [
    {
      title: `Cap registers for ${target} blocks/SM at ${threads} threads (${percent(cap.occupancy)} on ${p.arch}): ${kernel.launchBounds ? 'change to' : 'add'} \`${text}\` (ptxas targets ≤ ${p.launchBoundsCapForNext} registers, now ${p.figures.numRegs}; it may spill to meet it)`,
      kind: CodeActionKind.QuickFix,
      edit: { changes: { [report.facts.uri]: [edit] } },
    },
  ];
}

/** Replace a literal block size with the one that maximises occupancy (within the kernel's launch bounds). */
function blockSizeActions(report: DocumentReport, analysis: LaunchAnalysis): CodeAction[] {
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
      kind: CodeActionKind.RefactorRewrite,
      edit: { changes: { [report.facts.uri]: [{ range, newText: String(best.blockSize) }] } },
    },
  ];
}

function maxrregcountActions(analysis: LaunchAnalysis): CodeAction[] {
  const p = first(analysis);
  const cap = p?.atRegisterCap;
  if (!p || !cap || p.figures.numRegs === null || cap.numRegs >= p.figures.numRegs || p.figures.source !== 'ptxas') return [];
  const arg = `-maxrregcount=${cap.numRegs}`;
  return [
    {
      title: `Limit registers with \`${arg}\` (all kernels compiled with these settings; ${cap.activeBlocks} blocks/SM for ${analysis.launch.kernelName} on ${p.arch})`,
      kind: CodeActionKind.QuickFix,
      command: { title: `Add ${arg} to cudaOccupancy.nvcc.args`, command: ADD_NVCC_ARGUMENT_COMMAND, arguments: [arg] },
    },
  ];
}

function optInAction(report: DocumentReport, analysis: LaunchAnalysis, diagnostic: Diagnostic): CodeAction | null {
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
    kind: CodeActionKind.QuickFix,
    diagnostics: [diagnostic],
    isPreferred: true,
    edit: { changes: { [report.facts.uri]: [{ range: { start: at, end: at }, newText: `${indent}cudaFuncSetAttribute(${kernelExpr}, cudaFuncAttributeMaxDynamicSharedMemorySize, ${bytesNeeded});\n` }] } },
  };
}

/** The range of the block argument inside `<<<grid, block, ...>>>` (or the API call's argument list). */
function blockArgumentRange(report: DocumentReport, analysis: LaunchAnalysis): Range | null {
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
      return toRange({ start: positionAt(source, s), end: positionAt(source, s + m[1].length) });
    }
  }
  return null;
}

function sameDocument(report: DocumentReport, kernel: { nameSpan: unknown }): boolean {
  return report.facts.kernels.some((k) => k.nameSpan === kernel.nameSpan);
}
