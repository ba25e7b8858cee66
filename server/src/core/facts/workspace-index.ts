/**
 * The workspace index: per-file facts (kernels, header declarations included, launches, opt-ins to
 * more dynamic shared memory, `#include` lines) keyed by path. Updating one file re-reads only that
 * file's text; lookups walk a file's includes transitively, then the rest of the workspace, so a
 * launch in `main.cu` finds its kernel in `kernels.cuh`.
 *
 * Pure: the caller reads files (see ../workspace-files.ts) and hands in text, and says how a file
 * is read (`read`: the semantic core's reading of the file as its own unit, see
 * incremental/file-alone.ts). Paths are plain strings with `/` separators.
 */
import type { Kernel, Launch, SmemOptIn, Span } from '../types';
import { makeSourceText, spanOf, type SourceText } from '../text/source-text';
import { findDirectiveRanges } from '../text/preprocessor-lines';
import { ownCopy, plainCopy } from '../incremental/engine-seams';

/**
 * `skipOwnEntry`: the caller analyses the file's current text itself (an open
 * document); the index's entry for it follows saves and may be older.
 */
export interface OwnEntryOption {
  skipOwnEntry?: boolean;
}

export interface IncludeLine {
  /** As written between the quotes or brackets: `../common/config.h`. */
  target: string;
  /** `#include <...>`: looked up only in the include directories. */
  system: boolean;
  span: Span;
}

export interface FileFacts {
  path: string;
  /** Bumped on every update of this path. */
  generation: number;
  kernels: Kernel[];
  includes: IncludeLine[];
  smemOptIns: SmemOptIn[];
  /** The file's launches, as much as a quick fix needs of other files' (see IndexedLaunch). */
  launches: IndexedLaunch[];
  /**
   * Its kernels, launches and opt-ins are not read yet (they are empty): an index reads a file when
   * first asked about it (most files of a workspace are never asked about), and an entry loaded
   * unread is read by the index that loads it.
   */
  unread?: true;
}

/** A file's entry as another index loads it: its facts and its text (the units that include it read it). */
export type IndexEntry = FileFacts & { text?: string | null };

/** A launch as the index keeps it: the kernel it names, its line, and its threads per block when the source fixes them. */
export interface IndexedLaunch {
  kernelName: string;
  /** The function it is written in (a launcher another unit may call), or null at file scope. */
  functionName?: string | null;
  /** What it launches derives from that function's parameters (see Launch.fromParameters). */
  fromParameters?: true;
  /** 0-based. */
  line: number;
  threads: number | null;
}

/** What the index keeps of a file, as the semantic core read it. */
export interface AnalysedFile {
  source: SourceText;
  kernels: Kernel[];
  smemOptIns: SmemOptIn[];
  launches?: readonly Launch[];
}

/** A file's kernels, launches and opt-ins, read from its text alone (see WorkspaceIndexOptions.read). */
export type FileReader = (path: string, text: string) => Omit<AnalysedFile, 'source'>;

export interface KernelRef {
  kernel: Kernel;
  path: string;
}

export interface KernelMatch {
  /** The kernel a launch runs, or null when none or several match. */
  kernel: Kernel | null;
  /** Where the kernel is defined (or declared, when no definition is indexed). */
  path: string | null;
  /** Where its `__launch_bounds__` is written (a header declaration may carry it), for related information. */
  boundsPath: string | null;
  /** Every kernel with a matching name in the tier that decided (for a note when ambiguous). */
  candidates: KernelRef[];
  /** How it was found or why not: `kernels.cuh (included)`, `2 kernels named k`. */
  note: string;
}

export interface WorkspaceIndexOptions {
  /** Directories searched for `#include "..."` after the including file's own (`-I`), relative or absolute. */
  includeDirs?: readonly string[];
  /** How a file's text is read (without one, the index keeps only its text and includes). */
  read?: FileReader;
}

