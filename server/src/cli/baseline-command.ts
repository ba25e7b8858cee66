/**
 * `cuda-occupancy baseline write FILE [check options] FILE_OR_DIR...`: run the same analysis as
 * `check` and record its figures (baseline.ts) for a later `check --baseline FILE`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError, type CliIO } from './cli-io';
import { runCheck } from './check-command';
import { compileFailureLines } from './check-text';
import { checkJsonOf } from './check-json';
import type { CheckJson } from './check-json-types';
import { writeBaseline, type Baseline } from './baseline';
export { loadBaseline } from './baseline-file';
import { VERSION } from '../version';

export const BASELINE_USAGE = `usage: cuda-occupancy baseline write FILE [--arch ...] [--nvcc PATH | --no-nvcc] [-p DIR] [--ptxas-log FILE] FILE_OR_DIR...
  FILE: where to write the baseline (- for standard output); the other options are check's.
  Compare later with: cuda-occupancy check --baseline FILE [--fail-on warning] FILE_OR_DIR...`;

/** What baseline needs of `check`: its analysis as the `--format json` object, without printing it. */
export type RunCheck = (flagsAndPaths: string[], io: CliIO) => Promise<{ json: CheckJson }>;

/** check-command's analysis as the JSON object; its notes (nvcc missing, compile failures) go to stderr as check prints them. */
export const checkAsJson: RunCheck = async (flagsAndPaths, io) => {
  const run = await runCheck(flagsAndPaths, io);
  for (const note of [...run.notes, ...compileFailureLines(run.compileFailures, io.cwd, false)])
    io.err(`cuda-occupancy: ${note}\n`);
  return {
    json: checkJsonOf(
      run.archs,
      run.files.map((f) => f.json ?? {}),
    ) as CheckJson,
  };
};

export async function baselineCommand(args: string[], io: CliIO, check: RunCheck = checkAsJson): Promise<number> {
  const [action, ...rest] = args;
  if (action === undefined || action === '--help' || action === '-h' || action === 'help') {
    io.out(BASELINE_USAGE + '\n');
    return action === undefined ? 2 : 0;
  }
  if (action !== 'write')
    throw new UsageError(`unknown baseline action ${JSON.stringify(action)} (try: baseline write FILE FILE_OR_DIR...)`);
  const [file, ...checkArgs] = rest;
  if (file === undefined || (file.startsWith('-') && file !== '-'))
    throw new UsageError(`baseline write needs the FILE to write first\n${BASELINE_USAGE}`);
  if (checkArgs.includes('--baseline') || checkArgs.some((a) => a.startsWith('--baseline=')))
    throw new UsageError('baseline write takes no --baseline');

  const { json } = await check(checkArgs, io);
  const baseline = writeBaseline(json, { generator: `cuda-occupancy ${VERSION}` });
  const text = JSON.stringify(baseline, null, 2) + '\n';
  if (file === '-') {
    io.out(text);
  } else {
    const target = path.resolve(io.cwd, file);
    try {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
    } catch (error) {
      throw new UsageError(`cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    io.out(`wrote ${file}: ${describe(baseline)}\n`);
  }
  if (!hasRegisterFigures(baseline)) {
    io.err(
      'cuda-occupancy: warning: no register figures were found (no nvcc, --ptxas-log or `// occupancy:` annotation), so the baseline records no registers, spills or occupancy to compare\n',
    );
  }
  return 0;
}

function describe(b: Baseline): string {
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return `${count(b.kernels.length, 'kernel instance', 'kernel instances')}, ${count(b.launches.length, 'launch', 'launches')} on ${b.archs.join(', ')}`;
}

function hasRegisterFigures(b: Baseline): boolean {
  return b.kernels.some((k) => Object.values(k.archs).some((f) => f.numRegs !== null));
}
