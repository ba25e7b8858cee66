/**
 * What `check` does for each file, the same in the main thread (`--jobs 1`, or with nvcc) and in a
 * worker thread (check-workers.ts): the workspace index built from the same texts in the same
 * order, then per file its analysis and its report, turned into plain pieces of the output.
 */
import * as path from 'node:path';
import type { Analyzer, DocumentFacts, IndexEntry, Toolchain, WorkspaceIndex } from '../core/analyzer';
import type { Severity } from '../core/types';
import { branchesForCli, checkJsonFile, type CheckFile, type CheckJsonOptions } from './check-json';
import { checkTextPieces, type CheckTextOptions, type CheckTextPieces } from './check-text';
import {
  includeDirsOfFlags,
  unitFlagsPerFile,
  indexIncludedFiles,
  listSourceFiles,
  indexText,
  toIndexPath,
  updateFromDisk,
} from '../files/workspace-files';
import { resolveCompileFlags, type CompileCommand, type CompileFlags } from '../nvcc/compile-commands';
import type { ArgumentPolicy } from '../nvcc/argument-policy';
import { withFoundFolders } from '../nvcc/found-includes';
import { projectFiles } from '../files/project-files';

/** A file to analyse (absolute path) and its text as read once. */
export interface Source {
  file: string;
  text: string;
}

/** Which pieces of the output to build: the JSON entry (also what a baseline compares), the text lines. */
export interface CheckOutputs {
  json: CheckJsonOptions | null;
  text: CheckTextOptions | null;
}

/** One file's part of the output as plain data: a worker thread sends it back as it is. */
export interface CheckedFile {
  /** Absolute path. */
  file: string;
  json: object | null;
  text: CheckTextPieces | null;
  /** Of its findings: what --fail-on reads. */
  severities: Severity[];
  /** Why it could not be analysed (an internal error, its own alone), or null. */
  error: string | null;
}

export interface IndexInput {
  /** The folders given (a file's own folder for a file given). */
  roots: readonly string[];
  database: CompileCommand[] | null;
  /** The files to analyse, in order. */
  sources: readonly Source[];
}

/**
 * The files indexed from the roots, in order: the scan's (`scanned` of them), then the checked
 * files it left out (another extension, a skipped folder). The headers they include from outside
 * the roots come in between (assembleIndex).
 */
export interface IndexPlan {
  files: string[];
  scanned: number;
}

export function indexPlan(roots: readonly string[], sources: readonly Source[]): IndexPlan {
  const scan = listSourceFiles(roots).files;
  const scanned = new Set(scan);
  return { files: [...scan, ...sources.map((s) => s.file).filter((f) => !scanned.has(f))], scanned: scan.length };
}

/**
 * Index one file of the plan, from the text already read when it is checked, else from disk; its entry, or null
 * when unreadable or when its indexing failed (it is left out; its analysis then says why, if it is checked).
 */
export function indexFile(index: WorkspaceIndex, file: string, texts: ReadonlyMap<string, string>): IndexEntry | null {
  const text = texts.get(file);
  const key = toIndexPath(file);
  const indexed = text !== undefined ? indexText(index, file, text) : updateFromDisk(index, file);
  return (indexed ? index.entry(key) : undefined) ?? null;
}

/**
 * Every file a checked file may read facts from, in the plan's order, each by `indexOne` (from its
 * text, or its entry built elsewhere): the scan, the headers they include from outside (beside a
 * file, `"../x.h"`, or in its compile command's -I folders), then the rest of the checked files.
 * Every file is indexed before any is analysed, so a file's results do not depend on its place in the order.
 */
export function assembleIndex(
  index: WorkspaceIndex,
  database: CompileCommand[] | null,
  plan: IndexPlan,
  indexOne: (k: number) => void,
): void {
  for (let k = 0; k < plan.scanned; k++) indexOne(k);
  index.setIncludeDirs(includeDirsFromDatabase(database));
  indexIncludedFiles(index);
  for (let k = plan.scanned; k < plan.files.length; k++) indexOne(k);
}

export function textsOf(sources: readonly Source[]): Map<string, string> {
  return new Map(sources.map((s) => [s.file, s.text]));
}

/** The index of the serial path: every file of the plan read here. */
export function indexSources(index: WorkspaceIndex, { roots, database, sources }: IndexInput): void {
  const texts = textsOf(sources);
  const plan = indexPlan(roots, sources);
  assembleIndex(index, database, plan, (k) => void indexFile(index, plan.files[k], texts));
}

