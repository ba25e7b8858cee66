/**
 * `cuda-occupancy check --format text`: what a terminal and an editor's problem matcher read.
 *
 * First the findings, one per line as gcc and clang print theirs,
 *
 *     examples/reduce.cu:39:3: error: pair_mix is launched with 256 threads ... [launch-exceeds-bounds]
 *     examples/reduce.cu:25:17: note: the kernel's __launch_bounds__(128)
 *
 * (hints and related locations are `note:` lines, which `$gcc` leaves alone), then per file its
 * kernels with what ptxas said per architecture and its launches with their occupancy per
 * architecture, then one summary line. On a repository the output must fit a terminal: notes
 * that repeat (same rule, same message: one missing header behind every unit, one wrapper's
 * unresolved launches) are printed once with a count, nvcc's failure once per translation unit
 * and not again for each header it includes, and the per-file tables only for the files named
 * on the command line (not those found in a folder). `--quiet` keeps the findings and the
 * summary; `--verbose` folds nothing and adds every file's tables, the files with no kernels or
 * launches and the kernels' declarations. Plain text throughout: no markdown.
 */
import * as path from 'node:path';
import type { CheckFile, CheckInstance } from './check-json';
import type { Finding, Kernel, Severity } from '../core/types';
import type { KernelFigures, LaunchAnalysis } from '../core/analyzer';
import { LIMIT_NAMES, bytes, originText } from '../core/analyzer';
import { blocksPerSm, launchTitleText, noOccupancyText, occupancyPercent, registersShort } from '../core/analyzer';
import { clusterText, latencyRangeText, wavesText } from '../core/analyzer';
import type { LaunchOnGpu } from '../core/analyzer';
import { kernelPressureLines } from './check-pressure';
import { nextStepLines } from './check-fixes';

export interface CheckTextOptions {
  /** Findings and the summary only. */
  quiet?: boolean;
  /** Every finding unfolded, every file's tables, the files with no kernels or launches, and kernel declarations. */
  verbose?: boolean;
  /**
   * The files named on the command line (absolute paths): only their tables are printed, unless
   * `verbose`. Absent: every file's (a caller that chose the files itself).
   */
  named?: readonly string[];
}

/** A failed nvcc run: the file, what ran (`nvcc`, `nvcc -ptx`), how it ended and its first error. */
export interface CompileFailure {
  /** Absolute path. */
  file: string;
  what: string;
  status: string;
  firstError: string | null;
}

const SEVERITY_WORD: Record<Severity, string> = { error: 'error', warning: 'warning', info: 'note', hint: 'note' };

/**
 * A path as a terminal can open it: relative to the working directory when the file lies
 * under it, absolute when the relative path would have to climb out of it.
 */
export function displayPath(file: string, cwd: string): string {
  const absolute = path.resolve(cwd, file);
  const relative = path.relative(cwd, absolute);
  if (relative === '') return absolute;
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return absolute;
  return relative;
}

export function checkText(archs: string[], files: CheckFile[], cwd: string, options: CheckTextOptions = {}): string {
  return checkTextOf(
    files.map((file) => checkTextPieces(file, archs, cwd, options)),
    options,
  );
}

/** What the text says of one file, as plain data: its findings, its detail lines, and what the summary counts. */
export interface CheckTextPieces {
  /** Absolute path. */
  file: string;
  findings: FindingText[];
  /** Empty with `quiet`. */
  detail: string[];
  tally: FileTally;
}

/** What the summary line counts of one file. */
export interface FileTally {
  kernels: number;
  launches: number;
  /** Launches with an occupancy on some architecture. */
  withOccupancy: number;
  errors: number;
  warnings: number;
  notes: number;
}

/** A finding as printed: its line, the lines of its related places, and what folds repeats of it. */
export interface FindingText {
  /** `path:line:col: severity: message [code]`. */
  line: string;
  /** A `note:` line per related location. */
  related: string[];
  /** Notes with the same key are printed once, with a count (see foldKey); null for errors and warnings. */
  fold: string | null;
  /** Where it is, for the list of folded repeats: `path:line` (the path alone for a whole-file note). */
  where: string;
}

