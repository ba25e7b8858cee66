/**
 * A cache of compile results keyed by everything that changes them: the file's content, the stamps
 * (mtime and size) of the headers it includes, the flags, the architecture and nvcc's version. Kept in
 * memory, and optionally as one JSON file per key in a directory so that reopening a file is instant.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface IncludeStamp {
  readonly path: string;
  /** null when the include could not be found (a later appearance must change the key). */
  readonly mtimeMs: number | null;
  readonly size: number | null;
}

export interface ResourceCacheKeyInput {
  /** The compiled file's content (what nvcc reads: the saved file). */
  readonly content: string | Buffer;
  readonly includes: readonly IncludeStamp[];
  readonly flags: readonly string[];
  readonly arch: string;
  readonly nvccPath: string;
  readonly nvccVersion: string;
}

const KEY_VERSION = 1;

/** The cache key: a sha256 over everything that can change ptxas's answer. Pure. */
export function resourceCacheKey(input: ResourceCacheKeyInput): string {
  const contentHash = createHash('sha256').update(input.content).digest('hex');
  const material = JSON.stringify({
    v: KEY_VERSION,
    content: contentHash,
    includes: [...input.includes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    flags: input.flags,
    arch: input.arch,
    nvccPath: input.nvccPath,
    nvccVersion: input.nvccVersion,
  });
  return createHash('sha256').update(material).digest('hex');
}

const INCLUDE_LINE = /^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)/gm;
const MAX_HEADER_BYTES = 8 * 1024 * 1024;

/**
 * Stamps of the headers a file includes, followed transitively: `#include "x"` is looked up next to the
 * including file and then in `includePaths`; `#include <x>` only in `includePaths` (system headers change
 * with the toolkit, whose version is part of the key). Bounded by `maxFiles`. Cheap: no preprocessor is run,
 * so includes under inactive `#if` branches count too (a harmless over-approximation).
 */
export async function collectIncludeStamps(options: {
  filePath: string; text?: string; includePaths?: readonly string[]; maxFiles?: number;
}): Promise<IncludeStamp[]> {
  const maxFiles = options.maxFiles ?? 256;
  const includePaths = options.includePaths ?? [];
  const stamps = new Map<string, IncludeStamp>();
  const queue: Array<{ file: string; text: string | null }> = [{ file: path.resolve(options.filePath), text: options.text ?? null }];
  const seen = new Set<string>([path.resolve(options.filePath)]);

  while (queue.length > 0 && stamps.size < maxFiles) {
    const { file, text: known } = queue.shift()!;
    let text = known;
    if (text === null) {
      try {
        const stat = await fs.stat(file);
        if (!stat.isFile() || stat.size > MAX_HEADER_BYTES) continue;
        text = await fs.readFile(file, 'utf8');
      } catch {
        continue;
      }
    }
    for (const match of text.matchAll(INCLUDE_LINE)) {
      const quoted = match[1];
      const name = quoted ?? match[2];
      const dirs = quoted ? [path.dirname(file), ...includePaths] : [...includePaths];
      let found: IncludeStamp | null = null;
      for (const dir of dirs) {
        const candidate = path.resolve(dir, name);
        try {
          const stat = await fs.stat(candidate);
          if (!stat.isFile()) continue;
          found = { path: candidate, mtimeMs: stat.mtimeMs, size: stat.size };
          break;
        } catch {
          // try the next directory
        }
      }
      if (!found) {
        if (quoted) stamps.set(`missing:${file}:${name}`, { path: `${name} (from ${file})`, mtimeMs: null, size: null });
        continue;
      }
      if (seen.has(found.path)) continue;
      seen.add(found.path);
      stamps.set(found.path, found);
      if (stamps.size >= maxFiles) break;
      queue.push({ file: found.path, text: null });
    }
  }
  return [...stamps.values()];
}

/** The `-I` and `-isystem` directories among nvcc flags (for `collectIncludeStamps`). Pure. */
export function includePathsOf(flags: readonly string[], cwd: string | null = null): string[] {
  const dirs: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i];
    let dir: string | null = null;
    if ((flag === '-I' || flag === '-isystem' || flag === '--include-path') && i + 1 < flags.length) dir = flags[++i];
    else if (flag.startsWith('--include-path=')) dir = flag.slice('--include-path='.length);
    else if (flag.startsWith('-I') && flag.length > 2) dir = flag.slice(2);
    if (dir) dirs.push(cwd ? path.resolve(cwd, dir) : dir);
  }
  return dirs;
}

export interface ResourceCacheOptions<T> {
  /** Directory for the on-disk copy; none when omitted. Created on first write. */
  readonly dir?: string | null;
  /** Entries kept in memory (least recently used dropped first). Default 500. */
  readonly maxEntries?: number;
  /** Checks a value read from disk; invalid files are ignored (the directory is not trusted either). */
  readonly validate: (value: unknown) => value is T;
}

const KEY_FORMAT = /^[0-9a-f]{64}$/;

export class ResourceCache<T> {
  private readonly memory = new Map<string, T>();
  private readonly maxEntries: number;

  constructor(private readonly options: ResourceCacheOptions<T>) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 500);
  }

  async get(key: string): Promise<T | undefined> {
    const hit = this.memory.get(key);
    if (hit !== undefined) {
      this.memory.delete(key);
      this.memory.set(key, hit);
      return hit;
    }
    if (!this.options.dir || !KEY_FORMAT.test(key)) return undefined;
    try {
      const text = await fs.readFile(path.join(this.options.dir, `${key}.json`), 'utf8');
      const value: unknown = JSON.parse(text);
      if (!this.options.validate(value)) return undefined;
      this.remember(key, value);
      return value;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: T): Promise<void> {
    this.remember(key, value);
    if (!this.options.dir || !KEY_FORMAT.test(key)) return;
    try {
      await fs.mkdir(this.options.dir, { recursive: true });
      const target = path.join(this.options.dir, `${key}.json`);
      const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
      await fs.writeFile(temp, JSON.stringify(value));
      await fs.rename(temp, target);
    } catch {
      // The disk copy is an optimisation; memory still holds the value.
    }
  }

  /** Drops everything in memory (the disk copy stays). */
  clearMemory(): void {
    this.memory.clear();
  }

  get size(): number {
    return this.memory.size;
  }

  private remember(key: string, value: T): void {
    this.memory.delete(key);
    this.memory.set(key, value);
    while (this.memory.size > this.maxEntries) {
      const oldest = this.memory.keys().next().value as string;
      this.memory.delete(oldest);
    }
  }
}