export class WorkspaceIndex {
  private readonly files = new Map<string, FileFacts>();
  private readonly includeDirs: string[];
  private includeDirsFor: (path: string) => readonly string[] = () => [];
  private generation = 0;
  /** Updates and removals per path (see changesOutside). */
  private readonly changedAt = new Map<string, number>();
  /** Paths whose entry holds the objects of an analysis still in use (see keepCopies). */
  private readonly borrowed = new Set<string>();
  /** The indexed paths by file name (for includes found by their tail), worked out when first asked after a change. */
  private byName: Map<string, string[]> | null = null;
  /** Who includes each file directly (see includersOf), worked out when first asked after a change. */
  private includedBy: Map<string, string[]> | null = null;
  /**
   * Each file's include closure once asked, until a file changes: a file's analysis asks for it
   * per launch and per constant view, and in a whole repository each asking resolves every include again.
   */
  private readonly closures = new Map<string, readonly string[]>();
  /** paths(), sorted once after a change: the workspace tier of every launch's kernel lookup reads it. */
  private sortedPaths: readonly string[] | null = null;

  /** Each file's text, for the preprocessor of the units that include it. */
  private readonly texts = new Map<string, string>();

  private readonly read: FileReader | null;

  constructor(options: WorkspaceIndexOptions = {}) {
    this.includeDirs = (options.includeDirs ?? []).map(normalizePath);
    this.read = options.read ?? null;
  }

  /** An empty index that reads files as this one does (a worker thread's share of the files, say). */
  emptyLike(): WorkspaceIndex {
    return new WorkspaceIndex({ includeDirs: this.includeDirs, ...(this.read ? { read: this.read } : {}) });
  }

  /** The text a file was last indexed from, or null. */
  text(path: string): string | null {
    return this.texts.get(normalizePath(path)) ?? null;
  }

  /** Indexed files whose path ends with `/tail` (an include found by its tail when no folder given says where). */
  withTail(tail: string): string[] {
    const wanted = '/' + normalizePath(tail).replace(/^(\.\.\/)+/, '');
    return this.filesNamed(baseName(wanted)).filter((p) => p.endsWith(wanted) || p === wanted.slice(1));
  }

  /** The include folders a file is compiled with: the index's, then its own (`-I` of its compile command). */
  includeDirsOf(path: string): string[] {
    const from = normalizePath(path);
    return [...new Set([...this.includeDirs, ...this.includeDirsFor(from).map(normalizePath)])];
  }

  /**
   * Index (or re-index) one file from its text; its kernels, launches and opt-ins are read when first
   * asked (`get`). Other files are not touched.
   */
  update(path: string, text: string): void {
    const facts = this.set(path, { kernels: [], smemOptIns: [], launches: [] }, makeSourceText(text));
    facts.unread = true;
  }

  /** The entry of `key` with its kernels, launches and opt-ins read (see update). */
  private readEntry(key: string): FileFacts | undefined {
    const facts = this.files.get(key);
    if (!facts?.unread || !this.read) return facts;
    delete facts.unread;
    const text = this.texts.get(key);
    if (text === undefined) return facts;
    try {
      // Read for the index alone: its strings are cut from the whole text, which copies let go.
      const read = this.read(key, text);
      Object.assign(facts, keptCopy(read), { launches: indexedLaunches(read.launches ?? []) });
    } catch {
      // A file the core cannot read (input nested past the stack) gives other files nothing; its own
      // analysis, when it is checked, says why.
    }
    return facts;
  }

  /**
   * Index an open document from its analysis (analyzeDocument's facts), without reading its text
   * again. The entry holds the analysis's own objects, no copies (a keystroke pays nothing for
   * them), until `keepCopies` is called for it: call that when the analysis is dropped.
   */
  updateFromAnalysis(path: string, analysed: AnalysedFile): FileFacts {
    const facts = this.set(path, analysed, analysed.source);
    this.borrowed.add(facts.path);
    return facts;
  }

  /**
   * The analysis `path` was indexed from is dropped (forgotten, out of use): the entry keeps copies
   * of its kernels and opt-ins instead. The analysis's objects are keys of other caches'
   * WeakMaps (per-kernel keys, launch targets), which the index would otherwise keep alive for every
   * indexed file, with the chunk texts their strings were cut from: about 2.5 MB per 10k-line file.
   * What other files see does not change.
   */
  keepCopies(path: string): void {
    const key = normalizePath(path);
    const facts = this.files.get(key);
    if (!facts || !this.borrowed.delete(key)) return;
    Object.assign(facts, keptCopy(facts));
    this.forgetDerived(); // they hold the definitions
  }

