/** Run the `cuda-occupancy` CLI in-process (its `main`), capturing what it prints. */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { main } from '../../server/src/cli/main';
import type { CliIO } from '../../server/src/cli/cli-io';
import type { CheckJson } from '../../server/src/cli/check-json-types';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export function memoryIO(cwd: string, sink: { out: string; err: string }): CliIO {
  return {
    stdin: Readable.from(['']),
    out: (t) => {
      sink.out += t;
    },
    err: (t) => {
      sink.err += t;
    },
    cwd,
  };
}

export async function runCli(args: string[], cwd = REPO_ROOT): Promise<CliRun> {
  const sink = { out: '', err: '' };
  const code = await main(args, memoryIO(cwd, sink));
  return { code, ...sink };
}

/** `check --format json` of the given paths (relative to cwd), parsed; throws with stderr when it failed. */
export async function checkJsonOf(args: string[], cwd = REPO_ROOT): Promise<CheckJson> {
  const run = await runCli(['check', '--format', 'json', ...args], cwd);
  if (run.code === 2 || !run.out.trim().startsWith('{'))
    throw new Error(`check failed (exit ${run.code}): ${run.err}${run.out.slice(0, 400)}`);
  return JSON.parse(run.out) as CheckJson;
}

/** A fresh directory holding the given files (relative path -> text). */
export function sourceTree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-cli-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}
