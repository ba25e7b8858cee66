/**
 * Quick fixes and refactors on a launch, each edit computed from the core's
 * numbers: a `__launch_bounds__` that reaches the next occupancy level, the
 * block size with the best occupancy, the dynamic shared memory opt-in, and a
 * `-maxrregcount` for the whole file. Plain data: lsp/code-actions.ts makes
 * LSP code actions of them, with edits in this document (and, for a kernel
 * written in a header, in that file).
 *
 * A fix is offered only where the compiler honours it: a register cap is the
 * kernel's `__launch_bounds__(threads, blocks)` (which takes precedence over
 * `-maxrregcount`), and `-maxrregcount` only for a kernel with neither bounds
 * nor `__maxnreg__`; a cap whose ptxas check shows no more blocks is withdrawn
 * (greyed out with why, where the editor shows such fixes). Titles fit a menu
 * (MAX_TITLE); the details are in the launch's hover.
 *
 * No fix changes what the program does beyond what its title says: the opt-in
 * goes where it runs exactly when the launch runs (insertion-point.ts), every
 * edit keeps the file's line endings, a bound goes before the declarator's
 * name (qualified names included) and keeps a cluster argument, no bound is
 * added beside a macro that may supply one (the fix says why instead), a bound
 * that another launch of the kernel would exceed says so in its title, and
 * launches of one thread or one warp keep their block size.
 */
import type { Kernel, Position, Span } from '../types';
import type { DocumentReport } from './document-report';
import type { LaunchAnalysis } from './launch-analysis';
import { contains, isIdentCharAt, makeSourceText, offsetAt, positionAt, type SourceText } from '../text/source-text';
import { findDirectiveRanges } from '../text/preprocessor-lines';
import { insertionPointFor } from './insertion-point';
import { bytes, percent } from './format';
import { launchBoundsFixText } from './launch-report';
import { checkedOccupancy, launchBoundsCapKey, maxrregcountCapKey, type RegisterCap } from './register-caps';

/** The client command that adds an argument to `cudaOccupancy.nvcc.args`. */
export const ADD_NVCC_ARGUMENT_COMMAND = 'cudaOccupancy.addNvccArgument';

export interface SourceEdit {
  span: Span;
  newText: string;
  /** The index path of the file the edit is in, when it is not the report's document (a kernel's header). */
  path?: string;
}

/**
 * The longest title a quick-fix menu shows whole (VS Code's cuts at about this many characters).
 * Plain text: a menu shows backticks as they are.
 */
export const MAX_TITLE = 60;

/**
 * A title that fits a menu: `core`, then each of `details` that fits (a list: the first of its
 * alternatives that fits), then `warning` (always kept: a fix that breaks another launch says so).
 */
function fitTitle(
  core: string,
  details: ReadonlyArray<string | readonly string[]>,
  warning: string | null = null,
  shorter: string | null = null,
): string {
  const tail = warning ? ` ${warning}` : '';
  // A long bound (`__launch_bounds__(THREADBLOCK_SIZE, 10)`) with a warning: the shorter words, the bound in the edit.
  if (shorter !== null && (core + tail).length > MAX_TITLE) return shorter + tail;
  let title = core;
  for (const d of details) {
    const fits = (typeof d === 'string' ? [d] : d).find((x) => (title + x + tail).length <= MAX_TITLE);
    if (fits !== undefined) title += fits;
  }
  return title + tail;
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
  /** Why the fix is not offered (no edits then): shown by editors that show such fixes greyed out. */
  disabled?: string;
}

/** What a fix needs to know beyond the document: the rest of the workspace. */
export interface QuickFixContext {
  /** Launches of `kernel` in the other files of the workspace index (the file's path, 0-based line, threads per block). */
  otherLaunches?: (kernel: Kernel) => ReadonlyArray<{ path: string; line: number; threads: number | null }>;
  /** The body of an object-like macro in view of the document (its own `#define`s and its includes'), or null. */
  macroBody?: (name: string) => string | null;
  /** The kernels of other files of the workspace index with this qualified name (overloads, declarations). */
  kernelsNamed?: (qualifiedName: string) => readonly Kernel[];
  /** The text of another file (an index path), as the editor has it open or as it is on disk, or null. */
  fileText?: (path: string) => string | null;
}

