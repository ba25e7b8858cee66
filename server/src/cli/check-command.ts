/** `cuda-occupancy check FILE_OR_DIR...`: the editor's analysis for terminals and CI. */
import { statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError, type CliIO } from './cli-io';
import { parseArgs } from './args';
import { callersNaming, collectCppSources, collectSourceFiles } from './source-files';
import { checkJsonOf } from './check-json';
import { compileFailureLines, displayPath, textWriter, type CheckWriter, type CompileFailure } from './check-text';
import {
  analyseSource,
  configureUnits,
  checkedFile,
  checkFileOf,
  failedFile,
  indexPlan,
  indexSources,
  ownFailure,
  unitCompileFlags,
  type CheckedFile,
  type CheckOutputs,
  type Source,
} from './check-analysis';
import { canUseWorkers, checkInWorkers, workersPay, WorkerUsageError } from './check-workers';
import { readGrammarBytes } from '../files/grammar-files';
import {
  createAnalyzer,
  DEFAULT_REPORT_SETTINGS,
  findGpuPart,
  GPU_PARTS,
  looksCompiledAtRunTime,
  resolveArchs,
  type Analyzer,
  type DocumentFacts,
} from '../core/analyzer';
import { toIndexPath } from '../files/workspace-files';
import { readPtxasLog } from '../files/ptxas-log';
import { applyFromBuild } from './from-build';
import { compileFindingIncludes } from '../nvcc/found-includes';
import { compilePtx, contentHash } from '../nvcc/compile-ptx';
import { compileCaches } from '../nvcc/compile-service';
import { defaultCacheDir } from '../nvcc/resource-cache';
import { keptLifeRanges, locateNvdisasm, noNvdisasmNote } from '../nvcc/nvdisasm';
import {
  findCompileCommandsFile,
  flagsFromSettings,
  loadCompileCommands,
  resolveCompileFlags,
  type CompileCommand,
} from '../nvcc/compile-commands';
import { expandHome, findOnPath, locateNvcc } from '../nvcc/locate-nvcc';
import { toolchainOf } from '../nvcc/toolchain';
import { droppedLine, type ArgumentPolicy } from '../nvcc/argument-policy';
import { FileReadError, readBoundedFileSync } from '../files/bounded-read';
import { DEFAULT_DOCUMENT_LIMITS, tooLargeToAnalyse, tooManyBytes } from '../document-limits';
import { DEFAULT_SETTINGS } from '../settings';
import type { Severity } from '../core/types';
import type { CheckJson, CheckJsonFile } from './check-json-types';
import { jsonWriter, sarifWriter } from './check-output';
import { checkFixes } from './check-fixes';
import { compareToBaseline, regressionsFail, withRegressions } from './baseline';
import { loadBaseline } from './baseline-file';
import { VERSION } from '../version';
import { inShard, parseShard } from './shards';

const FLAGS = {
  '--arch': 'string',
  '--gpu': 'string',
  '--format': 'string',
  '--nvcc': 'string',
  '--no-nvcc': 'boolean',
  '-p': 'string',
  '--ptxas-log': 'string',
  '--from-build': 'list',
  '--fail-on': 'string',
  '--timeout': 'string',
  '--baseline': 'string',
  '--quiet': 'boolean',
  '--verbose': 'boolean',
  '--allow-compiler': 'list',
  '-I': 'list',
  '-D': 'list',
  '--std': 'string',
  '--jobs': 'string',
  '--shard': 'string',
  '--cache-dir': 'string',
  '--no-cache': 'boolean',
  '--lines': 'boolean',
  '--check-fixes': 'boolean',
  '--help': 'boolean',
} as const;
const ALIASES = { '-h': '--help', '-q': '--quiet', '-v': '--verbose', '-std': '--std', '-j': '--jobs' };