/** A checked file's analysis: every kernel body read. */
export function analyseSource(analyzer: Analyzer, { file, text }: Source): DocumentFacts {
  return analyzer.analyzeFile({ uri: file, text });
}

/** `work`'s result, or the message of what it threw: one file's failure is that file's, never the run's. */
export function ownFailure<T>(work: () => T): { value: T; error: null } | { value: null; error: string } {
  try {
    return { value: work(), error: null };
  } catch (error) {
    return { value: null, error: `internal error: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The output of a file that could not be analysed: nothing but why. */
export function failedFile(file: string, error: string): CheckedFile {
  return { file, json: null, text: null, severities: [], error };
}

/** A file's report with what the text and JSON read of it (its figures as the analyzer has them now). */
export function checkFileOf(analyzer: Analyzer, file: string, facts: DocumentFacts, cwd: string): CheckFile {
  const report = analyzer.reportOf(facts);
  return {
    path: path.relative(cwd, file) || file,
    displayPath: (p) => path.relative(cwd, p) || p,
    report,
    instances: (kernel) => analyzer.instancesOf(file, kernel),
    branches: branchesForCli(report.branches),
    latency: report.analyses.map((a) => {
      const entries = a.perArch.filter((p) => p.latency).map((p) => [p.arch, p.latency] as const);
      return entries.length ? Object.fromEntries(entries) : null;
    }),
  };
}

export function checkedFile(
  file: string,
  checked: CheckFile,
  { archs, cwd, outputs }: { archs: string[]; cwd: string; outputs: CheckOutputs },
): CheckedFile {
  return {
    file,
    json: outputs.json ? checkJsonFile(checked, outputs.json) : null,
    text: outputs.text ? checkTextPieces(checked, archs, cwd, outputs.text) : null,
    severities: checked.report.findings.map((f) => f.severity),
    error: null,
  };
}

/**
 * What the units of a check read beyond the checked files: the rest of the project (the folder the
 * check runs in, when the checked paths are in it, else the folder they share), and each unit's
 * flags for its preprocessor: its compile_commands.json entry and the command line's (`-D`, `-I`,
 * `--std`, the arguments after `--`), as nvcc gets them.
 */
export function configureUnits(
  analyzer: Analyzer,
  {
    database,
    roots,
    cwd,
    extraFlags,
    toolchain,
  }: {
    database: CompileCommand[] | null;
    roots: readonly string[];
    cwd: string;
    extraFlags: readonly string[];
    toolchain: Toolchain;
  },
): void {
  const inside = (root: string) =>
    !path.relative(cwd, root).startsWith('..') && !path.isAbsolute(path.relative(cwd, root));
  const project = roots.length && roots.every(inside) ? cwd : commonFolder(roots);
  if (project) analyzer.setFileSource(projectFiles(project));
  analyzer.setUnitFlags(
    unitFlagsPerFile((file) => {
      const resolved = resolveCompileFlags({ database, filePath: file, settings: { nvccArgs: [...extraFlags] } });
      return { flags: resolved.flags, cwd: resolved.cwd ?? cwd };
    }),
    toolchain,
  );
}

function commonFolder(paths: readonly string[]): string | null {
  if (paths.length === 0) return null;
  let common = paths[0].split(path.sep);
  for (const p of paths.slice(1)) {
    const parts = p.split(path.sep);
    let k = 0;
    while (k < common.length && k < parts.length && common[k] === parts[k]) k++;
    common = common.slice(0, k);
  }
  const folder = common.join(path.sep);
  return folder && folder !== path.sep ? folder : null;
}

/**
 * The flags `check` compiles a unit with: its database entry or the command line's, the folders the
 * workspace found its quoted includes in (WorkspaceIndex.inferredIncludeDirs), and those an earlier
 * compile of it found for a header nvcc could not open (`found`, by file).
 */
export function unitCompileFlags(
  analyzer: Analyzer,
  input: { database: CompileCommand[] | null; extraFlags: string[]; policy: ArgumentPolicy },
  file: string,
  found?: ReadonlyMap<string, readonly string[]>,
): CompileFlags {
  const flags = resolveCompileFlags({
    database: input.database,
    filePath: file,
    settings: { nvccArgs: input.extraFlags },
    policy: input.policy,
    inferredIncludeDirs: analyzer.index.inferredIncludeDirs(file),
  });
  return { ...flags, flags: withFoundFolders(flags.flags, found?.get(file)) };
}

/** Each file's include folders, from its compile_commands.json entry (none without one). */
export function includeDirsFromDatabase(database: CompileCommand[] | null): (file: string) => readonly string[] {
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
