/**
 * Builds ../shared/oracle (NVIDIA's cuda_occupancy.h behind a JSON line protocol) into a
 * temporary folder and runs it once over a batch of query lines.
 */

import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The repository root, from out/test/support/. */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');

/** Where the oracle's sources are: $OCC_ORACLE_DIR, else ../shared/oracle beside the checkout. */
export function oracleDir(): string {
  return process.env.OCC_ORACLE_DIR ?? path.resolve(repoRoot, '..', 'shared', 'oracle');
}

export type OracleBuild = { ok: true; binary: string } | { ok: false; reason: string };

/**
 * Builds the oracle. Returns a reason instead of a binary only when a prerequisite is
 * missing (the oracle's sources, g++ or cuda_occupancy.h); any other failure throws.
 */
export function buildOracle(): OracleBuild {
  const dir = oracleDir();
  const script = path.join(dir, 'build.sh');
  if (!fs.existsSync(script)) return { ok: false, reason: `no oracle at ${dir} (set OCC_ORACLE_DIR)` };
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'occupancy-oracle-'));
  const binary = path.join(out, 'oracle');
  try {
    execFileSync('bash', [script, binary], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '');
    if (/cuda_occupancy\.h not found|compiler .* not found/.test(stderr)) return { ok: false, reason: stderr.trim() };
    throw new Error(`building the oracle failed: ${stderr.trim()}`, { cause: e });
  }
  return { ok: true, binary };
}

/** Runs the oracle once over `lines` and returns its answer lines, in order. */
export function runOracle(binary: string, lines: readonly string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    const errors: Buffer[] = [];
    proc.stdout.on('data', (c: Buffer) => chunks.push(c));
    proc.stderr.on('data', (c: Buffer) => errors.push(c));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`oracle exited with ${code}: ${Buffer.concat(errors).toString()}`));
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      resolve(text.split('\n').filter((l) => l.length > 0));
    });
    proc.stdin.end(`${lines.join('\n')}\n`);
  });
}