  private set(
    path: string,
    { kernels, smemOptIns, launches }: Omit<AnalysedFile, 'source'>,
    source: SourceText,
  ): FileFacts {
    const key = normalizePath(path);
    this.texts.set(key, ownCopy(source.text));
    const facts: FileFacts = {
      path: key,
      generation: ++this.generation,
      kernels,
      includes: findIncludes(source),
      smemOptIns,
      launches: indexedLaunches(launches ?? []),
    };
    this.files.set(key, facts);
    this.borrowed.delete(key);
    this.changedAt.set(key, (this.changedAt.get(key) ?? 0) + 1);
    this.forgetDerived();
    return facts;
  }

  /**
   * Lets go of a file's text when its entry has been read (the entry is what other files read of
   * it) and no indexed file includes it: a check of a whole repository then does not hold every
   * file's text to the end. An entry not read yet keeps its text, which is smaller than the entry
   * it would be read into (most entries are never asked for). A unit that includes the file after
   * all (through a folder only its compile command names) reads it from its file source. Nothing
   * derived changes. Whether it was let go.
   */
  releaseText(path: string): boolean {
    const key = normalizePath(path);
    const facts = this.files.get(key);
    if (!facts || facts.unread || this.includersOf(key).length > 0) return false;
    return this.texts.delete(key);
  }

  /** Reads every file not read yet: what a caller does before the reader can no longer run (its parser freed). */
  readAll(): void {
    for (const key of this.files.keys()) this.readEntry(key);
  }

  /** A file's entry and text as indexed, read or not (see FileFacts.unread): plain data, for another index to `load`. */
  entry(path: string): IndexEntry | undefined {
    const key = normalizePath(path);
    const facts = this.files.get(key);
    return facts ? { ...facts, text: this.texts.get(key) ?? null } : undefined;
  }

  /** Every file's entry and text, in the order the files were first indexed: plain data, for another index to `load`. */
  entries(): IndexEntry[] {
    return [...this.files.values()].map((f) => ({ ...f, text: this.texts.get(f.path) ?? null }));
  }

  /**
   * Index the files of `entries` (in that order, after those already indexed) as another index
   * built them from their texts (its `update`, then `entries`): what a worker thread's index is
   * given instead of reading every file again. The entries are taken as they are.
   */
  load(entries: readonly IndexEntry[]): void {
    for (const { text, ...facts } of entries) {
      const key = normalizePath(facts.path);
      if (text !== null && text !== undefined) this.texts.set(key, text);
      this.files.set(key, { ...facts, path: key, generation: ++this.generation });
      this.borrowed.delete(key);
      this.changedAt.set(key, (this.changedAt.get(key) ?? 0) + 1);
    }
    this.forgetDerived();
  }

  remove(path: string): void {
    const key = normalizePath(path);
    this.texts.delete(key);
    this.borrowed.delete(key);
    if (!this.files.delete(key)) return;
    this.forgetDerived();
    this.generation++;
    this.changedAt.set(key, (this.changedAt.get(key) ?? 0) + 1);
  }

  /**
   * Grows with every update and removal of a file other than `path`: what the index can answer
   * a document at `path` about the rest of the workspace may have changed.
   */
  changesOutside(path: string): number {
    return this.generation - (this.changedAt.get(normalizePath(path)) ?? 0);
  }

  get(path: string): FileFacts | undefined {
    return this.readEntry(normalizePath(path));
  }

  paths(): string[] {
    this.sortedPaths ??= [...this.files.keys()].sort();
    return [...this.sortedPaths];
  }

  /**
   * Directories searched for the includes of each file after its own folder and the index's
   * include directories: the `-I` folders of its compile command. Set by whoever reads them.
   */
  setIncludeDirs(dirsFor: (path: string) => readonly string[]): void {
    this.includeDirsFor = dirsFor;
    this.forgetDerived();
  }