/** One file's pieces of the text, the same wherever it was analysed (a worker thread or the main one). */
export function checkTextPieces(
  file: CheckFile,
  archs: string[],
  cwd: string,
  options: CheckTextOptions = {},
): CheckTextPieces {
  return {
    file: path.resolve(cwd, file.path),
    findings: findingTexts(file, cwd),
    detail: options.quiet ? [] : fileDetail(file, archs, cwd, options),
    tally: fileTally(file),
  };
}

/** How many folded repeats a line names before "…". */
const PLACES_NAMED = 3;

/**
 * The text from each file's pieces: all findings first (repeated notes folded, unless verbose),
 * then the tables of the files named (every file's with verbose), then the summary.
 */
export function checkTextOf(pieces: readonly CheckTextPieces[], options: CheckTextOptions = {}): string {
  const out: string[] = [];
  const writer = textWriter((text) => out.push(text), options);
  for (const piece of pieces) writer.file(piece);
  writer.end();
  return out.join('');
}

/** Takes the files' pieces in order, writing what it can at once; `end` writes the rest. */
export interface CheckWriter<T> {
  file(piece: T): void;
  end(): void;
}

/** A note that later ones fold into: its count and its first distinct places (one more than are named). */
interface Fold {
  finding: FindingText;
  repeats: number;
  places: string[];
}

/**
 * checkTextOf written as the files come (check at repository scale: check-output.ts). The findings
 * are written at once until a note that a later file may fold into (its line ends with how many
 * repeats it has); the findings after it wait for the end. The tables wait for the end too (they
 * follow every finding): only the named files' are kept, unless verbose. A fold keeps its first
 * line, a count and its first places, not every repeat.
 */
export function textWriter(out: (text: string) => void, options: CheckTextOptions = {}): CheckWriter<CheckTextPieces> {
  const byKey = new Map<string, Fold>();
  const held: Array<Fold | string[]> = [];
  const named = options.named && !options.verbose ? new Set(options.named) : null;
  const tables: string[] = [];
  let untabled = false;
  const tally: FileTally = { kernels: 0, launches: 0, withOccupancy: 0, errors: 0, warnings: 0, notes: 0 };
  let files = 0;
  const write = (lines: readonly string[]) => {
    if (lines.length) out(`${lines.join('\n')}\n`);
  };
  return {
    file(piece) {
      for (const finding of piece.findings) {
        const key = finding.fold !== null && !options.verbose ? finding.fold : null;
        const first = key !== null ? byKey.get(key) : undefined;
        if (first) {
          first.repeats++;
          // A unit's own failure reads better than a header's "(compiling it)": it takes the header's place.
          if (
            / \(compiling [^)]*\), so register figures/.test(first.finding.line) &&
            !/ \(compiling /.test(finding.line)
          ) {
            first.places = [first.finding.where, ...first.places.filter((p) => p !== first.finding.where)];
            first.finding = finding;
          } else if (!first.places.includes(finding.where)) first.places.push(finding.where);
          // One place more than are named says whether there are more.
          first.places.length = Math.min(first.places.length, PLACES_NAMED + 1);
          continue;
        }
        if (key !== null) {
          const fold: Fold = { finding, repeats: 0, places: [] };
          byKey.set(key, fold);
          held.push(fold);
        } else if (held.length) held.push([finding.line, ...finding.related]);
        else write([finding.line, ...finding.related]);
      }
      if (!options.quiet) {
        if (!named || named.has(piece.file)) tables.push(...piece.detail);
        else if (piece.detail.length > 0) untabled = true;
      }
      for (const key of Object.keys(tally) as Array<keyof FileTally>) tally[key] += piece.tally[key];
      files++;
    },
    end() {
      for (const entry of held)
        if (Array.isArray(entry)) write(entry);
        else {
          const { finding, repeats, places } = entry;
          write([repeats ? `${finding.line} ${foldedText(repeats, places)}` : finding.line, ...finding.related]);
        }
      write(tables);
      if (untabled) write(['(kernel and launch tables: name the files, or add --verbose)']);
      write([summaryOf(tally, files)]);
    },
  };
}

