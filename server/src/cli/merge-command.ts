/**
 * `cuda-occupancy merge FILE...`: the outputs of `check --shard K/N` runs (or of any checks of disjoint
 * files) joined into one, as one run over every file would print it. Each input is `check --format json`
 * output, SARIF (`--format sarif`), or a baseline (`baseline write`); all of one kind, with the same
 * target architectures. Files come out sorted by path, as check lists a folder's (for one folder given to
 * the sharded runs, the merged JSON is the whole run's); a file in two inputs is an error.
 */
import * as path from 'node:path';
import { UsageError, type CliIO } from './cli-io';
import { parseArgs } from './args';
import { readBoundedFileSync } from '../files/bounded-read';
import { BASELINE_FORMAT, kernelKey, launchKey, parseBaseline, type Baseline } from './baseline';
import type { CheckJson } from './check-json-types';

export const MERGE_USAGE = `usage: cuda-occupancy merge FILE...
  FILE: the output of a check --shard run (--format json or sarif) or a baseline; all of one kind. Printed: them joined.`;

const MAX_INPUT_BYTES = 512 * 1024 * 1024;

type Input =
  | { kind: 'json'; file: string; value: CheckJson }
  | { kind: 'sarif'; file: string; value: Sarif }
  | { kind: 'baseline'; file: string; value: Baseline };

interface SarifRun {
  tool: { driver: { rules?: Array<{ id: string }> } & Record<string, unknown> };
  results?: Array<{ ruleId?: string; ruleIndex?: number; locations?: SarifLocation[] } & Record<string, unknown>>;
  properties?: { archs?: string[] };
  [extra: string]: unknown;
}
interface SarifLocation {
  physicalLocation?: { artifactLocation?: { uri?: string } };
}
interface Sarif {
  version: string;
  runs: SarifRun[];
  [extra: string]: unknown;
}

export async function mergeCommand(args: string[], io: CliIO): Promise<number> {
  const { flags, positional } = parseArgs(args, { '--help': 'boolean' }, { '-h': '--help' });
  if (flags['--help']) {
    io.out(MERGE_USAGE + '\n');
    return 0;
  }
  if (positional.length === 0) throw new UsageError(`no files given\n${MERGE_USAGE}`);
  const inputs = positional.map((file) => readInput(file, io.cwd));
  const kinds = new Set(inputs.map((i) => i.kind));
  if (kinds.size > 1) throw new UsageError(`merge takes inputs of one kind, got ${[...kinds].join(' and ')}`);
  const merged =
    inputs[0].kind === 'json'
      ? mergeChecks(inputs.map((i) => i.value as CheckJson))
      : inputs[0].kind === 'sarif'
        ? mergeSarif(inputs.map((i) => i.value as Sarif))
        : mergeBaselines(inputs.map((i) => i.value as Baseline));
  io.out(JSON.stringify(merged, null, 2) + '\n');
  return 0;
}

function readInput(file: string, cwd: string): Input {
  let value: unknown;
  try {
    value = JSON.parse(readBoundedFileSync(path.resolve(cwd, file), { maxBytes: MAX_INPUT_BYTES }).text);
  } catch (error) {
    throw new UsageError(`${file}: ${(error as Error).message.replace(path.resolve(cwd, file), file)}`);
  }
  const v = value as Record<string, unknown> | null;
  if (v && v.format === BASELINE_FORMAT) {
    try {
      return { kind: 'baseline', file, value: parseBaseline(JSON.stringify(v)) };
    } catch (error) {
      throw new UsageError(`${file}: bad baseline: ${(error as Error).message}`);
    }
  }
  if (v && v.version === '2.1.0' && Array.isArray(v.runs) && v.runs.length === 1)
    return { kind: 'sarif', file, value: v as unknown as Sarif };
  if (v && typeof v.version === 'number' && Array.isArray(v.archs) && Array.isArray(v.files))
    return { kind: 'json', file, value: v as unknown as CheckJson };
  throw new UsageError(`${file}: neither check's JSON, SARIF of one run, nor a baseline`);
}

/** Paths in the order check lists a folder's files: name by name, each folder's entries sorted. */
export function comparePaths(a: string, b: string): number {
  const x = a.split(/[\\/]/);
  const y = b.split(/[\\/]/);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = x[i].localeCompare(y[i]);
    if (c !== 0) return c;
  }
  return x.length - y.length;
}

function sameArchs(all: ReadonlyArray<readonly string[]>): string[] {
  const first = all[0] ?? [];
  for (const archs of all)
    if (archs.join() !== first.join())
      throw new UsageError(
        `the inputs were checked for different architectures: ${first.join(',')} and ${archs.join(',')}`,
      );
  return [...first];
}

function noTwice(paths: readonly string[]): void {
  const seen = new Set<string>();
  for (const p of paths) {
    if (seen.has(p)) throw new UsageError(`${p} is in two inputs: the shards overlap`);
    seen.add(p);
  }
}

export function mergeChecks(checks: readonly CheckJson[]): CheckJson {
  const archs = sameArchs(checks.map((c) => c.archs));
  const files = checks.flatMap((c) => c.files);
  noTwice(files.map((f) => f.path));
  return { ...checks[0], archs, files: [...files].sort((a, b) => comparePaths(a.path, b.path)) };
}

export function mergeBaselines(baselines: readonly Baseline[]): Baseline {
  const archs = sameArchs(baselines.map((b) => b.archs));
  const kernels = baselines.flatMap((b) => b.kernels);
  const launches = baselines.flatMap((b) => b.launches);
  const byKey =
    <T>(key: (x: T) => string) =>
    (a: T, b: T) => {
      const [x, y] = [key(a), key(b)];
      return x < y ? -1 : x > y ? 1 : 0;
    };
  return {
    ...baselines[0],
    archs,
    kernels: kernels.sort(byKey((k) => kernelKey(k, true))),
    launches: launches.sort(byKey((l) => launchKey(l, true))),
  };
}

export function mergeSarif(logs: readonly Sarif[]): Sarif {
  const runs = logs.map((l) => l.runs[0]);
  sameArchs(runs.map((r) => r.properties?.archs ?? []));
  const rules: Array<{ id: string }> = [];
  const ruleIndex = new Map<string, number>();
  const results: NonNullable<SarifRun['results']> = [];
  const uriOf = (r: NonNullable<SarifRun['results']>[number]) =>
    r.locations?.[0]?.physicalLocation?.artifactLocation?.uri ?? '';
  const uris: string[] = [];
  for (const run of runs) {
    const own = run.tool.driver.rules ?? [];
    for (const rule of own) if (!ruleIndex.has(rule.id)) ruleIndex.set(rule.id, rules.push(rule) - 1);
    const inRun = new Set<string>();
    for (const result of run.results ?? []) {
      const id = result.ruleId ?? (result.ruleIndex !== undefined ? own[result.ruleIndex]?.id : undefined);
      results.push(id !== undefined && ruleIndex.has(id) ? { ...result, ruleIndex: ruleIndex.get(id) } : result);
      inRun.add(uriOf(result));
    }
    uris.push(...inRun);
  }
  noTwice(uris);
  // Stable: each file's results keep their order.
  const sorted = results
    .map((r, i) => ({ r, i }))
    .sort((a, b) => comparePaths(decodeURI(uriOf(a.r)), decodeURI(uriOf(b.r))) || a.i - b.i)
    .map((x) => x.r);
  return {
    ...logs[0],
    runs: [{ ...runs[0], tool: { ...runs[0].tool, driver: { ...runs[0].tool.driver, rules } }, results: sorted }],
  };
}