  /** Where an `#include` of `fromPath` may name a file, nearest first: beside it (`"..."` only), then the include directories. */
  includeCandidates(fromPath: string, include: Pick<IncludeLine, 'target' | 'system'>): string[] {
    const from = normalizePath(fromPath);
    const own = this.includeDirsFor(from).map(normalizePath);
    const dirs = include.system ? [...this.includeDirs, ...own] : [dirName(from), ...this.includeDirs, ...own];
    return [...new Set(dirs.map((dir) => normalizePath(dir ? `${dir}/${include.target}` : include.target)))];
  }

  /** The indexed file an `#include` names, or null (system headers, files outside the index). */
  resolveInclude(fromPath: string, include: Pick<IncludeLine, 'target' | 'system'>): string | null {
    for (const candidate of this.includeCandidates(fromPath, include)) if (this.files.has(candidate)) return candidate;
    // A system include of a workspace path (`<proj/util/x.cuh>`) may name one of its files too; `<vector>` never does.
    if (include.system && !include.target.includes('/')) return null;
    // Not beside the file nor under an include directory: a unique indexed file with that tail (a -I we were not told).
    const tail = '/' + normalizePath(include.target).replace(/^(\.\.\/)+/, '');
    const matches = this.filesNamed(baseName(tail)).filter((p) => p.endsWith(tail) || p === tail.slice(1));
    return matches.length === 1 ? matches[0] : null;
  }

  /**
   * The folders where the unit of `path` found includes by their tail alone, no folder given saying
   * where (cuda-samples' `"helper_cuda.h"` in `Common/`): what a compiler of the unit must be told
   * with `-I`. An include that climbs (`../x.h`) or names an absolute path tells no such folder.
   */
  inferredIncludeDirs(path: string): string[] {
    const out = new Set<string>();
    const start = normalizePath(path);
    for (const file of [start, ...this.includeClosure(start)])
      for (const include of this.files.get(file)?.includes ?? []) {
        if (include.target.startsWith('.') || include.target.startsWith('/')) continue;
        if (this.includeCandidates(file, include).some((c) => this.files.has(c))) continue;
        const found = this.resolveInclude(file, include) === null ? null : this.folderHolding(include.target);
        if (found !== null) out.add(found);
      }
    return [...out];
  }

  /**
   * The folder that holds `header` as an include writes it (`detail/x.h`), where exactly one indexed
   * file ends so: the `-I` a compiler that cannot find it needs. Null for a climbing or absolute path.
   */
  folderHolding(header: string): string | null {
    if (header.startsWith('.') || header.startsWith('/')) return null;
    const tail = '/' + normalizePath(header);
    const matches = this.withTail(header);
    return matches.length === 1 && matches[0].endsWith(tail) ? matches[0].slice(0, -tail.length) || '/' : null;
  }

  /** The indexed files `path` includes, directly or not, nearest first; `path` itself is not listed. */
  includeClosure(path: string): string[] {
    const start = normalizePath(path);
    let closure = this.closures.get(start);
    if (!closure) this.closures.set(start, (closure = this.closureOf(start)));
    return [...closure];
  }

  private closureOf(start: string): string[] {
    const seen = new Set([start]);
    const order: string[] = [];
    const queue = [start];
    while (queue.length) {
      const current = queue.shift()!;
      for (const include of this.files.get(current)?.includes ?? []) {
        const target = this.resolveInclude(current, include);
        if (target && !seen.has(target)) {
          seen.add(target);
          order.push(target);
          queue.push(target);
        }
      }
    }
    return order;
  }

  private filesNamed(name: string): string[] {
    if (!this.byName) {
      this.byName = new Map();
      for (const p of this.files.keys()) {
        const list = this.byName.get(baseName(p));
        if (list) list.push(p);
        else this.byName.set(baseName(p), [p]);
      }
    }
    return this.byName.get(name) ?? [];
  }

  /**
   * The indexed files that include `path`, directly or not, nearest first (`path` itself is not
   * listed): the translation units that may compile a header's kernels are among them.
   */
  includersOf(path: string): string[] {
    if (!this.includedBy) {
      const by = new Map<string, string[]>();
      for (const [file, facts] of this.files) {
        for (const include of facts.includes) {
          const target = this.resolveInclude(file, include);
          if (!target || target === file) continue;
          const list = by.get(target) ?? [];
          if (!list.includes(file)) list.push(file);
          by.set(target, list);
        }
      }
      this.includedBy = by;
    }
    const start = normalizePath(path);
    const seen = new Set([start]);
    const order: string[] = [];
    const queue = [start];
    while (queue.length) {
      for (const includer of this.includedBy.get(queue.shift()!) ?? []) {
        if (seen.has(includer)) continue;
        seen.add(includer);
        order.push(includer);
        queue.push(includer);
      }
    }
    return order;
  }

