/** `cuda-occupancy check FILE_OR_DIR...`: the editor's analysis for terminals and CI. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError, type CliIO } from './cli-io';
import { parseArgs } from './args';
import { collectSourceFiles } from './source-files';
import { branchesForCli, checkJson, type CheckFile } from './check-json';
import { checkText } from './check-text';
import { readGrammarBytes } from '../files/grammar-files';
import { createAnalyzer, DEFAULT_REPORT_SETTINGS, resolveArchs, type DocumentFacts } from '../core/analyzer';
import { includeDirsOfFlags, indexIncludedFiles, indexWorkspace, toIndexPath } from '../files/workspace-files';
import { readPtxasLog } from '../files/ptxas-log';
import { compileResources } from '../nvcc/compile-resources';
import { compilePtx, contentHash } from '../nvcc/compile-ptx';
import { findCompileCommandsFile, loadCompileCommands, resolveCompileFlags, type CompileCommand } from '../nvcc/compile-commands';
import { locateNvcc } from '../nvcc/locate-nvcc';
import type { Finding, Severity } from '../core/types';
import type { CheckJson } from './check-json-types';
import { toSarif } from './sarif';
import { compareToBaseline, regressionsFail, withRegressions } from './baseline';
import { loadBaseline } from './baseline-file';
import { VERSION } from '../version';

const FLAGS = {
  '--arch': 'string',
  '--format': 'string',
  '--nvcc': 'string',
  '--no-nvcc': 'boolean',
  '-p': 'string',
  '--ptxas-log': 'string',
  '--fail-on': 'string',
  '--timeout': 'string',
  '--baseline': 'string',
  '--help': 'boolean',
} as const;

export const CHECK_USAGE = `usage: cuda-occupancy check [--arch sm_80,sm_90] [--format text|json|sarif] [--baseline FILE] [--nvcc PATH | --no-nvcc] [-p DIR] [--ptxas-log FILE] [--fail-on error|warning|never] [--timeout SECONDS] FILE_OR_DIR...`;

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1, hint: 0 };
const DEFAULT_ARCH = 'sm_80';

export interface CheckRun {
  archs: string[];
  files: CheckFile[];
  /** Lines for stderr: nvcc missing, compile failures (the analysis still ran). */
  notes: string[];
}

/** Analyse the files named in `args` (check's flags and paths), as `check` does, without printing. */
export async function runCheck(args: string[], io: CliIO): Promise<CheckRun & { failOn: string }> {
  const { flags, positional } = parseArgs(args, { ...FLAGS }, { '-h': '--help' });
  const failOn = (flags['--fail-on'] as string | undefined) ?? 'error';
  if (!['error', 'warning', 'never'].includes(failOn)) throw new UsageError(`--fail-on must be error, warning or never, got ${failOn}`);
  if (positional.length === 0) throw new UsageError(`no files given\n${CHECK_USAGE}`);
  if (flags['--nvcc'] !== undefined && flags['--no-nvcc']) throw new UsageError('--nvcc and --no-nvcc exclude each other');
  const timeoutSeconds = flags['--timeout'] === undefined ? 120 : Number(flags['--timeout']);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) throw new UsageError(`--timeout needs a positive number of seconds, got ${flags['--timeout']}`);

  const files = collectSourceFiles(positional, io.cwd);
  const roots = [...new Set(positional.map((p) => path.resolve(io.cwd, p)).map((p) => (files.includes(p) ? path.dirname(p) : p)))];
  const database = await loadDatabase(flags['-p'] as string | undefined, roots, io.cwd);
  const archs = chooseArchs(flags['--arch'] as string | undefined, database);

  const analyzer = await createAnalyzer({ grammar: readGrammarBytes(), indexKey: toIndexPath, contentHash });
  indexWorkspace(roots, { index: analyzer.index });
  // Headers outside the checked folders: included beside a file (`"../x.h"`) or from its compile command's -I folders.
  analyzer.index.setIncludeDirs(includeDirsFromDatabase(database));
  indexIncludedFiles(analyzer.index);
  analyzer.configure({ archs, divergence: true, report: DEFAULT_REPORT_SETTINGS });
  const analysed: Array<{ file: string; facts: DocumentFacts }> = [];
  try {
    for (const file of files) {
      const text = readSource(file, io.cwd);
      analyzer.index.update(toIndexPath(file), text);
      analysed.push({ file, facts: analyzer.analyzeFile({ uri: file, text }) });
    }
  } finally {
    analyzer.parser.dispose();
  }

  const notes: string[] = [];
  if (typeof flags['--ptxas-log'] === 'string') {
    try {
      const log = readPtxasLog(path.resolve(io.cwd, flags['--ptxas-log'] as string));
      analyzer.setLog(path.resolve(io.cwd, flags['--ptxas-log'] as string), log.text, log.producedAt);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  if (!flags['--no-nvcc']) {
    const nvccPath = locateNvcc(flags['--nvcc'] as string | undefined);
    for (const { file, facts } of analysed) {
      if (!file.endsWith('.cu') || !facts.kernels.some((k) => k.isDefinition)) continue;
      const compileFlags = resolveCompileFlags({ database, filePath: file, settings: {} });
      const result = await compileResources({ nvccPath, filePath: file, archs, flags: compileFlags.flags, cwd: compileFlags.cwd ?? path.dirname(file), timeoutMs: timeoutSeconds * 1000 });
      if (result.status === 'missing') {
        notes.push(`nvcc not found (${nvccPath}): register figures come only from logs and annotations; pass --nvcc PATH or --no-nvcc`);
        break;
      }
      if (result.status !== 'ok') {
        const first = result.firstError;
        notes.push(`${path.relative(io.cwd, file) || file}: nvcc ${result.status}${first ? `: ${first.text}` : ''}`);
      }
      if (result.entries.length === 0) continue;
      analyzer.setCompiled(file, { perArch: result.perArch, producedAt: Date.now() }, facts.kernels);
      // Divergent branches are priced from the PTX of the first arch (`nvcc -ptx -lineinfo`) when nvcc ran OK.
      if (result.status !== 'ok' || !facts.branches.some((b) => b.kind === 'divergent')) continue;
      const ptx = await compilePtx({ nvccPath, filePath: file, arch: archs[0], flags: compileFlags.flags, cwd: compileFlags.cwd ?? path.dirname(file), timeoutMs: timeoutSeconds * 1000 });
      if (ptx.status !== 'ok') notes.push(`${path.relative(io.cwd, file) || file}: nvcc -ptx ${ptx.status}: ${ptx.error.text} (branch costs stay estimates)`);
      else if (ptx.sourceHash) analyzer.setPtx(file, { text: ptx.ptx.text, filePath: file, sourceHash: ptx.sourceHash });
    }
  }

  const checked: CheckFile[] = analysed.map(({ file, facts }) => {
    const report = analyzer.reportOf(facts);
    return {
      path: path.relative(io.cwd, file) || file,
      report,
      instances: (kernel) => analyzer.instancesOf(file, kernel),
      branches: branchesForCli(report.branches),
      latency: report.analyses.map((a) => {
        const entries = a.perArch.filter((p) => p.latency).map((p) => [p.arch, p.latency] as const);
        return entries.length ? Object.fromEntries(entries) : null;
      }),
    };
  });
  return { archs, files: checked, notes, failOn };
}

export async function checkCommand(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(CHECK_USAGE + '\n');
    return 0;
  }
  const { flags } = parseArgs(args, { ...FLAGS }, { '-h': '--help' });
  const format = (flags['--format'] as string | undefined) ?? 'text';
  if (!['text', 'json', 'sarif'].includes(format)) throw new UsageError(`--format must be text, json or sarif, got ${format}`);
  const baseline = typeof flags['--baseline'] === 'string' ? loadBaseline(flags['--baseline'] as string, io.cwd) : null;
  const run = await runCheck(args, io);
  for (const note of run.notes) io.err(`cuda-occupancy: ${note}\n`);
  let json = checkJson(run.archs, run.files) as CheckJson;
  const regressions = baseline ? compareToBaseline(json, baseline) : [];
  if (baseline) json = withRegressions(json, regressions);
  if (format === 'json') io.out(JSON.stringify(json, null, 2) + '\n');
  else if (format === 'sarif') io.out(JSON.stringify(toSarif(json, { toolVersion: VERSION, baseDir: io.cwd }), null, 2) + '\n');
  else {
    io.out(checkText(run.archs, run.files, io.cwd));
    if (baseline) io.out(regressions.length ? `against the baseline:\n${regressions.map((r) => `  ${r.severity} ${r.code} ${r.file}:${r.line}: ${r.message}`).join('\n')}\n` : 'against the baseline: nothing got worse\n');
  }
  const failing = exitCodeFor(run.files.flatMap((f) => f.report.findings), run.failOn) === 1 || regressionsFail(regressions, run.failOn);
  return failing ? 1 : 0;
}

