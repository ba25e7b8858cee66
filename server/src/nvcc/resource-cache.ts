/**
 * A cache of compile results keyed by everything that changes them: the file's content, the stamps
 * (mtime and size) of the headers it includes, the flags, the architecture and nvcc's version. Kept in
 * memory, and optionally as one JSON file per key in a per-user directory (0700, checked for owner and mode
 * before use) so that reopening a file is instant. An entry file carries the schema version, its key and a
 * checksum of its value; the value is validated before it is trusted, and a bad entry is deleted (the file is
 * then compiled again).
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readBoundedFile } from '../files/bounded-read';
import { walkIncludeClosure, type IncludeStamp } from './include-closure';

export type { IncludeStamp } from './include-closure';

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

/** Stamps of the headers a file includes, followed transitively (include-closure.ts). */
export async function collectIncludeStamps(options: {
  filePath: string;
  text?: string;
  includePaths?: readonly string[];
  maxFiles?: number;
}): Promise<IncludeStamp[]> {
  return (await walkIncludeClosure(options)).stamps;
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
  /**
   * Directory for the on-disk copy; none when omitted. Created (mode 0700) on first use, and used only while
   * it is a real directory (not a link) owned by this user that nobody else may read or write.
   */
  readonly dir?: string | null;
  /** Entries kept in memory (least recently used dropped first). Default 500. */
  readonly maxEntries?: number;
  /** Checks a value read from disk; invalid files are deleted (the directory is not trusted either). */
  readonly validate: (value: unknown) => value is T;
  /** The largest entry file read back. Default 64 MiB. */
  readonly maxEntryBytes?: number;
  /** Told once why the disk copy is not used (a directory of another user, or open to others). */
  readonly onProblem?: (message: string) => void;
}

const KEY_FORMAT = /^[0-9a-f]{64}$/;

/** The format of an entry file; entries of another schema are dropped (and compiled again). */
export const CACHE_SCHEMA = 2;

interface EntryFile {
  schema: number;
  key: string;
  /** sha256 of the JSON of `value`, as written. */
  checksum: string;
  value: unknown;
}

/**
 * The per-user cache directory: $XDG_CACHE_HOME/cuda-occupancy-lens, else ~/.cache/cuda-occupancy-lens
 * (%LOCALAPPDATA%\cuda-occupancy-lens on Windows). Never the shared temporary directory.
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === 'win32' && env.LOCALAPPDATA) return path.join(env.LOCALAPPDATA, 'cuda-occupancy-lens');
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'cuda-occupancy-lens');
}

/**
 * Makes `dir` (mode 0700) if it is missing, then checks it: a directory, not a symbolic link, owned by this
 * user, with no permission for group or others. Returns why it may not be used, or null.
 */
export async function privateDirectoryProblem(dir: string): Promise<string | null> {
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return `cannot create the cache directory ${dir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
  let stat;
  try {
    stat = await fs.lstat(dir);
  } catch (error) {
    return `cannot read the cache directory ${dir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
  if (stat.isSymbolicLink()) return `the cache directory ${dir} is a symbolic link: not used`;
  if (!stat.isDirectory()) return `the cache directory ${dir} is not a directory: not used`;
  if (process.platform === 'win32') return null;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    return `the cache directory ${dir} belongs to another user (uid ${stat.uid}): not used`;
  if ((stat.mode & 0o077) !== 0)
    return `the cache directory ${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}): not used; \`chmod 700\` it to use it`;
  return null;
}

function checksumOf(json: string): string {
  return createHash('sha256').update(json).digest('hex');
}

export class ResourceCache<T> {
  private readonly memory = new Map<string, T>();
  private readonly maxEntries: number;
  /** Whether the directory passed its check: checked once, on first use. */
  private directory: Promise<boolean> | null = null;

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
    if (!this.options.dir || !KEY_FORMAT.test(key) || !(await this.usable())) return undefined;
    const file = path.join(this.options.dir, `${key}.json`);
    let text: string;
    try {
      text = (await readBoundedFile(file, { maxBytes: this.options.maxEntryBytes ?? 64 * 1024 * 1024 })).text;
    } catch (error) {
      // Missing: a miss. Anything else (a FIFO, a device, a huge file) is not an entry: removed.
      if ((error as { code?: string }).code !== 'ENOENT') await fs.rm(file, { force: true }).catch(() => undefined);
      return undefined;
    }
    const value = this.entryValue(text, key);
    if (value === undefined) {
      await fs.rm(file, { force: true }).catch(() => undefined);
      return undefined;
    }
    this.remember(key, value);
    return value;
  }

  async set(key: string, value: T): Promise<void> {
    this.remember(key, value);
    if (!this.options.dir || !KEY_FORMAT.test(key) || !(await this.usable())) return;
    try {
      const target = path.join(this.options.dir, `${key}.json`);
      const temp = `${target}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`;
      const json = JSON.stringify(value);
      const entry: EntryFile = { schema: CACHE_SCHEMA, key, checksum: checksumOf(json), value: null };
      // The value's JSON is spliced in as written, so that the checksum covers exactly those bytes.
      const text = JSON.stringify(entry).replace(/"value":null\}$/, () => `"value":${json}}`);
      await fs.writeFile(temp, text, { flag: 'wx', mode: 0o600 });
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

  /** An entry file's value when it is of this schema, for this key, intact and valid; else undefined. */
  private entryValue(text: string, key: string): T | undefined {
    const at = text.indexOf('"value":');
    if (at < 0 || !text.endsWith('}')) return undefined;
    const valueJson = text.slice(at + '"value":'.length, -1);
    let head: Partial<EntryFile>;
    let value: unknown;
    try {
      head = JSON.parse(`${text.slice(0, at)}"value":null}`) as Partial<EntryFile>;
      value = JSON.parse(valueJson);
    } catch {
      return undefined;
    }
    if (head.schema !== CACHE_SCHEMA || head.key !== key || head.checksum !== checksumOf(valueJson)) return undefined;
    return this.options.validate(value) ? value : undefined;
  }

  private usable(): Promise<boolean> {
    this.directory ??= privateDirectoryProblem(this.options.dir!).then((problem) => {
      if (problem) this.options.onProblem?.(problem);
      return problem === null;
    });
    return this.directory;
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