  /** What is worked out from every file: worked out again when next asked, after a file changed. */
  private forgetDerived(): void {
    this.includedBy = null;
    this.byName = null;
    this.closures.clear();
    this.sortedPaths = null;
  }

  /** The kernel a launch of `name` (`k`, `ns::k`) written in `path` runs: this file, then its includes, then the workspace. */
  findKernel(path: string, name: string, { skipOwnEntry = false }: OwnEntryOption = {}): KernelMatch {
    const here = normalizePath(path);
    const tiers: Array<{ paths: string[]; label: (p: string) => string }> = [
      ...(skipOwnEntry ? [] : [{ paths: [here], label: () => 'this file' }]),
      { paths: this.includeClosure(here), label: (p) => `${baseName(p)} (included)` },
      { paths: this.paths().filter((p) => p !== here), label: (p) => `${p} (in the workspace, not included)` },
    ];
    for (const tier of tiers) {
      const refs: KernelRef[] = [];
      for (const p of tier.paths)
        if (this.mayName(p, name))
          for (const kernel of this.readEntry(p)?.kernels ?? []) refs.push({ kernel, path: p });
      const match = matchKernel(refs, name, tier.label);
      if (match?.kernel && !match.kernel.isDefinition) return this.withDefinition(match);
      if (match) return match;
    }
    return {
      kernel: null,
      path: null,
      boundsPath: null,
      candidates: [],
      note: `no kernel named \`${name}\` in this file, its includes or the workspace`,
    };
  }

  /** A header declaration completed by its one definition elsewhere in the workspace (body, shared memory). */
  private withDefinition(match: KernelMatch): KernelMatch {
    const declared = match.kernel!;
    const definitions: KernelRef[] = [];
    for (const p of this.files.keys())
      if (this.mayName(p, declared.name))
        for (const kernel of this.readEntry(p)!.kernels)
          if (kernel.isDefinition && kernel.qualifiedName === declared.qualifiedName)
            definitions.push({ kernel, path: p });
    if (definitions.length !== 1) return match;
    const [definition] = definitions;
    const ownBounds = definition.kernel.launchBounds;
    return {
      ...match,
      kernel: ownBounds ? definition.kernel : { ...definition.kernel, launchBounds: declared.launchBounds },
      path: definition.path,
      boundsPath: ownBounds ? definition.path : match.boundsPath,
      note: `${match.note}, defined in ${baseName(definition.path)}`,
    };
  }

  /**
   * The `.cu` files that include the header `path` (directly or not), those that launch one of its
   * kernels first, each group nearest first: the unit a header is read in is the first, so that its
   * kernels take the block shapes and template arguments a launch gives them, not a unit that only
   * declares a launcher (`mmha_launch_kernel<T, 128>(...)`, defined in another `.cu`). A `.cu`
   * another `.cu` includes (`#include "kernel.cu"`, a program split into pieces) is compiled only
   * as part of it: the units are the outermost, and a source file read in one is such a piece.
   */
  unitsFor(path: string): string[] {
    const including = this.includersOf(path).filter((p) => /\.cu$/i.test(p));
    const outermost = including.filter((u) => !this.includersOf(u).some((p) => /\.cu$/i.test(p)));
    const units = outermost.length > 0 ? outermost : including;
    if (units.length <= 1) return units;
    const names = new Set((this.get(path)?.kernels ?? []).map((k) => k.name.replace(/^.*::/, '')));
    if (names.size === 0) return units;
    const launches = (unit: string) =>
      [...names].some(
        (name) =>
          this.mayName(unit, name) &&
          (this.readEntry(unit)?.launches ?? []).some((l) => l.kernelName.replace(/^.*::/, '') === name),
      );
    const launching = units.filter(launches);
    return [...launching, ...units.filter((u) => !launching.includes(u))];
  }