export const CHECK_USAGE = `usage: cuda-occupancy check [--arch sm_80,sm_90] [--gpu NAME[,NAME]] [--format text|json|sarif] [--baseline FILE] [--nvcc PATH | --no-nvcc] [--allow-compiler GLOB]... [-p DIR] [-I DIR]... [-D NAME[=VALUE]]... [--std c++17] [--ptxas-log FILE] [--from-build DIR]... [--fail-on error|warning|never] [--timeout SECONDS] [--jobs N] [--shard K/N] [--cache-dir DIR | --no-cache] [--lines] [--check-fixes] [-q|--quiet | -v|--verbose] FILE_OR_DIR... [-- NVCC_ARG...]
  --jobs N               with --no-nvcc, analyse on N worker threads (default: one per core but one, so in this
                         process on 2 cores; 1: in this process, as for less than about 300 KB of source or over 20,000 files); with nvcc,
                         run at most N compiles at a time (default: cores, at most 4). The output is the same whatever N.
  --shard K/N            check only the K-th of N parts of the files (a hash of each path relative to the working
                         directory: the same on every machine); each part still reads the whole repository for
                         headers and launches. Join the parts' outputs with cuda-occupancy merge.
  --cache-dir DIR        keep nvcc's figures and PTX in DIR between runs (default: $CUDA_OCCUPANCY_CACHE_DIR, else the
                         per-user cache the editor uses, ~/.cache/cuda-occupancy-lens); a unit whose text, included
                         headers, flags and nvcc are unchanged is not compiled again. --no-cache: compile every unit.
  --lines                with --format json: each kernel's register pressure per line (kernels[].pressure.lines)
  --check-fixes          compile each register cap the fixes propose (__launch_bounds__, -maxrregcount) and say what ptxas did
  --from-build DIR       read figures from what a build produced under DIR: its objects (through cuobjdump, or their
                         device code without it) and its logs' -Xptxas -v lines; repeatable. nvcc then runs only
                         when --nvcc names it.
  --allow-compiler GLOB  a host compiler compile_commands.json may name (-ccbin, --compiler-bindir), as an absolute-path glob
                         (e.g. /usr/bin/g++-*); repeatable. Without it such options are dropped, with a line each.`;

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1, hint: 0 };
const DEFAULT_ARCH = 'sm_80';

export interface CheckRun {
  archs: string[];
  /** Per file analysed, in the order given: its pieces of the output (those `outputs` asked for). */
  files: CheckedFile[];
  /** Lines for stderr: nvcc missing (the analysis still ran). */
  notes: string[];
  /** nvcc runs that failed, for one summary on stderr. */
  compileFailures: CompileFailure[];
}

/**
 * Where each analysed file's pieces go as soon as they are done, in the order given: called with the
 * architectures before the first file is handed on (or at the end when none is), it returns what
 * takes each file. The pieces are then not kept (CheckRun's `files` is empty); a file that failed is
 * a line of `notes` instead.
 */
export type CheckSink = (archs: string[]) => (file: CheckedFile) => void;

/** What a test may watch of a run: each file of the in-process analysis once analysed, before its output is built. */
export interface CheckHooks {
  analysed?(file: string): void;
}

/**
 * Analyse the files named in `args` (check's flags and paths), as `check` does, without printing;
 * `outputs` says which pieces of the output to build per file (default: the JSON's). Without `sink`
 * the files' pieces come back in `files`.
 */
/**
 * The C++ sources under the directories checked that call a launcher of the workspace (a function
 * of a CUDA file that launches a kernel, as the index reads each file alone): their calls are
 * launches, read through the unit that defines it. Sources that name no launcher are not read.
 */
async function launcherCallers(positional: string[], cwd: string, cudaFiles: readonly string[]): Promise<string[]> {
  const given = new Set(cudaFiles);
  const candidates = collectCppSources(positional, cwd).filter((f) => !given.has(f));
  if (candidates.length === 0) return [];
  const analyzer = await createAnalyzer({ grammar: readGrammarBytes(), indexKey: toIndexPath, surface: 'cli' });
  try {
    for (const file of cudaFiles) {
      try {
        analyzer.index.update(
          toIndexPath(file),
          readBoundedFileSync(file, { maxBytes: DEFAULT_DOCUMENT_LIMITS.maxBytes }).text,
        );
      } catch {
        // An unreadable file names no launcher; its check says why.
      }
    }
    return callersNaming(candidates, analyzer.index.launcherNames());
  } finally {
    analyzer.parser.dispose();
  }
}