export function exitCodeFor(findings: readonly Finding[], failOn: string): number {
  if (failOn === 'never') return 0;
  const worst = Math.max(-1, ...findings.map((x) => RANK[x.severity]));
  return worst >= RANK[failOn as Severity] ? 1 : 0;
}

async function loadDatabase(dir: string | undefined, roots: string[], cwd: string): Promise<CompileCommand[] | null> {
  const file = dir !== undefined ? path.resolve(cwd, dir, 'compile_commands.json') : await findCompileCommandsFile({ workspaceRoots: roots });
  if (!file) return null;
  try {
    return await loadCompileCommands(file);
  } catch (error) {
    if (dir !== undefined) throw new UsageError(`cannot read ${path.relative(cwd, file) || file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    return null;
  }
}

function chooseArchs(flag: string | undefined, database: CompileCommand[] | null): string[] {
  let requested: string[];
  if (flag !== undefined) requested = flag.split(',').map((s) => s.trim()).filter(Boolean);
  else {
    const fromDatabase = database ? [...new Set(database.flatMap((entry) => resolveCompileFlags({ database: [entry], filePath: entry.file, settings: {} }).archs))] : [];
    requested = fromDatabase.length ? fromDatabase : [DEFAULT_ARCH];
  }
  const { archs, unknown } = resolveArchs(requested);
  if (unknown.length) throw new UsageError(`unknown architecture ${unknown.join(', ')} (use e.g. sm_80, sm_90a, 9.0)`);
  if (archs.length === 0) throw new UsageError('--arch names no architecture');
  return archs;
}

/** Each file's include folders, from its compile_commands.json entry (none without one). */
function includeDirsFromDatabase(database: CompileCommand[] | null): (file: string) => readonly string[] {
  if (!database) return () => [];
  const known = new Map<string, readonly string[]>();
  return (file) => {
    let dirs = known.get(file);
    if (!dirs) {
      const flags = resolveCompileFlags({ database, filePath: file, settings: {} });
      dirs = flags.origin === 'compile_commands' ? includeDirsOfFlags(flags.flags, flags.cwd) : [];
      known.set(file, dirs);
    }
    return dirs;
  };
}

function readSource(file: string, cwd: string): string {
  let buffer: Buffer;
  try {
    buffer = readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read ${path.relative(cwd, file) || file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (buffer.subarray(0, 8000).includes(0)) throw new UsageError(`${path.relative(cwd, file) || file} is not a text file`);
  return buffer.toString('utf8');
}
