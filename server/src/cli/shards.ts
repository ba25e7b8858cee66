/**
 * `check --shard K/N`: a repository split the way test runners split a suite, for CI machines that
 * each check a part. A file's shard is a hash of its path relative to the working directory (sha256,
 * first 32 bits, modulo N): the same on every machine and run, independent of which other files
 * exist, so adding a file moves no other. The shards are disjoint and together hold every file;
 * every shard still indexes the whole repository, so a file's results are those of a whole run.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { UsageError } from './cli-io';

export interface Shard {
  /** 1-based, as written. */
  index: number;
  count: number;
}

/** `K/N` with 1 ≤ K ≤ N. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count || count > 100_000)
    throw new UsageError(`--shard needs K/N with 1 <= K <= N (e.g. 2/4), got ${text}`);
  return { index, count };
}

/** The shard (1-based) a file belongs to among `count`. */
export function shardOf(file: string, cwd: string, count: number): number {
  const relative = path.relative(cwd, path.resolve(cwd, file)).split(path.sep).join('/');
  const hash = createHash('sha256').update(relative).digest().readUInt32BE(0);
  return (hash % count) + 1;
}

export function inShard(file: string, cwd: string, shard: Shard): boolean {
  return shardOf(file, cwd, shard.count) === shard.index;
}