/** "(and 41 more like it: a.cuh:12, b.cu:40, c.cu:7, …)": `places` the first distinct ones. */
function foldedText(repeats: number, places: readonly string[]): string {
  const list = places.slice(0, PLACES_NAMED).join(', ') + (places.length > PLACES_NAMED ? ', …' : '');
  return `(and ${repeats} more like it: ${list})`;
}

/**
 * What makes two notes the same for folding: their rule and message. nvcc's failure reads the
 * same for a unit and for each header it includes but for "(compiling x.cu)": one key, so a
 * unit's failure is printed once. Errors and warnings are never folded: each is to fix where it is.
 */
function foldKey(f: Finding): string | null {
  if (f.severity === 'error' || f.severity === 'warning') return null;
  const message =
    f.code === 'nvcc-failed' ? f.message.replace(/^nvcc failed \(compiling [^)]*\)/, 'nvcc failed') : f.message;
  return `${f.code}\u0000${message}`;
}

/** Each finding's line and its related `note:` lines; in source order. */
function findingTexts(file: CheckFile, cwd: string): FindingText[] {
  const shown = displayPath(file.path, cwd);
  return [...file.report.findings].sort(bySpan).map((f) => ({
    line: `${shown}:${f.span.start.line + 1}:${f.span.start.character + 1}: ${SEVERITY_WORD[f.severity]}: ${f.message} [${f.code}]`,
    related: f.related.map((r) => {
      const where = r.uri ? displayPath(fromUri(r.uri), cwd) : shown;
      return `${where}:${r.span.start.line + 1}:${r.span.start.character + 1}: note: ${r.message}`;
    }),
    fold: foldKey(f),
    where: f.code === 'nvcc-failed' ? shown : `${shown}:${f.span.start.line + 1}`,
  }));
}

function bySpan(a: Finding, b: Finding): number {
  return a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character;
}

function fromUri(uriOrPath: string): string {
  if (!uriOrPath.startsWith('file://')) return uriOrPath;
  return decodeURIComponent(new URL(uriOrPath).pathname);
}

/** A file's kernels (ptxas figures per arch) and launches (occupancy per arch). */
function fileDetail(file: CheckFile, archs: string[], cwd: string, options: CheckTextOptions): string[] {
  const { report } = file;
  const kernels = report.facts.kernels;
  const shown = displayPath(file.path, cwd);
  if (kernels.length === 0 && report.analyses.length === 0)
    return options.verbose ? [`${shown}: no kernels or launches`] : [];
  const lines = [
    `${shown}: ${count(kernels.filter((k) => k.isDefinition).length, 'kernel')}, ${count(report.analyses.length, 'launch')}${findingTally(report.findings, '; ')}`,
  ];
  for (const kernel of kernels)
    lines.push(
      ...kernelLines(kernel, kernel.isDefinition ? file.instances(kernel) : [], archs, options.verbose === true),
      ...kernelPressureLines(report, kernel),
    );
  report.analyses.forEach((analysis, k) =>
    lines.push(
      ...launchLines(analysis),
      ...nextStepLines(report, analysis),
      ...(report.gpus[k] ?? []).flatMap((g) => gpuTextLines(g, options.verbose === true)),
    ),
  );
  return lines;
}

function kernelLines(kernel: Kernel, instances: CheckInstance[], archs: string[], verbose: boolean): string[] {
  const bounds = kernel.launchBounds ? ` ${kernel.launchBounds.text}` : '';
  const dynamic = kernel.sharedDeclarations.some((d) => d.isExtern)
    ? ', extern __shared__ (dynamic shared memory set at launch)'
    : '';
  if (!kernel.isDefinition)
    return verbose
      ? [`  kernel ${kernel.qualifiedName} (line ${kernel.nameSpan.start.line + 1})${bounds} [declaration]`]
      : [];
  const lines = [`  kernel ${kernel.qualifiedName} (line ${kernel.nameSpan.start.line + 1})${bounds}${dynamic}`];
  const named = instances.length > 1 || instances.some((i) => i.signature !== null && kernel.templateParams !== null);
  for (const instance of instances) {
    const indent = named ? '      ' : '    ';
    if (named) lines.push(`    ${instanceName(instance, kernel)}`);
    for (const arch of archs) {
      const f = instance.resources[arch];
      if (f) lines.push(`${indent}${arch.padEnd(7)} ${figuresText(f, kernel)}`);
    }
  }
  return lines;
}