  /** Launches in the indexed files of a kernel named `name` (by its last component: a quick fix's warning may over-approximate). */
  launchesNamed(name: string): Array<{ path: string; launch: IndexedLaunch }> {
    const base = name.replace(/^.*::/, '');
    const out: Array<{ path: string; launch: IndexedLaunch }> = [];
    for (const p of this.files.keys())
      if (this.mayName(p, base))
        for (const launch of this.readEntry(p)!.launches)
          if (launch.kernelName.replace(/^.*::/, '') === base) out.push({ path: p, launch });
    return out;
  }

  /**
   * The files that include `header` (directly or not) and name `name`, nearest first: where a
   * linker looks for the definition of a function the header declares.
   */
  includersNaming(header: string, name: string): string[] {
    return this.includersOf(header).filter((p) => this.mayName(p, name));
  }

  /**
   * The names of the functions the indexed files launch a kernel in with what their parameters
   * give (each file read alone): the workspace's launchers whose calls tell more of the launch.
   */
  launcherNames(): Set<string> {
    const out = new Set<string>();
    for (const p of this.files.keys())
      for (const l of this.readEntry(p)?.launches ?? [])
        if (l.functionName && l.fromParameters) out.add(l.functionName.replace(/^.*::/, ''));
    return out;
  }

  /** The files that launch a kernel in a function named `name` (its last component), read alone. */
  launchersNamed(name: string): string[] {
    const base = name.replace(/^.*::/, '');
    return this.paths().filter(
      (p) =>
        this.mayName(p, base) &&
        (this.readEntry(p)?.launches ?? []).some((l) => l.functionName?.replace(/^.*::/, '') === base),
    );
  }

  /**
   * Whether the file's text holds the name at all: one that does not declares no kernel of that
   * name and launches none (short of pasting it with `##`), and is not read to find out.
   */
  private mayName(path: string, name: string): boolean {
    const plain = name.replace(/<.*$/, '');
    return this.texts.get(path)?.includes(plain.slice(plain.lastIndexOf(':') + 1)) ?? true;
  }

  /** `cudaFuncSetAttribute(..., MaxDynamicSharedMemorySize, ...)` calls in `path` and its includes. */
  smemOptInsInView(path: string): SmemOptIn[] {
    return [normalizePath(path), ...this.includeClosure(path)].flatMap((p) => this.smemOptInsOf(p));
  }

  /** A file's opt-ins; one whose text never names `cudaFuncSetAttribute` has none, and is not read to find out. */
  smemOptInsOf(path: string): SmemOptIn[] {
    const key = normalizePath(path);
    if (this.files.get(key)?.unread && !this.mayName(key, 'cudaFuncSetAttribute')) return [];
    return this.readEntry(key)?.smemOptIns ?? [];
  }
}

/**
 * The one kernel among `refs` a launch of `name` names, merging a header
 * declaration with its definition. Null when nothing matches; a match with
 * `kernel: null` when several different kernels do (null beats wrong).
 */
export function matchKernel(
  refs: readonly KernelRef[],
  name: string,
  label: (path: string) => string = (p) => p,
): KernelMatch | null {
  const wanted = name.replace(/^::/, '');
  const matching = refs.filter(({ kernel }) => namesSameKernel(kernel.qualifiedName, wanted));
  if (matching.length === 0) return null;
  if (matching.length === 1) {
    // One candidate (most launches): what the general case below gives for it.
    const [only] = matching;
    return {
      kernel: only.kernel,
      path: only.path,
      boundsPath: only.kernel.launchBounds ? only.path : null,
      candidates: matching,
      note: label(only.path),
    };
  }
  const names = new Set(matching.map((r) => r.kernel.qualifiedName));
  if (names.size > 1) {
    return {
      kernel: null,
      path: null,
      boundsPath: null,
      candidates: matching,
      note: `${names.size} kernels could be \`${name}\`: ${[...names].join(', ')}`,
    };
  }
  const definitions = matching.filter((r) => r.kernel.isDefinition);
  const bounds = new Set(
    matching.map((r) => r.kernel.launchBounds?.text.replace(/\s+/g, '')).filter((t) => t !== undefined),
  );
  if (definitions.length > 1 && bounds.size > 1) {
    return {
      kernel: null,
      path: null,
      boundsPath: null,
      candidates: matching,
      note: `${definitions.length} overloads of \`${name}\` with different launch bounds`,
    };
  }
  const chosen = definitions[0] ?? matching[0];
  const withBounds = chosen.kernel.launchBounds ? chosen : (matching.find((r) => r.kernel.launchBounds) ?? chosen);
  const kernel =
    withBounds === chosen ? chosen.kernel : { ...chosen.kernel, launchBounds: withBounds.kernel.launchBounds };
  return {
    kernel,
    path: chosen.path,
    boundsPath: kernel.launchBounds ? withBounds.path : null,
    candidates: matching,
    note: label(chosen.path),
  };
}