export async function runCheck(
  args: string[],
  io: CliIO,
  {
    outputs = { json: {}, text: null },
    sink,
    hooks = {},
  }: { outputs?: CheckOutputs; sink?: CheckSink; hooks?: CheckHooks } = {},
): Promise<CheckRun & { failOn: string }> {
  const { flags, lists, positional, rest } = parseArgs(args, { ...FLAGS }, ALIASES, { afterDoubleDash: 'rest' });
  const failOn = (flags['--fail-on'] as string | undefined) ?? 'error';
  if (!['error', 'warning', 'never'].includes(failOn))
    throw new UsageError(`--fail-on must be error, warning or never, got ${failOn}`);
  if (positional.length === 0) throw new UsageError(`no files given\n${CHECK_USAGE}`);
  if (flags['--nvcc'] !== undefined && flags['--no-nvcc'])
    throw new UsageError('--nvcc and --no-nvcc exclude each other');
  const timeoutSeconds = flags['--timeout'] === undefined ? 120 : Number(flags['--timeout']);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    throw new UsageError(`--timeout needs a positive number of seconds, got ${flags['--timeout']}`);
  const cores = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  // nvcc runs take a gigabyte or more each: at most 4 by default. The analysis takes every core.
  const jobs = flags['--jobs'] === undefined ? Math.min(4, cores) : Number(flags['--jobs']);
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new UsageError(`--jobs needs a positive whole number, got ${flags['--jobs']}`);
  // More threads than cores would only hold more copies of the index (each has its own). By default
  // one core is left to the main thread, which reads the files and joins the output: on two cores one
  // worker beside it only adds its start-up (the bench: 5-25% slower than in process on the corpus).
  const analysisJobs = flags['--jobs'] === undefined ? Math.max(1, cores - 1) : Math.min(jobs, Math.max(4, cores));
  // Like a compiler: -I, -D and --std, then nvcc's own arguments after `--`; added to the flags compile_commands.json gives a file.
  const compilerFlags = [
    ...flagsFromSettings({
      includePaths: (lists['-I'] ?? []).map((dir) => path.resolve(io.cwd, dir)),
      defines: lists['-D'] ?? [],
      std: (flags['--std'] as string | undefined) ?? '',
    }).flags,
    ...rest,
  ];

  const cudaFiles = collectSourceFiles(positional, io.cwd);
  const allFiles = [...cudaFiles, ...(await launcherCallers(positional, io.cwd, cudaFiles))];
  const roots = [
    ...new Set(positional.map((p) => path.resolve(io.cwd, p)).map((p) => (allFiles.includes(p) ? path.dirname(p) : p))),
  ];
  const shard = typeof flags['--shard'] === 'string' ? parseShard(flags['--shard']) : null;
  const files = shard ? allFiles.filter((f) => inShard(f, io.cwd, shard)) : allFiles;
  const database = await loadDatabase(flags['-p'] as string | undefined, roots, io.cwd);
  const archs = chooseArchs(flags['--arch'] as string | undefined, database);
  const policy: ArgumentPolicy = {
    allowedCompilers: expandHome(lists['--allow-compiler'] ?? []),
    findOnPath: (name) => findOnPath(name),
  };

  const gpus =
    typeof flags['--gpu'] === 'string'
      ? (flags['--gpu'] as string)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  const unknownGpus = gpus.filter((name) => !findGpuPart(name));
  if (unknownGpus.length)
    throw new UsageError(`unknown GPU ${unknownGpus.join(', ')} (known: ${GPU_PARTS.map((p) => p.name).join(', ')})`);
  const notes: string[] = [];
  const kept: CheckedFile[] = [];
  let take: ((file: CheckedFile) => void) | null = null;
  // Each file in its place: its pieces to the sink (or kept), or, when it failed, a line of `notes`.
  const deliver = (file: CheckedFile) => {
    if (file.error !== null)
      notes.push(`${path.relative(io.cwd, file.file) || file.file}: not analysed: ${file.error}`);
    else if (sink) (take ??= sink(archs))(file);
    else kept.push(file);
  };
  const finish = (compileFailures: CompileFailure[]): CheckRun & { failOn: string } => {
    if (sink) take ??= sink(archs);
    return { archs, files: kept, notes, compileFailures, failOn };
  };
  const sources: Source[] = [];
  for (const file of files) {
    const text = readSource(file, io.cwd);
    const tooLarge = typeof text === 'number' ? tooManyBytes(text) : tooLargeToAnalyse(text);
    if (tooLarge !== null || typeof text === 'number') {
      notes.push(`${path.relative(io.cwd, file) || file}: ${tooLarge}; skipped`);
      continue;
    }
    sources.push({ file, text });
  }
  const logPath =
    typeof flags['--ptxas-log'] === 'string' ? path.resolve(io.cwd, flags['--ptxas-log'] as string) : null;
  const log = logPath === null ? null : readLog(logPath);

  const fromBuild = lists['--from-build'] ?? [];
  // The build's figures stand for a compile: nvcc runs beside them only when --nvcc names it.
  const runsNvcc = !flags['--no-nvcc'] && !(fromBuild.length && flags['--nvcc'] === undefined);
  // The nvcc that compiles the units says which CUDA version their `#if CUDART_VERSION` arms read.
  const toolchain = await toolchainOf(runsNvcc ? locateNvcc(flags['--nvcc'] as string | undefined) : null);
  // Without nvcc the figures are known before the analysis (a log, annotations): each file's output
  // can be built where it is analysed, on every core. With nvcc they come after the compiles, and a
  // build's figures are read here (with cuobjdump, at most --jobs at a time).
  if (flags['--no-nvcc'] && fromBuild.length === 0 && analysisJobs > 1 && workersPay(sources) && canUseWorkers()) {
    try {
      await checkInWorkers(
        {
          roots,
          database,
          sources,
          plan: indexPlan(roots, sources),
          cwd: io.cwd,
          archs,
          gpus,
          outputs,
          extraFlags: compilerFlags,
          toolchain,
          log: log && logPath ? { name: logPath, ...log } : null,
        },
        analysisJobs,
        deliver,
      );
      return finish([]);
    } catch (error) {
      if (error instanceof WorkerUsageError) throw new UsageError(error.message);
      throw error;
    }
  }

  const analyzer = await createAnalyzer({
    grammar: readGrammarBytes(),
    indexKey: toIndexPath,
    contentHash,
    surface: 'cli',
  });
  indexSources(analyzer.index, { roots, database, sources });
  configureUnits(analyzer, { database, roots, cwd: io.cwd, extraFlags: compilerFlags, toolchain });
  analyzer.configure({ archs, gpus, divergence: true, report: DEFAULT_REPORT_SETTINGS });
  if (log && logPath) {
    try {
      analyzer.setLog(logPath, log.text, log.producedAt);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const figuresLater = runsNvcc || fromBuild.length > 0;
  const analysed: Array<{ file: string; text: string; facts: DocumentFacts }> = [];
  const failed = new Map<string, string>();
  try {
    for (let k = 0; k < sources.length; k++) {
      const source = sources[k];
      const result = ownFailure(() => analyseSource(analyzer, source));
      hooks.analysed?.(source.file);
      if (!result.value) {
        if (figuresLater) failed.set(source.file, result.error!);
        else deliver(failedFile(source.file, result.error!));
      }
      // Without figures still to come, each file's output is built and handed on at once, and its
      // analysis and text let go: at 100,000 files, holding every analysis until the end took 1.9 GB.
      else if (!figuresLater) {
        const report = ownFailure(() =>
          checkedFile(source.file, checkFileOf(analyzer, source.file, result.value, io.cwd), {
            archs,
            cwd: io.cwd,
            outputs,
          }),
        );
        deliver(report.value ?? failedFile(source.file, report.error!));
      } else analysed.push({ ...source, facts: result.value });
      if (!figuresLater) {
        sources[k] = { file: source.file, text: '' };
        analyzer.releaseText(source.file);
        // What was written waits in this process until the reader takes it, so the next file waits too.
        await io.drained?.();
      }
    }
  } finally {
    // Figures to come (a compile, a build's files) are mapped to the index's kernels after the parser is gone.
    if (figuresLater) analyzer.index.readAll();
    analyzer.parser.dispose();
  }

  const compileFailures: CompileFailure[] = [];
  if (fromBuild.length)
    notes.push(
      ...(await applyFromBuild({
        analyzer,
        dirs: fromBuild,
        cwd: io.cwd,
        nvccPath: flags['--no-nvcc'] ? null : locateNvcc(flags['--nvcc'] as string | undefined),
        jobs,
        timeoutMs: timeoutSeconds * 1000,
      })),
    );
  if (runsNvcc) {
    const nvccPath = locateNvcc(flags['--nvcc'] as string | undefined);
    // Every .cu file given is a translation unit: its figures go to the kernels it defines and to those of
    // the headers it includes, wherever they are launched (a .cu that only launches is compiled too).
    const units = analysed.filter(({ file }) => file.endsWith('.cu'));
    const memoryLimitBytes = DEFAULT_SETTINGS['nvcc.memoryLimitMB'] * 1024 * 1024;
    const cacheDir = checkCacheDir(flags, io.cwd);
    const compiled = await compileUnits({
      caches: compileCaches(cacheDir, (problem) => notes.push(`${problem} (compiling every unit)`)),
      units,
      analyzer,
      nvccPath,
      archs,
      database,
      extraFlags: compilerFlags,
      timeoutMs: timeoutSeconds * 1000,
      jobs,
      policy,
      memoryLimitBytes,
      verbose: flags['--verbose'] === true,
    });
    notes.push(...compiled.notes);
    compileFailures.push(...compiled.failures);
    if (flags['--check-fixes'])
      notes.push(
        ...(await checkFixes({
          units,
          analyzer,
          nvccPath,
          archs,
          database,
          extraFlags: compilerFlags,
          policy,
          timeoutMs: timeoutSeconds * 1000,
          memoryLimitBytes,
          foundFolders: compiled.foundFolders,
        })),
      );
  }

  // In the order given, each failed file in its place.
  const facts = new Map(analysed.map((a) => [a.file, a.facts]));
  for (const { file } of sources) {
    const analysis = facts.get(file);
    if (!analysis) {
      if (failed.has(file)) deliver(failedFile(file, failed.get(file)!));
      continue;
    }
    const report = ownFailure(() =>
      checkedFile(file, checkFileOf(analyzer, file, analysis, io.cwd), { archs, cwd: io.cwd, outputs }),
    );
    deliver(report.value ?? failedFile(file, report.error!));
  }
  return finish(compileFailures);
}

export async function checkCommand(args: string[], io: CliIO, hooks: CheckHooks = {}): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(CHECK_USAGE + '\n');
    return 0;
  }
  const { flags } = parseArgs(args, { ...FLAGS }, ALIASES, { afterDoubleDash: 'rest' });
  if (flags['--quiet'] && flags['--verbose']) throw new UsageError('--quiet and --verbose exclude each other');
  const format = (flags['--format'] as string | undefined) ?? 'text';
  if (!['text', 'json', 'sarif'].includes(format))
    throw new UsageError(`--format must be text, json or sarif, got ${format}`);
  const baseline = typeof flags['--baseline'] === 'string' ? loadBaseline(flags['--baseline'] as string, io.cwd) : null;
  // The per-file tables of the files named themselves; a folder's files give findings and the summary.
  const named = positionalFiles(args, io.cwd);
  const text = { quiet: flags['--quiet'] === true, verbose: flags['--verbose'] === true, named };
  const json = { pressureLines: flags['--lines'] === true, nextSteps: flags['--check-fixes'] === true };
  const outputs = { json: format !== 'text' || baseline ? json : null, text: format === 'text' ? text : null };
  const writerFor = (archs: string[]): CheckWriter<CheckedFile> => {
    if (format === 'json') return piecesOf(jsonWriter(io.out, archs), (f) => f.json ?? {});
    if (format === 'sarif')
      return piecesOf(
        sarifWriter(io.out, archs, { toolVersion: VERSION, baseDir: io.cwd }),
        (f) => f.json as CheckJsonFile,
      );
    return piecesOf(textWriter(io.out, text), (f) => f.text!);
  };
  // What --fail-on reads of the files, as they go (runCheck checks the flag before any file).
  const failOn = (flags['--fail-on'] as string | undefined) ?? 'error';
  let failing = false;
  const worse = (file: CheckedFile) => {
    failing ||= exitCodeFor(file.severities, failOn) === 1;
  };
  let writer: CheckWriter<CheckedFile> | null = null;
  // Without a baseline each file is written as soon as it is analysed; a baseline matches kernels and
  // launches across the whole repository, so its comparison waits for every file.
  const run = await runCheck(args, io, {
    outputs,
    hooks,
    sink: baseline
      ? undefined
      : (archs) => {
          writer = writerFor(archs);
          return (file) => {
            worse(file);
            writer!.file(file);
          };
        },
  });
  for (const note of [...run.notes, ...compileFailureLines(run.compileFailures, io.cwd, flags['--verbose'] === true)])
    io.err(`cuda-occupancy: ${note}\n`);
  if (!baseline) {
    writer!.end();
    return failing ? 1 : 0;
  }
  const whole = checkJsonOf(
    run.archs,
    run.files.map((f) => f.json ?? {}),
  ) as CheckJson;
  const regressions = compareToBaseline(whole, baseline);
  const compared = withRegressions(whole, regressions).files;
  const after = writerFor(run.archs);
  run.files.forEach((f, k) => {
    worse(f);
    after.file({ ...f, json: compared[k] });
  });
  after.end();
  if (format === 'text')
    io.out(
      regressions.length
        ? `against the baseline:\n${regressions.map((r) => `${displayPath(r.file, io.cwd)}:${r.line}:${r.column}: ${r.severity}: ${r.message} [${r.code}]`).join('\n')}\n`
        : 'against the baseline: nothing got worse\n',
    );
  return failing || regressionsFail(regressions, run.failOn) ? 1 : 0;
}

