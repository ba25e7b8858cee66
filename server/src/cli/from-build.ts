/** `check --from-build DIR`: figures from what a build produced (files/build-outputs.ts), handed to the analyzer. */
import * as path from 'node:path';
import type { Analyzer } from '../core/analyzer';
import { readBuildFigures } from '../files/build-outputs';
import { UsageError } from './cli-io';

export interface FromBuildInput {
  analyzer: Analyzer;
  /** The folders given, as written. */
  dirs: readonly string[];
  cwd: string;
  /** The nvcc that --nvcc names or locateNvcc finds: cuobjdump is looked for beside it. */
  nvccPath: string | null;
  jobs: number;
  timeoutMs: number;
}

/** Reads the build's figures into the analyzer; returns the lines for stderr. */
export async function applyFromBuild({
  analyzer,
  dirs,
  cwd,
  nvccPath,
  jobs,
  timeoutMs,
}: FromBuildInput): Promise<string[]> {
  const full = dirs.map((d) => path.resolve(cwd, d));
  const read = await readBuildFigures({ dirs: full, nvccPath, jobs, timeoutMs });
  const notDirs = read.notes.filter((n) => n.endsWith(': not a directory'));
  if (notDirs.length === full.length) throw new UsageError(notDirs[0]);
  analyzer.setBuildFigures('from-build', read.build);
  const c = read.counts;
  const shown = dirs.join(', ');
  const summary =
    read.build.size === 0
      ? `--from-build ${shown}: no figures found (${c.objects} object(s) read by cuobjdump, ${c.logs} log(s) with no ptxas lines); build with -Xptxas -v (or --resource-usage) into a log, or with the toolkit's cuobjdump at hand`
      : `--from-build ${shown}: ${read.build.size} figure(s), one per function and architecture, from ${c.objectsWithFigures} object(s) and ${c.logsWithFigures} log(s)`;
  return [...read.notes.map((n) => n.replaceAll(cwd + path.sep, '')), summary];
}
