/**
 * The workspace index: per-file facts (kernels, header declarations included,
 * object-like `#define`s, consts, enumerators, `#include "..."` lines) keyed by
 * path. Updating one file re-reads only that file's text; lookups walk a file's
 * includes transitively, then the rest of the workspace, so a launch in
 * `main.cu` finds its kernel in `kernels.cuh` and `BLOCK` in `config.h`.
 *
 * Pure: the caller reads files (see ../workspace-files.ts) and hands in text.
 * Paths are plain strings with `/` separators.
 */
import type { Kernel, Launch, LaunchBounds, SmemOptIn, Span } from '../types';
import { makeSourceText, spanOf, type SourceText } from '../text/source-text';
import { findKernels, resolveLaunchBounds } from './kernel-finder';
import { findLaunchFacts, findSmemOptIns } from './launch-finder';
import { wrappersByName, type WrapperDefinition, type WrapperRef } from './launch-wrappers';
import { collectConstants, makeLookup, type ConstantDefinition, type ConstantTable } from '../text/constant-table';
import { findDirectiveRanges } from '../text/preprocessor-lines';
import type { Lookup } from '../text/const-eval';
import type { MacroDefinition } from '../text/macros';
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
  /** File-scope constants: object-like macros, consts, enumerators. */
  constants: ConstantTable;
  includes: IncludeLine[];
  smemOptIns: SmemOptIn[];
  /** The file's launches, as much as a quick fix needs of other files' (see IndexedLaunch). */
  launches: IndexedLaunch[];
  /** The launch wrappers its functions are (see launch-wrappers.ts). */
  wrappers: WrapperDefinition[];
}

/** A file's entry as another index loads it: its facts and its text (the units that include it read it). */
export type IndexEntry = FileFacts & { text?: string | null };

/** A launch as the index keeps it: the kernel it names, its line, and its threads per block when the source fixes them. */
export interface IndexedLaunch {
  kernelName: string;
  /** 0-based. */
  line: number;
  threads: number | null;
}

/** What the index keeps of a file, as the text passes found it. */
export interface AnalysedFile {
  source: SourceText;
  constants: ConstantTable;
  kernels: Kernel[];
  smemOptIns: SmemOptIn[];
  launches?: readonly Launch[];
  wrappers?: WrapperDefinition[];
}

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
}

export interface ConstantView {
  /** Constants of the file's includes (transitively), then ones defined once in the workspace. */
  lookup: Lookup;
  /** Function-like macros of the file's includes (nearest first), then ones defined once in the workspace. */
  macros: ReadonlyMap<string, MacroDefinition>;
  /** Launch wrappers of the file's includes, then ones only one file of the workspace defines, by name. */
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>;
  /** `BLOCK = 256 (#define, config.h:3)`, or null when the index has no such name. */
  describe: (name: string) => string | null;
}

/** Constant views kept (see WorkspaceIndex.views): an edited document's, and the headers its launches' kernels are in. */
const VIEWS_KEPT = 4;

/** Where a wrapper name is first defined in a file: the file, its place among the files, the wrapper's among its. */
interface WrapperPlace {
  file: string;
  fileAt: number;
  wrapperAt: number;
}

export class WorkspaceIndex {
  private readonly files = new Map<string, FileFacts>();
  private readonly includeDirs: string[];
  private includeDirsFor: (path: string) => readonly string[] = () => [];
  private generation = 0;
  /** Updates and removals per path (see changesOutside). */
  private readonly changedAt = new Map<string, number>();
  private uniqueConstants: Map<string, Array<{ path: string; def: ConstantDefinition }>> | null = null;
  private uniqueMacros: Map<string, Array<{ path: string; def: MacroDefinition }>> | null = null;
  private singles: Map<string, ConstantDefinition> | null = null;
  /**
   * The last constant views handed out (by path and whether its own entry is skipped), until a file
   * changes: an open document asks for its view on every keystroke, and building one reads every
   * constant of the workspace. A few only: each holds its own table of the constants the workspace
   * defines once, and the answers it gave.
   */
  private readonly views = new Map<string, ConstantView>();
  /** Paths whose entry holds the objects of an analysis still in use (see keepCopies). */
  private readonly borrowed = new Set<string>();
  /** The indexed paths by file name (for includes found by their tail), worked out when first asked after a change. */
  private byName: Map<string, string[]> | null = null;
  /** Each wrapper name, with the files that define one, in the files' order, and where in them: see wrappersInView. */
  private wrapperFiles: Map<string, WrapperPlace[]> | null = null;
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