/** A writer of `T` fed with the part of each file's pieces it writes. */
function piecesOf<T>(writer: CheckWriter<T>, part: (file: CheckedFile) => T): CheckWriter<CheckedFile> {
  return { file: (file) => writer.file(part(file)), end: () => writer.end() };
}

/** The positional arguments that name files (not folders), as absolute paths. */
function positionalFiles(args: string[], cwd: string): string[] {
  const { positional } = parseArgs(args, { ...FLAGS }, ALIASES, { afterDoubleDash: 'rest' });
  return positional
    .map((p) => path.resolve(cwd, p))
    .filter((p) => {
      try {
        return statSync(p).isFile();
      } catch {
        return false;
      }
    });
}

export function exitCodeFor(severities: readonly Severity[], failOn: string): number {
  if (failOn === 'never') return 0;
  const worst = Math.max(-1, ...severities.map((x) => RANK[x]));
  return worst >= RANK[failOn as Severity] ? 1 : 0;
}

interface CompileUnitsInput {
  units: Array<{ file: string; text: string; facts: DocumentFacts }>;
  analyzer: Analyzer;
  nvccPath: string;
  archs: string[];
  database: CompileCommand[] | null;
  /** -I, -D, --std and the arguments after `--`. */
  extraFlags: string[];
  timeoutMs: number;
  jobs: number;
  /** Which host compilers compile_commands.json may name; other options that write or run are dropped. */
  policy: ArgumentPolicy;
  memoryLimitBytes: number;
  /** A missing optional tool (nvdisasm) is said only then: it changes no figure, and every run would say it. */
  verbose?: boolean;
  /** Figures and PTX of earlier runs (checkCacheDir). */
  caches: ReturnType<typeof compileCaches>;
}