/** `ns::k` is `k`, `ns::k` or `outer::ns::k`: one name is the other or ends with `::` and the other. */
function namesSameKernel(qualified: string, wanted: string): boolean {
  // Called for every kernel at every launch: compare without building strings.
  return qualified === wanted || endsWithScoped(qualified, wanted) || endsWithScoped(wanted, qualified);
}

/** `name` ends with `::` + `tail`. */
function endsWithScoped(name: string, tail: string): boolean {
  const at = name.length - tail.length;
  return at >= 2 && name.charCodeAt(at - 1) === 58 && name.charCodeAt(at - 2) === 58 && name.endsWith(tail);
}

function findIncludes(source: ReturnType<typeof makeSourceText>): IncludeLine[] {
  const out: IncludeLine[] = [];
  // `#define`, `#pragma`: most directives. The next `include` of the text is looked for once and
  // kept, not in a copy of each directive line (nor from each of them to the end of the text).
  let next = source.text.indexOf('include');
  for (const [start, end] of findDirectiveRanges(source)) {
    if (next < start) next = source.text.indexOf('include', start);
    if (next < 0) break;
    if (next + 'include'.length > end) continue;
    const line = source.text.slice(start, end);
    const m = /^\s*#\s*include\s*(?:"([^"\n]+)"|<([^>\n]+)>)/.exec(line);
    if (!m) continue;
    out.push({
      target: ownCopy((m[1] ?? m[2]).trim()),
      system: m[1] === undefined,
      span: spanOf(source, start + m.index, start + m[0].length),
    });
  }
  return out;
}

/**
 * A file's kernels and opt-ins as plain copies (see plainCopy), holding nothing of the
 * objects and the text they were read from.
 */
function keptCopy({
  kernels,
  smemOptIns,
}: Pick<FileFacts, 'kernels' | 'smemOptIns'>): Pick<FileFacts, 'kernels' | 'smemOptIns'> {
  return { kernels: plainCopy(kernels), smemOptIns: plainCopy(smemOptIns) };
}

/** The launches as the index keeps them: fresh strings and numbers, nothing of the analysis they came from. */
function indexedLaunches(launches: readonly Launch[]): IndexedLaunch[] {
  return launches
    .filter((l) => !l.inMacro)
    .map((l) => ({
      kernelName: ownCopy(l.kernelName),
      functionName: l.enclosingFunction ? ownCopy(l.enclosingFunction) : null,
      ...(l.fromParameters ? { fromParameters: true as const } : {}),
      line: l.span.start.line,
      threads: l.block.value ? l.block.value.x * l.block.value.y * l.block.value.z : null,
    }));
}

const NOT_NORMAL = /\\|\/\/|(?:^|\/)\.\.?(?:\/|$)|\/$/;

/** `a/./b/../c.h` -> `a/c.h`, backslashes to slashes; keeps a leading `/` or `..`. */
export function normalizePath(path: string): string {
  // Most paths asked about are already normal (the index's own keys): no `.`, `..` or empty part, no backslash.
  if (!NOT_NORMAL.test(path)) return path;
  const absolute = path.startsWith('/') || path.startsWith('\\');
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length && parts[parts.length - 1] !== '..') parts.pop();
    else if (part === '..' && absolute) continue;
    else parts.push(part);
  }
  return (absolute ? '/' : '') + parts.join('/');
}

function dirName(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : i === 0 ? '/' : path.slice(0, i);
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