/** `block_sum<256>` from `void block_sum<256>(float const*, float*, int)`. */
function instanceName(instance: CheckInstance, kernel: Kernel): string {
  const signature = instance.signature;
  if (!signature) return instance.mangledName ?? kernel.qualifiedName;
  let depth = 0;
  for (let i = signature.length - 1; i >= 0; i--) {
    const c = signature[i];
    if (c === ')') depth++;
    else if (c === '(' && --depth === 0) return signature.slice(0, i).replace(/^void\s+/, '');
  }
  return signature;
}

/** "56 registers, 0 B static smem, 0 B stack, no spills [ptxas]": what the compiler (or a log, or an annotation) said. */
function figuresText(f: KernelFigures, kernel: Kernel): string {
  const source = `[${f.source}${f.origin ? `: ${originText(f.origin)}` : ''}${f.stale ? ', stale' : ''}]`;
  if (f.numRegs === null) {
    const smem =
      kernel.staticSharedBytes !== null ? `, ${bytes(kernel.staticSharedBytes)} static smem (from the source)` : '';
    return `registers unknown${smem}${f.note ? `: ${f.note}` : ''} ${source}`;
  }
  const parts = [`${f.numRegs} registers`, `${bytes(f.sharedSizeBytes ?? kernel.staticSharedBytes ?? 0)} static smem`];
  if (f.stackFrameBytes !== null) parts.push(`${bytes(f.stackFrameBytes)} stack`);
  if (f.spillStoreBytes !== null || f.spillLoadBytes !== null) {
    const stores = f.spillStoreBytes ?? 0;
    const loads = f.spillLoadBytes ?? 0;
    parts.push(
      stores === 0 && loads === 0 ? 'no spills' : `${bytes(stores)} spill stores, ${bytes(loads)} spill loads`,
    );
  }
  return `${parts.join(', ')} ${source}`;
}

function launchLines(analysis: LaunchAnalysis): string[] {
  const lines = [`  launch line ${analysis.launch.span.start.line + 1}: ${launchTitleText(analysis)}`];
  // A block that is one of a few values the source fixes: a row per candidate and architecture.
  if (analysis.candidates) {
    for (const c of analysis.candidates) {
      for (const p of c.perArch) {
        const cell =
          p.result && !p.fails
            ? `${occupancyPercent(p).padStart(6)}  ${blocksPerSm(p).padStart(2)} blocks/SM  limited by ${p.result.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ')}`
            : `     -  ${p.fails ?? noOccupancyText(p)}`;
        lines.push(`    ${String(c.threadsPerBlock).padStart(5)} threads  ${p.arch.padEnd(7)} ${cell}`);
      }
    }
    return lines;
  }
  for (const p of analysis.perArch) {
    if (p.result && !p.fails) {
      const limiter = p.result.limitingFactors.map((f) => LIMIT_NAMES[f]).join(' and ');
      const blocks = p.result.activeBlocksPerMultiprocessor;
      const perSm = `${blocksPerSm(p).padStart(2)} ${blocks === 1 ? 'block/SM ' : 'blocks/SM'}`;
      const bound = p.upperBound ? `  (upper bound: ${p.upperBound})` : '';
      lines.push(
        `    ${p.arch.padEnd(7)} ${occupancyPercent(p).padStart(6)}  ${perSm}  ${(p.upperBound ? '≤ ' : '') + String(p.result.activeWarps).padStart(2)}/${p.result.maxWarpsPerMultiprocessor} warps  limited by ${limiter}  [${registersShort(p)}, ${p.figures.source}]${bound}`,
      );
    } else {
      lines.push(`    ${p.arch.padEnd(7)}      -  ${p.fails ?? noOccupancyText(p)}`);
    }
  }
  return lines;
}