/**
 * Where check keeps compile results between runs: `--cache-dir`, else $CUDA_OCCUPANCY_CACHE_DIR (`off`: none),
 * else the editor's per-user cache; null with --no-cache. Before, check passed no cache to its compiles, and a
 * second run of an unchanged repository compiled every unit again.
 */
function checkCacheDir(flags: Record<string, string | boolean | undefined>, cwd: string): string | null {
  if (flags['--no-cache']) return null;
  if (typeof flags['--cache-dir'] === 'string') return path.resolve(cwd, flags['--cache-dir']);
  const env = process.env.CUDA_OCCUPANCY_CACHE_DIR;
  if (env === 'off') return null;
  return env ? path.resolve(cwd, env) : defaultCacheDir();
}

/**
 * Compiles the units, `jobs` at a time, and hands each one's figures (or its failure) to the
 * analyzer; returns the notes for stderr. A file that looks like kernel source compiled at run time
 * (no #include, no host code) and fails is passed over quietly.
 */
async function compileUnits({
  units,
  analyzer,
  nvccPath,
  archs,
  database,
  extraFlags,
  timeoutMs,
  jobs,
  policy,
  memoryLimitBytes,
  verbose = false,
  caches,
}: CompileUnitsInput): Promise<{
  notes: string[];
  failures: CompileFailure[];
  foundFolders: Map<string, readonly string[]>;
}> {
  const failures: CompileFailure[] = [];
  const foundFolders = new Map<string, readonly string[]>();
  const dropped = new Set<string>();
  let missing = false;
  const queue = [...units];
  const nvdisasm = locateNvdisasm(nvccPath);
  let tookPtx = false;
  const compileOne = async ({ file, text, facts }: CompileUnitsInput['units'][number]): Promise<void> => {
    const flags = unitCompileFlags(analyzer, { database, extraFlags, policy }, file);
    for (const option of flags.dropped ?? []) dropped.add(droppedLine(option));
    const runIn = flags.cwd ?? path.dirname(file);
    // A header nvcc cannot find is looked for in the workspace, and the compile run again with its folder.
    const { result, added } = await compileFindingIncludes(
      {
        nvccPath,
        filePath: file,
        archs,
        flags: flags.flags,
        cwd: runIn,
        timeoutMs,
        memoryLimitBytes,
        keep: wantsPtx(facts),
        // A unit whose SASS nvdisasm reads needs the cubin of a compile: the cache keeps figures only.
        cache: nvdisasm && wantsPtx(facts) ? null : caches.figures,
      },
      (header) => analyzer.index.folderHolding(header),
    );
    if (added.length) foundFolders.set(file, added);
    if (result.status === 'missing') {
      missing = true;
      queue.length = 0;
      return;
    }
    if (result.status !== 'ok') {
      if (looksCompiledAtRunTime(text)) return;
      const first = result.firstError;
      failures.push({ file, what: 'nvcc', status: result.status, firstError: first?.text ?? null });
      analyzer.setCompileState(file, {
        state: 'failed',
        error: first ? { text: first.text, message: first.message, file: first.file, line: first.line } : null,
      });
    }
    if (result.entries.length === 0 && result.status !== 'ok') return;
    analyzer.setCompiled(file, { perArch: result.perArch, producedAt: Date.now() }, facts.kernels);
    // The register pressure and the divergent branches' costs come from the PTX of the first arch (kept from that compile) when nvcc ran OK.
    if (result.status !== 'ok' || !wantsPtx(facts)) return;
    const ptx = await compilePtx({
      kept: result.kept.find((k) => k.arch === archs[0])?.ptx,
      nvccPath,
      filePath: file,
      arch: archs[0],
      flags: flags.flags,
      cwd: runIn,
      timeoutMs,
      memoryLimitBytes,
      cache: caches.ptx,
    });
    if (ptx.status !== 'ok')
      failures.push({
        file,
        what: 'nvcc -ptx',
        status: ptx.status,
        firstError: `${ptx.error.text} (no register pressure; branch costs stay estimates)`,
      });
    else if (ptx.sourceHash) {
      tookPtx = true;
      const kept = result.kept.find((k) => k.arch === archs[0]);
      const sass = await keptLifeRanges({
        nvdisasmPath: nvdisasm,
        cubin: kept?.cubin,
        names: kept?.names,
        timeoutMs,
        label: `${file} (${archs[0]})`,
      });
      analyzer.setPtx(file, { text: ptx.ptx.text, filePath: file, sourceHash: ptx.sourceHash, sass });
    }
  };
  const worker = async () => {
    for (let unit = queue.shift(); unit; unit = queue.shift()) await compileOne(unit);
  };
  await Promise.all(Array.from({ length: Math.min(jobs, Math.max(1, units.length)) }, worker));
  // In the order the files were given, whatever order the compiles finished in.
  const order = new Map(units.map((u, i) => [u.file, i]));
  failures.sort((a, b) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0));
  const notes = [...dropped];
  if (tookPtx && !nvdisasm && verbose) notes.push(noNvdisasmNote(nvccPath));
  if (missing)
    notes.push(
      `nvcc not found (${nvccPath}): register figures come only from logs and annotations; pass --nvcc PATH or --no-nvcc`,
    );
  return { notes, failures, foundFolders };
}