  constructor(options: WorkspaceIndexOptions = {}) {
    this.includeDirs = (options.includeDirs ?? []).map(normalizePath);
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

  /** Index (or re-index) one file from its text. Other files are not touched. */
  update(path: string, text: string): FileFacts {
    const source = makeSourceText(text);
    const constants = collectConstants(source);
    const lookup = makeLookup([constants]);
    // Read for the index alone: its strings are cut from the whole text, which copies let go.
    // Launches and wrappers are looked for only where one may be (most headers have none: a third of the time of an index).
    const found =
      mayLaunch(source.masked) || constants.macros
        ? findLaunchFacts(source, { fileConstants: constants })
        : { launches: [], wrappers: [] };
    return this.set(
      path,
      {
        ...keptCopy({
          constants,
          kernels: findKernels(source, { lookup }),
          smemOptIns: findSmemOptIns(source, { fileConstants: constants }),
          wrappers: found.wrappers,
        }),
        launches: found.launches,
      },
      source,
    );
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
   * of its kernels, constants and opt-ins instead. The analysis's objects are keys of other caches'
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
    { constants, kernels, smemOptIns, launches, wrappers = [] }: Omit<AnalysedFile, 'source'>,
    source: SourceText,
  ): FileFacts {
    const key = normalizePath(path);
    const origin = baseName(key);
    const own = new Map([...constants.constants].map(([name, def]) => [name, { ...def, origin }]));
    const table: ConstantTable = { ...constants, constants: own };
    if (constants.macros)
      table.macros = new Map([...constants.macros].map(([name, def]) => [name, { ...def, origin }]));
    this.texts.set(key, ownCopy(source.text));
    const facts: FileFacts = {
      path: key,
      generation: ++this.generation,
      kernels,
      constants: table,
      includes: findIncludes(source),
      smemOptIns,
      launches: indexedLaunches(launches ?? []),
      wrappers: wrappers.map((w) => ({ ...w, origin })),
    };
    this.files.set(key, facts);
    this.borrowed.delete(key);
    this.changedAt.set(key, (this.changedAt.get(key) ?? 0) + 1);
    this.forgetDerived();
    return facts;
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
    return this.files.get(normalizePath(path));
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
    this.uniqueConstants = null;
    this.uniqueMacros = null;
    this.singles = null;
    this.views.clear();
    this.includedBy = null;
    this.byName = null;
    this.wrapperFiles = null;
    this.closures.clear();
    this.sortedPaths = null;
  }

  /** Names `path` can use from elsewhere: its includes first, then constants the workspace defines exactly once. */
  constantView(path: string, { skipOwnEntry = false }: OwnEntryOption = {}): ConstantView {
    const key = `${skipOwnEntry ? '-' : '+'}${normalizePath(path)}`;
    const view = this.views.get(key) ?? this.makeConstantView(path, skipOwnEntry);
    // The most recently used last; the least recently used goes.
    this.views.delete(key);
    this.views.set(key, view);
    for (const oldest of this.views.keys()) {
      if (this.views.size <= VIEWS_KEPT) break;
      this.views.delete(oldest);
    }
    return view;
  }

  private makeConstantView(path: string, skipOwnEntry: boolean): ConstantView {
    const included = this.includeClosure(path).map((p) => this.files.get(p)!.constants);
    const here = normalizePath(path);
    const all = this.workspaceConstants();
    // A file writes a name once: its own entry is at most one of the name's definitions.
    const ownAt = (defs: ReadonlyArray<{ path: string }>) =>
      skipOwnEntry ? defs.findIndex((d) => d.path === here) : -1;
    /** The workspace's definitions of `name` (without `path`'s own when its entry is skipped). */
    const definitionsOf = (name: string) => {
      const defs = all.get(name) ?? [];
      const own = ownAt(defs);
      return own < 0 ? defs : defs.filter((_, k) => k !== own);
    };
    // The names one definition in the workspace gives, but for `path`'s own: those are among the names `path` defines.
    const workspaceTable: ConstantTable = { constants: new Map(this.singleConstants()), dim3s: new Map() };
    if (skipOwnEntry) {
      for (const { name } of this.files.get(here)?.constants.constants.values() ?? []) {
        const defs = all.get(name) ?? [];
        const own = ownAt(defs);
        if (own < 0) continue;
        if (defs.length === 1) workspaceTable.constants.delete(name);
        else if (defs.length === 2) workspaceTable.constants.set(name, defs[own === 0 ? 1 : 0].def);
      }
    }
    const workspaceLookup = makeLookup([workspaceTable]);
    const fromWorkspace: Lookup = (name) => (workspaceTable.constants.has(name) ? workspaceLookup(name) : null);
    const lookup = makeLookup(included, fromWorkspace);
    const includedPaths = this.includeClosure(path);
    const describe = (name: string): string | null => {
      const value = lookup(name);
      const table = included.find((t) => t.constants.has(name));
      const def = table?.constants.get(name) ?? workspaceTable.constants.get(name);
      if (!def) {
        const count = definitionsOf(name).length;
        return count > 1
          ? `\`${name}\` is defined in ${count} places in the workspace and none is included here`
          : null;
      }
      const where = `${def.kind === 'define' ? '#define' : def.kind}, ${def.origin ?? '?'}:${(def.line ?? 0) + 1}`;
      return value === null ? `\`${name}\` (${where}) is not a compile-time integer` : `${name} = ${value} (${where})`;
    };
    return {
      lookup,
      describe,
      macros: this.macrosInView(here, included),
      wrappers: this.wrappersInView(here, includedPaths, lookup),
    };
  }

  /**
   * The wrappers of the files `path` includes, then those of a name only one other file defines
   * (a wrapper in a header the file reaches through a `-I` the index was not told). Each is read
   * with its own file's constants, then what `path` sees.
   */
  private wrappersInView(
    path: string,
    included: readonly string[],
    lookup: Lookup,
  ): ReadonlyMap<string, readonly WrapperRef[]> {
    const out = new Map<string, WrapperRef[]>();
    const add = (p: string, names: ReadonlySet<string> | null) => {
      const facts = this.files.get(p);
      if (!facts?.wrappers.length) return;
      const refs = wrappersByName(
        facts.wrappers.filter((w) => !names || names.has(w.name)),
        [facts.constants],
        makeLookup([facts.constants], lookup),
      );
      for (const [name, list] of refs)
        if (!out.has(name) || names === null) out.set(name, [...(out.get(name) ?? []), ...list]);
    };
    for (const p of included) add(p, null);
    // From the names' files worked out once per version of the index, not from every file for every file
    // (100,000 files took quadratic time). In the order of the files, as each name's one other file comes.
    const skip = new Set([path, ...included]);
    const single: Array<{ place: WrapperPlace; name: string }> = [];
    for (const [name, places] of this.wrapperFilesByName()) {
      if (out.has(name)) continue;
      const others = places.filter((w) => !skip.has(w.file));
      if (others.length === 1) single.push({ place: others[0], name });
    }
    single.sort((a, b) => a.place.fileAt - b.place.fileAt || a.place.wrapperAt - b.place.wrapperAt);
    for (const { place, name } of single) add(place.file, new Set([name]));
    return out;
  }

  private wrapperFilesByName(): Map<string, WrapperPlace[]> {
    if (this.wrapperFiles) return this.wrapperFiles;
    const byName = new Map<string, WrapperPlace[]>();
    let fileAt = 0;
    for (const [file, facts] of this.files) {
      facts.wrappers.forEach((w, wrapperAt) => {
        const places = byName.get(w.name);
        if (!places) byName.set(w.name, [{ file, fileAt, wrapperAt }]);
        else if (places[places.length - 1].file !== file) places.push({ file, fileAt, wrapperAt });
      });
      fileAt++;
    }
    this.wrapperFiles = byName;
    return byName;
  }

  /** The macros of `included` (nearest first), then those the rest of the workspace defines once (not `path`'s own). */
  private macrosInView(path: string, included: readonly ConstantTable[]): ReadonlyMap<string, MacroDefinition> {
    const macros = new Map<string, MacroDefinition>();
    for (const table of included)
      for (const [name, def] of table.macros ?? []) if (!macros.has(name)) macros.set(name, def);
    for (const [name, defs] of this.workspaceMacros()) {
      if (macros.has(name)) continue;
      const others = defs.filter((d) => d.path !== path);
      if (others.length === 1) macros.set(name, others[0].def);
    }
    return macros;
  }

  /** Every function-like macro of the workspace by name, one entry per different body. */
  private workspaceMacros(): Map<string, Array<{ path: string; def: MacroDefinition }>> {
    if (this.uniqueMacros) return this.uniqueMacros;
    const all = new Map<string, Array<{ path: string; def: MacroDefinition }>>();
    for (const [path, facts] of this.files) {
      for (const def of facts.constants.macros?.values() ?? []) {
        const list = all.get(def.name) ?? [];
        if (!list.some((d) => d.def.body === def.body)) list.push({ path, def });
        all.set(def.name, list);
      }
    }
    this.uniqueMacros = all;
    return all;
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
      for (const p of tier.paths) for (const kernel of this.files.get(p)?.kernels ?? []) refs.push({ kernel, path: p });
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
    for (const [p, facts] of this.files)
      for (const kernel of facts.kernels)
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

  /** Launches in the indexed files of a kernel named `name` (by its last component: a quick fix's warning may over-approximate). */
  launchesNamed(name: string): Array<{ path: string; launch: IndexedLaunch }> {
    const base = name.replace(/^.*::/, '');
    const out: Array<{ path: string; launch: IndexedLaunch }> = [];
    for (const [p, facts] of this.files)
      for (const launch of facts.launches)
        if (launch.kernelName.replace(/^.*::/, '') === base) out.push({ path: p, launch });
    return out;
  }

  /** `cudaFuncSetAttribute(..., MaxDynamicSharedMemorySize, ...)` calls in `path` and its includes. */
  smemOptInsInView(path: string): SmemOptIn[] {
    return [normalizePath(path), ...this.includeClosure(path)].flatMap((p) => this.files.get(p)?.smemOptIns ?? []);
  }

  /** The launch bounds of `ref.kernel` with its names resolved in the kernel's own file and includes. */
  launchBoundsFor(ref: KernelRef, templateArgs: readonly string[] | null, argLookup?: Lookup): LaunchBounds | null {
    const facts = this.files.get(ref.path);
    const view = this.constantView(ref.path);
    const kernelLookup = makeLookup(facts ? [facts.constants] : [], view.lookup);
    return resolveLaunchBounds(ref.kernel, { templateArgs, argLookup, kernelLookup });
  }

  /** The constants the workspace defines once, by name (what every file's view starts from). */
  private singleConstants(): ReadonlyMap<string, ConstantDefinition> {
    if (this.singles) return this.singles;
    const singles = new Map<string, ConstantDefinition>();
    for (const [name, defs] of this.workspaceConstants()) if (defs.length === 1) singles.set(name, defs[0].def);
    this.singles = singles;
    return singles;
  }

  private workspaceConstants(): Map<string, Array<{ path: string; def: ConstantDefinition }>> {
    if (this.uniqueConstants) return this.uniqueConstants;
    const all = new Map<string, Array<{ path: string; def: ConstantDefinition }>>();
    for (const [path, facts] of this.files) {
      for (const def of facts.constants.constants.values()) {
        const list = all.get(def.name) ?? [];
        // The same text in two files (a header copied, an #ifndef guard) is one definition.
        if (!list.some((d) => d.def.expr === def.expr)) list.push({ path, def });
        all.set(def.name, list);
      }
    }
    this.uniqueConstants = all;
    return all;
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
 * A file's kernels, constants and opt-ins as plain copies (see plainCopy), holding nothing of the
 * objects and the text they were read from.
 */
function keptCopy({
  kernels,
  constants,
  smemOptIns,
  wrappers,
}: Pick<FileFacts, 'kernels' | 'constants' | 'smemOptIns' | 'wrappers'>): Pick<
  FileFacts,
  'kernels' | 'constants' | 'smemOptIns' | 'wrappers'
> {
  const table: ConstantTable = { constants: copyMap(constants.constants), dim3s: copyMap(constants.dim3s) };
  if (constants.shadowed) table.shadowed = copyMap(constants.shadowed);
  if (constants.macros) table.macros = copyMap(constants.macros);
  return {
    kernels: plainCopy(kernels),
    constants: table,
    smemOptIns: plainCopy(smemOptIns),
    wrappers: plainCopy(wrappers),
  };
}

/** A launch written in the text (before reading it as one). */
function mayLaunch(masked: string): boolean {
  return masked.includes('<<') || /\bcu(?:da)?Launch/.test(masked);
}

/** The launches as the index keeps them: fresh strings and numbers, nothing of the analysis they came from. */
function indexedLaunches(launches: readonly Launch[]): IndexedLaunch[] {
  return launches
    .filter((l) => !l.inMacro)
    .map((l) => ({
      kernelName: ownCopy(l.kernelName),
      line: l.span.start.line,
      threads: l.block.value ? l.block.value.x * l.block.value.y * l.block.value.z : null,
    }));
}

function copyMap<V>(map: ReadonlyMap<string, V>): Map<string, V> {
  return new Map([...map].map(([k, v]) => [ownCopy(k), plainCopy(v)]));
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