/** Waves and tail and the cluster limit of a launch on one named GPU, as plain text; with `verbose`, the latency range too. */
function gpuTextLines(g: LaunchOnGpu, verbose: boolean): string[] {
  const plain = (text: string | null) => (text ? [`    ${text.replace(/`/g, '')}`] : []);
  const latency = latencyRangeText(g, null);
  return [
    ...plain(wavesText(g)),
    ...plain(clusterText(g)),
    ...(verbose && latency ? plain(`Latency on the ${g.part.name}: ${latency}`) : []),
  ];
}

/** "12 files, 40 kernels, 61 launches: 2 errors, 5 warnings; occupancy on 48 of 61 launches" */
export function summaryLine(files: readonly CheckFile[]): string {
  const tally: FileTally = { kernels: 0, launches: 0, withOccupancy: 0, errors: 0, warnings: 0, notes: 0 };
  for (const file of files.map(fileTally))
    for (const key of Object.keys(tally) as Array<keyof FileTally>) tally[key] += file[key];
  return summaryOf(tally, files.length);
}

function fileTally(file: CheckFile): FileTally {
  const { findings, analyses } = file.report;
  const of = (severities: Severity[]) => findings.filter((f) => severities.includes(f.severity)).length;
  return {
    kernels: file.report.facts.kernels.filter((k) => k.isDefinition).length,
    launches: analyses.length,
    withOccupancy: analyses.filter((a) => a.perArch.some((p) => p.result && !p.fails)).length,
    errors: of(['error']),
    warnings: of(['warning']),
    notes: of(['info', 'hint']),
  };
}

function summaryOf(tally: FileTally, files: number): string {
  const notes = tally.notes;
  const counts = [
    count(tally.errors, 'error'),
    count(tally.warnings, 'warning'),
    ...(notes ? [count(notes, 'note')] : []),
  ].join(', ');
  const launches = tally.launches;
  const occupancy = launches ? `; occupancy on ${tally.withOccupancy} of ${count(launches, 'launch')}` : '';
  return `${count(files, 'file')}, ${count(tally.kernels, 'kernel')}, ${count(launches, 'launch')}: ${counts}${occupancy}`;
}

/** A file's findings by severity after `separator` (`; 1 error, 2 warnings`), or '' when it has none. */
function findingTally(findings: readonly Finding[], separator: string): string {
  const of = (severities: Severity[]) => findings.filter((f) => severities.includes(f.severity)).length;
  const parts = [
    [of(['error']), 'error'],
    [of(['warning']), 'warning'],
    [of(['info', 'hint']), 'note'],
  ] as const;
  const said = parts.filter(([n]) => n > 0).map(([n, noun]) => count(n, noun));
  return said.length ? `${separator}${said.join(', ')}` : '';
}

function count(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : noun.endsWith('ch') ? `${noun}es` : `${noun}s`}`;
}

/**
 * nvcc's failures for stderr, once per run and not once per attempt: one line saying how many
 * files failed, and with `verbose` a line per file with its first error (`path: nvcc failed: ...`).
 */
export function compileFailureLines(failures: readonly CompileFailure[], cwd: string, verbose: boolean): string[] {
  const files = [...new Set(failures.map((f) => f.file))];
  if (files.length === 0) return [];
  if (!verbose) return [`nvcc failed for ${count(files.length, 'file')}: first error in each with --verbose`];
  const lines = [`nvcc failed for ${count(files.length, 'file')}; the first error in each:`];
  for (const file of files) {
    const first = failures.find((f) => f.file === file && f.firstError) ?? failures.find((f) => f.file === file)!;
    lines.push(
      `${displayPath(file, cwd)}: ${first.what} ${first.status}${first.firstError ? `: ${first.firstError}` : ''}`,
    );
  }
  return lines;
}