/**
 * A unit's PTX is read for its kernels (register pressure, branch costs) and for its launches (the
 * loads and the work of the instances they run, for the latency estimate: ptx-load-work.ts).
 */
function wantsPtx(facts: DocumentFacts): boolean {
  return facts.kernels.some((k) => k.isDefinition) || facts.launches.length > 0;
}

async function loadDatabase(dir: string | undefined, roots: string[], cwd: string): Promise<CompileCommand[] | null> {
  const file =
    dir !== undefined
      ? path.resolve(cwd, dir, 'compile_commands.json')
      : await findCompileCommandsFile({ workspaceRoots: roots });
  if (!file) return null;
  try {
    return await loadCompileCommands(file);
  } catch (error) {
    if (dir === undefined) return null;
    if (error instanceof FileReadError)
      throw new UsageError(error.message.replace(file, path.relative(cwd, file) || file));
    throw new UsageError(
      `cannot read ${path.relative(cwd, file) || file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

function chooseArchs(flag: string | undefined, database: CompileCommand[] | null): string[] {
  let requested: string[];
  if (flag !== undefined)
    requested = flag
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  else {
    const fromDatabase = database
      ? [
          ...new Set(
            database.flatMap(
              (entry) => resolveCompileFlags({ database: [entry], filePath: entry.file, settings: {} }).archs,
            ),
          ),
        ]
      : [];
    requested = fromDatabase.length ? fromDatabase : [DEFAULT_ARCH];
  }
  const { archs, unknown } = resolveArchs(requested);
  if (unknown.length) throw new UsageError(`unknown architecture ${unknown.join(', ')} (use e.g. sm_80, sm_90a, 9.0)`);
  if (archs.length === 0) throw new UsageError('--arch names no architecture');
  return archs;
}

/** A build log's text, read before the analysis (every worker maps its figures). */
function readLog(file: string): { text: string; producedAt: number | null } {
  try {
    return readPtxasLog(file);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A source's text, or its size when it is larger than the document limit (it is then skipped, not read). */
function readSource(file: string, cwd: string): string | number {
  let buffer: Buffer;
  try {
    buffer = readBoundedFileSync(file, { maxBytes: DEFAULT_DOCUMENT_LIMITS.maxBytes }).bytes;
  } catch (error) {
    if (error instanceof FileReadError && error.code === 'too-large') return statSync(file).size;
    if (error instanceof FileReadError && error.code === 'not-regular')
      throw new UsageError(error.message.replace(file, path.relative(cwd, file) || file));
    throw new UsageError(
      `cannot read ${path.relative(cwd, file) || file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  if (buffer.subarray(0, 8000).includes(0))
    throw new UsageError(`${path.relative(cwd, file) || file} is not a text file`);
  return buffer.toString('utf8');
}