/** The findings in view of the request, as the editor sends them back. */
export interface FindingInView {
  code: string | number | undefined;
  span: Span;
}

/** The fixes for launches that `span` overlaps, and for the findings in view. */
export function quickFixes(
  report: DocumentReport,
  span: Span,
  findings: readonly FindingInView[],
  context: QuickFixContext = {},
): QuickFix[] {
  const fixes: QuickFix[] = [];
  for (const analysis of report.analyses) {
    if (!overlaps(analysis.launch.span, span)) continue;
    fixes.push(
      ...exceedsBoundsActions(report, analysis),
      ...launchBoundsActions(report, analysis, context),
      ...blockSizeActions(report, analysis),
      ...maxrregcountActions(report, analysis),
    );
  }
  for (const finding of findings) {
    if (finding.code !== 'dynamic-smem-needs-opt-in') continue;
    // The launch the finding is on: the one starting where it starts (launch spans of broken code can overlap).
    const at = (a: LaunchAnalysis) =>
      a.launch.span.start.line === finding.span.start.line &&
      a.launch.span.start.character === finding.span.start.character;
    const analysis =
      report.analyses.find(at) ?? report.analyses.find((a) => contains(a.launch.span, finding.span.start));
    const fix = analysis && optInAction(report, analysis, { code: finding.code, span: finding.span }, context);
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
  if (!bounds || bounds.maxThreadsPerBlock === null || threads === null || threads <= bounds.maxThreadsPerBlock)
    return [];
  const actions: QuickFix[] = [];
  const block = blockArgumentRange(report, analysis);
  if (block && /^\d+$/.test(analysis.launch.block.text.trim())) {
    actions.push({
      // The grid must then cover the work with smaller blocks: the error's message says why the launch fails.
      title: `Launch with ${bounds.maxThreadsPerBlock} threads per block, the bound's most`,
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
      title: fitTitle(`Raise the bound to __launch_bounds__(${threads}${bounds.args.length > 1 ? ', …' : ''})`, [
        ` (${threads}-thread blocks)`,
      ]),
      kind: 'quickfix',
      edits: [
        {
          span: { start: positionAt(source, start), end: positionAt(source, start + literal[2].length) },
          newText: String(threads),
        },
      ],
    });
  }
  return actions;
}

/**
 * `__launch_bounds__(threads, blocks + 1)`: asks ptxas for the register cap at which one more block fits. Placed
 * before the declarator's name (`ns::k` whole), keeping a third (cluster) argument, in the kernel's own file (a
 * header included here, too); not offered beside a macro that may supply bounds already; a warning in the title
 * when another launch of the kernel would exceed it; withdrawn when ptxas, asked, gives no more blocks.
 */
function launchBoundsActions(report: DocumentReport, analysis: LaunchAnalysis, context: QuickFixContext): QuickFix[] {
  const proposal = launchBoundsProposal(report, analysis, context);
  if (!proposal) return [];
  if (proposal.disabled) return [{ title: proposal.title, kind: 'quickfix', disabled: proposal.disabled }];
  const verdict = capVerdict(report, analysis, proposal);
  if (verdict.withdrawn) return [{ title: proposal.title, kind: 'quickfix', disabled: verdict.withdrawn }];
  const over = proposal.over ?? [];
  const breaks =
    over.length === 0
      ? null
      : over.length > 1
        ? `⚠ breaks ${over.length} launches`
        : (proposal.title + ` ⚠ breaks ${over[0]}`).length <= MAX_TITLE
          ? `⚠ breaks ${over[0]}`
          : '⚠ breaks a launch';
  // Both warnings where they fit; else the broken launches (the hover says what ptxas spilled).
  const both = [breaks, verdict.spills ? '⚠ spills' : null].filter(Boolean).join(' ');
  const warnings = [both.length + 36 <= MAX_TITLE || !breaks ? both : breaks];
  return [
    {
      title: fitTitle(
        proposal.title,
        verdict.details ?? proposal.details,
        warnings.join(' ') || null,
        proposal.shorter,
      ),
      kind: 'quickfix',
      edits: proposal.cap.edits.map((e) => ({ ...e, ...(proposal.path ? { path: proposal.path } : {}) })),
    },
  ];
}

/**
 * What ptxas's check of a cap says, for the title: still checking, what it allocated and the
 * occupancy that gives (and whether it spilled), or withdraw the fix (why: no more blocks fit).
 * Before any check (no nvcc), the proposal's own details stand.
 */
function capVerdict(
  report: DocumentReport,
  analysis: LaunchAnalysis,
  proposal: CapProposal,
): { withdrawn: string | null; spills: boolean; details: Array<string | string[]> | null } {
  const check = report.capChecks.get(proposal.cap.key);
  if (check?.state === 'checking')
    return { withdrawn: null, spills: false, details: [[`${proposal.details[0]} · checking…`, ' · checking…']] };
  const checked = checkedOccupancy(analysis, check)?.[proposal.arch];
  const current = analysis.perArch.find((p) => p.arch === proposal.arch)?.result?.occupancy;
  if (!checked || current === undefined) return { withdrawn: null, spills: false, details: null };
  if (checked.occupancy === null || checked.occupancy <= current)
    return {
      withdrawn: `ptxas, asked for \`${proposal.cap.fix}\`, allocated ${checked.numRegs} registers: no more blocks fit on ${proposal.arch}`,
      spills: false,
      details: null,
    };
  return {
    withdrawn: null,
    spills: checked.spillStoreBytes > 0 || checked.spillLoadBytes > 0,
    details: [`: ${checked.numRegs} regs → ${percent(checked.occupancy)}`],
  };
}

interface CapProposal {
  cap: RegisterCap;
  /** The fix in a few words, and details for the title as far as they fit (see fitTitle). */
  title: string;
  details: string[];
  /** The architecture the cap was computed for (the first with a result). */
  arch: string;
  /** Fewer words for the title, when a warning needs the room. */
  shorter?: string | null;
  disabled?: string;
  /** Where the other launches are that the bound would make fail (`line 5`, `other.cu:2`). */
  over?: string[];
  /** The index path of the kernel's file, when it is not the report's document. */
  path?: string | null;
}

/** The kernel's file: this document, or (a header, say) the one the index read it from, with its text as it is now. */
function kernelSource(
  report: DocumentReport,
  analysis: LaunchAnalysis,
  kernel: Kernel,
  context: QuickFixContext,
): { source: SourceText; path: string | null; macroBody: (name: string) => string | null } | null {
  if (sameDocument(report, kernel))
    return {
      source: report.facts.source,
      path: null,
      macroBody: (name) => context.macroBody?.(name) ?? null,
    };
  const path = analysis.site?.kernelPath;
  const text = path ? context.fileText?.(path) : null;
  if (!path || text === null || text === undefined) return null;
  const source = makeSourceText(text);
  // The spans are those of the text the index read: an edit in another version would land elsewhere.
  const name = kernel.nameSpan;
  if (name.start.line >= source.lineStarts.length) return null;
  if (source.text.slice(offsetAt(source, name.start), offsetAt(source, name.end)) !== kernel.name) return null;
  return { source, path, macroBody: (macro) => context.macroBody?.(macro) ?? null };
}

function launchBoundsProposal(
  report: DocumentReport,
  analysis: LaunchAnalysis,
  context: QuickFixContext,
): CapProposal | null {
  const kernel = analysis.kernel;
  const p = first(analysis);
  const threads = analysis.threadsPerBlock;
  if (!kernel || !p || threads === null || !kernel.isDefinition) return null;
  const cap = p.atRegisterCap;
  if (!cap || p.launchBoundsCapForNext === null || p.figures.numRegs === null || cap.numRegs >= p.figures.numRegs)
    return null;
  const file = kernelSource(report, analysis, kernel, context);
  if (!file) return null;
  const target = cap.activeBlocks;
  const text = launchBoundsFixText(analysis, target);
  const title = `${kernel.launchBounds ? 'Change to' : 'Add'} ${text}`;
  const details = [`: ${target} blocks/SM`, ` (${percent(cap.occupancy)})`];
  const base = { key: launchBoundsCapKey(kernel, text), kind: 'launch-bounds' as const, fix: text, kernel, flag: null };
  // Bounds a macro supplies (`__global__ void KERNEL_BOUNDS k(...)`) are changed in the macro, not here.
  const writtenHere =
    kernel.launchBounds !== null &&
    /^\s*__launch_bounds__\b/.test(
      file.source.text.slice(
        offsetAt(file.source, kernel.launchBounds.span.start),
        offsetAt(file.source, kernel.launchBounds.span.end),
      ),
    );
  if (!kernel.launchBounds || !writtenHere) {
    const macro =
      macroSupplyingBounds(file.source, kernel, file.macroBody) ??
      (kernel.launchBounds
        ? `the \`${kernel.launchBounds.text}\` of ${kernel.name} comes from a macro: change the bound in its definition`
        : null);
    if (macro) return { cap: { ...base, edits: [] }, title, details, arch: p.arch, disabled: macro };
  }
  const source = file.source;
  const at = positionAt(source, declaratorStart(source, offsetAt(source, kernel.nameSpan.start)));
  const edit: SourceEdit = kernel.launchBounds
    ? { span: kernel.launchBounds.span, newText: text }
    : { span: { start: at, end: at }, newText: `${text} ` };
  return {
    cap: { ...base, edits: [edit] },
    title,
    details,
    shorter: `__launch_bounds__ for ${target} blocks/SM`,
    arch: p.arch,
    over: launchesOver(report, analysis, kernel, threads, context),
    path: file.path,
  };
}

/**
 * `-maxrregcount=N` for the file's compile: only where it applies. A kernel's `__launch_bounds__` or
 * `__maxnreg__` takes precedence over it, so for such a kernel it would change nothing.
 */
function maxrregcountProposal(analysis: LaunchAnalysis): CapProposal | null {
  const p = first(analysis);
  const cap = p?.atRegisterCap;
  const kernel = analysis.kernel;
  if (
    !p ||
    !cap ||
    p.figures.numRegs === null ||
    cap.numRegs >= p.figures.numRegs ||
    p.figures.source !== 'ptxas' ||
    !kernel ||
    kernel.launchBounds ||
    kernel.maxnreg !== null
  )
    return null;
  const arg = `-maxrregcount=${cap.numRegs}`;
  return {
    cap: {
      key: maxrregcountCapKey(kernel, cap.numRegs),
      kind: 'maxrregcount',
      fix: arg,
      kernel,
      edits: [],
      flag: arg,
    },
    title: `Add ${arg} (all kernels)`,
    details: [`: ${cap.activeBlocks} blocks/SM`, ` (${percent(cap.occupancy)})`],
    arch: p.arch,
  };
}

/**
 * The register caps the document's fixes propose, per launch: what the adapters compile to check
 * them with ptxas (a cap offered greyed out, beside a macro, is not checked; nor is one in another
 * file, whose variant is not this document's text).
 */
export function registerCaps(
  report: DocumentReport,
  context: QuickFixContext = {},
): Array<{ analysis: LaunchAnalysis; cap: RegisterCap; arch: string }> {
  const found: Array<{ analysis: LaunchAnalysis; cap: RegisterCap; arch: string }> = [];
  for (const analysis of report.analyses) {
    for (const proposal of [launchBoundsProposal(report, analysis, context), maxrregcountProposal(analysis)]) {
      if (proposal && !proposal.disabled && !proposal.path)
        found.push({ analysis, cap: proposal.cap, arch: proposal.arch });
    }
  }
  return found;
}

/** Where a declarator starts: before the qualifiers of its name (`ns::`, `Outer<T>::`, a leading `::`). */
function declaratorStart(source: SourceText, nameStart: number): number {
  const masked = source.masked;
  let start = nameStart;
  for (;;) {
    let i = start;
    while (i > 0 && /\s/.test(masked[i - 1])) i--;
    if (masked[i - 1] !== ':' || masked[i - 2] !== ':') return start;
    i -= 2;
    start = i;
    while (i > 0 && /\s/.test(masked[i - 1])) i--;
    if (masked[i - 1] === '>') {
      // `Outer<T>::`: back over the template arguments.
      let depth = 0;
      let j = i - 1;
      for (; j >= 0; j--) {
        if (masked[j] === '>') depth++;
        else if (masked[j] === '<' && --depth === 0) break;
        else if (masked[j] === ';' || masked[j] === '{' || masked[j] === '}') return start;
      }
      i = j;
      while (i > 0 && /\s/.test(masked[i - 1])) i--;
    }
    let j = i;
    while (j > 0 && isIdentCharAt(masked, j - 1)) j--;
    if (j === i) return start; // `::k`: the global scope
    start = j;
  }
}

/** Words that may stand between a kernel's first specifier and its name without supplying bounds. */
const KNOWN_HEADER_WORDS: ReadonlySet<string> = new Set([
  '__global__',
  '__device__',
  '__host__',
  '__forceinline__',
  '__noinline__',
  '__inline__',
  'inline',
  'static',
  'extern',
  'void',
  'constexpr',
  'template',
  'typename',
  'class',
  'struct',
  'noexcept',
  '__launch_bounds__',
  '__cluster_dims__',
  '__maxnreg__',
  '__attribute__',
  '__declspec',
  '__restrict__',
  'alignas',
  'friend',
  'virtual',
  'explicit',
]);

/** Why no `__launch_bounds__` may be added to `kernel`: a word in its header that is (or may be) a macro supplying one. */
function macroSupplyingBounds(
  source: SourceText,
  kernel: Kernel,
  macroBody: (name: string) => string | null,
): string | null {
  const masked = source.masked;
  let i = offsetAt(source, kernel.headerSpan.start);
  const end = declaratorStart(source, offsetAt(source, kernel.nameSpan.start));
  const text = masked.slice(i, end);
  // `template <...>` before the specifiers names parameters, not macros.
  const template = /^\s*template\s*</.exec(text);
  if (template) {
    let depth = 0;
    for (let k = i + template[0].length - 1; k < end; k++) {
      if (masked[k] === '<') depth++;
      else if (masked[k] === '>' && --depth === 0) {
        i = k + 1;
        break;
      }
    }
  }
  for (; i < end; i++) {
    const c = masked[i];
    if (c === '(' || c === '[') {
      // The arguments of an attribute (`__launch_bounds__(...)`, `[[...]]`, `__attribute__((...))`).
      let depth = 0;
      for (; i < end; i++) {
        if (masked[i] === '(' || masked[i] === '[') depth++;
        else if ((masked[i] === ')' || masked[i] === ']') && --depth === 0) break;
      }
      continue;
    }
    if (!isIdentCharAt(masked, i) || isIdentCharAt(masked, i - 1) || /\d/.test(c)) continue;
    let j = i;
    while (j < end && isIdentCharAt(masked, j)) j++;
    const word = masked.slice(i, j);
    i = j - 1;
    if (KNOWN_HEADER_WORDS.has(word)) continue;
    // What the unit's preprocessor says the word is in the kernel's header; else what the caller knows.
    const known = kernel.headerMacros;
    if (known && !(word in known)) continue;
    const body = known ? known[word] : macroBody(word);
    if (body === null)
      return `\`${word}\` in the header of ${kernel.name} is a macro whose definition is not in view: it may supply \`__launch_bounds__\` already, and a second one would not compile`;
    if (/\b__launch_bounds__\b/.test(body))
      return `\`${word}\` already supplies \`${body.trim()}\` to ${kernel.name}: change the bound in its definition (a second one would not compile)`;
  }
  return null;
}

/** Where the other launches of `kernel` are that a bound of `threads` threads would make fail. */
function launchesOver(
  report: DocumentReport,
  analysis: LaunchAnalysis,
  kernel: Kernel,
  threads: number,
  context: QuickFixContext,
): string[] {
  const here = report.analyses
    .filter(
      (a) =>
        a !== analysis &&
        a.kernel &&
        a.kernel.nameSpan === kernel.nameSpan &&
        a.threadsPerBlock !== null &&
        a.threadsPerBlock > threads,
    )
    .map((a) => `line ${a.launch.span.start.line + 1}`);
  const elsewhere = (context.otherLaunches?.(kernel) ?? [])
    .filter((l) => l.threads !== null && l.threads > threads)
    .map((l) => `${baseName(l.path)}:${l.line + 1}`);
  return [...here, ...elsewhere];
}

function baseName(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/**
 * Replace a literal block size with the one that maximises occupancy (within the kernel's launch bounds). Not
 * for a block of one thread or one warp: such a launch is small by design (a setup kernel, a reduction's tail).
 */
function blockSizeActions(report: DocumentReport, analysis: LaunchAnalysis): QuickFix[] {
  const p = first(analysis);
  const block = analysis.launch.block;
  if (
    !p ||
    !/^\d+$/.test(block.text.trim()) ||
    (analysis.threadsPerBlock !== null && analysis.threadsPerBlock <= WARP_SIZE)
  )
    return [];
  const best = p.nextStep!.blockSize.best;
  const bound = analysis.launchBounds?.maxThreadsPerBlock ?? null;
  if (!best || (bound !== null && best.blockSize > bound) || best.blockSize === analysis.threadsPerBlock) return [];
  const range = blockArgumentRange(report, analysis);
  if (!range) return [];
  return [
    {
      // The best occupancy for this kernel within its bounds.
      title: fitTitle(`Use ${best.blockSize} threads per block`, [
        `: ${percent(best.occupancy)} on ${p.arch}`,
        ` (now ${percent(p.result!.occupancy)})`,
      ]),
      kind: 'refactor.rewrite',
      edits: [{ span: range, newText: String(best.blockSize) }],
    },
  ];
}

function maxrregcountActions(report: DocumentReport, analysis: LaunchAnalysis): QuickFix[] {
  const proposal = maxrregcountProposal(analysis);
  if (!proposal) return [];
  const arg = proposal.cap.flag!;
  const verdict = capVerdict(report, analysis, proposal);
  if (verdict.withdrawn) return [{ title: proposal.title, kind: 'quickfix', disabled: verdict.withdrawn }];
  return [
    {
      title: fitTitle(proposal.title, verdict.details ?? proposal.details, verdict.spills ? '⚠ spills' : null),
      kind: 'quickfix',
      command: { title: `Add ${arg} to cudaOccupancy.nvcc.args`, command: ADD_NVCC_ARGUMENT_COMMAND, arguments: [arg] },
    },
  ];
}

const WARP_SIZE = 32;

/**
 * `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)` where it runs exactly when the
 * launch runs (insertion-point.ts): before the launch's statement, in braces with it when that statement is a
 * brace-less body, else a comma expression around the launch. New lines end as the file's do.
 */
function optInAction(
  report: DocumentReport,
  analysis: LaunchAnalysis,
  finding: { code: string; span: Span },
  context: QuickFixContext,
): QuickFix | null {
  const bytesNeeded = analysis.dynamicSmemBytes;
  if (bytesNeeded === null || analysis.launch.inMacro) return null;
  // A launch whose kernel is not a name (`<<<120, BLOCK>>>(...)` while typing) has no function to opt in.
  if (!/^[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*$/.test(analysis.launch.kernelName)) return null;
  const source = report.facts.source;
  const start = offsetAt(source, analysis.launch.span.start);
  const end = offsetAt(source, analysis.launch.span.end);
  const kernelExpr = analysis.launch.templateArgs
    ? `${analysis.launch.kernelName}<${analysis.launch.templateArgs.join(', ')}>`
    : analysis.launch.kernelName;
  const call = `cudaFuncSetAttribute(${kernelExpr}, cudaFuncAttributeMaxDynamicSharedMemorySize, ${bytesNeeded})`;
  // Where the call goes (before the statement, in braces, around the launch) is in the edit, not the title.
  const title = fitTitle(`Opt in to ${bytes(bytesNeeded)} of dynamic shared memory`, [' (cudaFuncSetAttribute)']);
  // A template launched with deduced arguments names no one function: `cudaFuncSetAttribute(k, ...)` would not compile.
  if (analysis.kernel?.templateParams && !analysis.launch.templateArgs) {
    return {
      title,
      kind: 'quickfix',
      fixes: finding,
      disabled: `${analysis.launch.kernelName} is a template whose arguments this launch deduces: call cudaFuncSetAttribute on the instantiation it launches (\`${analysis.launch.kernelName}<...>\`)`,
    };
  }
  // An overloaded name does not say which function either.
  if (analysis.kernel && isOverloaded(report, analysis.kernel, context)) {
    return {
      title,
      kind: 'quickfix',
      fixes: finding,
      disabled: `${analysis.launch.kernelName} is overloaded: call cudaFuncSetAttribute on the overload this launch runs (cast the name to its function pointer type)`,
    };
  }
  const point = insertionPointFor(source, findDirectiveRanges(source), start, end);
  const insert = (offset: number, newText: string): SourceEdit => ({
    span: { start: positionAt(source, offset), end: positionAt(source, offset) },
    newText,
  });
  let edits: SourceEdit[];
  if (point.kind === 'comma') {
    edits = [insert(point.start, `(${call}, `), insert(point.end, ')')];
  } else {
    const eol = lineEndAt(source.text, point.statementStart);
    const indent = indentOf(source.text, point.statementStart);
    const before = point.ownLine ? `${call};${eol}${indent}` : `${call}; `;
    if (!point.braces) {
      edits = [insert(point.statementStart, before)];
    } else {
      const headerLine = indentOf(source.text, point.braces.afterHeader);
      const close = point.ownLine ? `${eol}${headerLine}}` : ' }';
      edits =
        point.braces.afterHeader === point.statementStart
          ? [insert(point.statementStart, `{ ${before}`), insert(point.braces.statementEnd, close)]
          : [
              insert(point.braces.afterHeader, ' {'),
              insert(point.statementStart, before),
              insert(point.braces.statementEnd, close),
            ];
    }
  }
  return {
    title,
    kind: 'quickfix',
    fixes: finding,
    isPreferred: true,
    edits,
  };
}

/** Whether kernels of `kernel`'s qualified name, here or elsewhere in the workspace, take different parameters. */
function isOverloaded(report: DocumentReport, kernel: Kernel, context: QuickFixContext): boolean {
  const same = [...report.facts.kernels, ...(context.kernelsNamed?.(kernel.qualifiedName) ?? [])].filter(
    (k) => k.qualifiedName === kernel.qualifiedName,
  );
  return new Set(same.map(parameterTypes)).size > 1;
}

/** A kernel's parameter list without parameter names and default arguments (a declaration and its definition agree). */
function parameterTypes(kernel: Kernel): string {
  return kernel.parameters
    .map((p) =>
      p
        .replace(/=[\s\S]*$/, '')
        .replace(/\s+/g, ' ')
        .trim()
        .replace(/(\S)\s*\b[A-Za-z_]\w*$/, (all, before: string) => (/[\w*&\]]/.test(before) ? before : all)),
    )
    .join(',');
}

/** The line end of the line holding `offset` (`\r\n`, `\r` or `\n`); the file's first one when that line has none. */
function lineEndAt(text: string, offset: number): string {
  const lf = text.indexOf('\n', offset);
  const cr = text.indexOf('\r', offset);
  if (cr >= 0 && (lf < 0 || cr < lf)) return text[cr + 1] === '\n' ? '\r\n' : '\r';
  if (lf >= 0) return '\n';
  const first = /\r\n|\r|\n/.exec(text);
  return first ? first[0] : '\n';
}

/** The blanks that start the line holding `offset`. */
function indentOf(text: string, offset: number): string {
  const lineStart = Math.max(text.lastIndexOf('\n', offset - 1), text.lastIndexOf('\r', offset - 1)) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
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
      // The number written there must be the block the launch was read with: where the text and the
      // parse disagree (a configuration that does not parse), no edit.
      const block = analysis.launch.block.value;
      if (!block || block.y !== 1 || block.z !== 1 || block.x !== Number(m[1])) return null;
      const s = from + i + 1 + m[0].indexOf(m[1]);
      return { start: positionAt(source, s), end: positionAt(source, s + m[1].length) };
    }
  }
  return null;
}

function sameDocument(report: DocumentReport, kernel: { nameSpan: unknown }): boolean {
  return report.facts.kernels.some((k) => k.nameSpan === kernel.nameSpan);
}
