/**
 * The preprocessor of one translation unit: a `.cu` file and its flags, walked as the compiler
 * walks it, for one pass (the host pass, or the device pass for one architecture, where
 * `__CUDA_ARCH__` is set). It follows `#include` in the compiler's search order, evaluates
 * `#if`/`#ifdef`/`#elif`/`#else` over the macros in effect at that point, applies `#define` and
 * `#undef`, and honours include guards and `#pragma once`.
 *
 * What the unit cannot decide it keeps open rather than guessing. A macro that no flag defines
 * and no file of the unit sets (`USE_ROCM`, `NDEBUG`, a header outside the workspace's) may be
 * defined by the build; a condition on it is unknown, both arms are walked, and a macro defined
 * differently in them has both definitions afterwards: any value that depends on which arm holds
 * is unknown (or one of a few, never one picked). Every file gets regions: `active` (compiled),
 * `inactive` (certainly not), and for an undecided condition `assumed`, the arm a build with no
 * further flags compiles (what the syntax tree parses: one consistent program), and `alternative`,
 * the arms it does not (their macros count, their code is not parsed).
 *
 * Pure: files come from `sources`, paths are `/`-separated strings.
 */
import { fileDirectives, type Directive } from './directives';
import { evaluateCondition, type ConditionContext, type MacroState, type Truth } from './conditions';
import { commandLineDefine, defineFrom, opaqueDefine, sameDefinition, type MacroDef } from './macro-expansion';
import { commonDepth, dirname, joinPath, normalizePath } from './paths';

export type RegionState = 'active' | 'assumed' | 'alternative' | 'inactive';

export interface Region {
  start: number;
  end: number;
  state: RegionState;
  /** A directive line (never parsed as code). */
  directive?: boolean;
}

export type Pass = { kind: 'host' } | { kind: 'device'; arch: number };

export interface UnitFlags {
  /** `-D`/`-U` in command-line order. */
  macros?: ReadonlyArray<{ name: string; value: string | null } | { name: string; undefine: true }>;
  /** `-iquote` folders: searched for `"..."` includes after the including file's folder. */
  quoteDirs?: readonly string[];
  /** `-I` folders, in order. */
  includeDirs?: readonly string[];
  /** `-isystem` folders. */
  systemDirs?: readonly string[];
  /** `-include FILE`: read before the source. */
  forcedIncludes?: readonly string[];
  /** The C++ standard (`-std=c++20`: 20), for `__cplusplus`; default nvcc's, C++17. */
  std?: number;
}

/** What is known of the toolkit and the machine: the macros the compiler itself defines. */
export interface Toolchain {
  /** CUDA version of nvcc (`__CUDACC_VER_MAJOR__`, `CUDART_VERSION`), or null when not known. */
  cuda?: { major: number; minor: number } | null;
  /** The host platform: `__linux__`, `_WIN32`, `__APPLE__`. Null: unknown. */
  platform?: 'linux' | 'win32' | 'darwin' | null;
}

export interface UnitSources {
  /** The text of a file (a workspace file, or a header the adapter can read), or null. */
  read(path: string): string | null;
  /** Known files whose path ends with `/tail`: an include no folder given resolves is looked for by its tail (a `-I` not given). */
  byTail?(tail: string): readonly string[];
}

export interface UnitInput {
  /** The source file (its path as `sources` knows it). */
  main: string;
  flags?: UnitFlags;
  toolchain?: Toolchain;
  pass?: Pass;
  sources: UnitSources;
}

export interface IncludeEdge {
  from: string;
  /** Offset of the `#include` in `from`. */
  at: number;
  target: string;
  system: boolean;
  /** The file it reads, or null when no file the unit can read is that header (a system header, a missing one). */
  resolved: string | null;
  /** The region the `#include` is in. */
  state: RegionState;
}

/** What the unit knows of macros at one point of one of its files. */
export interface MacroScope {
  /** The definitions the name may have here, and whether the build may define it otherwise. */
  state(name: string): MacroState;
  /** The definition the view (a build with no further flags) has here, or null. */
  view(name: string): MacroDef | null;
}

export interface UnitFile {
  path: string;
  text: string;
  /** Regions covering the text, in order. */
  regions: readonly Region[];
  /** The state the file was included in (the main file: active). */
  state: RegionState;
}

export interface PreprocessedUnit {
  main: string;
  pass: Pass;
  /** Every file the walk read, in the order first read (the main file first). */
  files: ReadonlyMap<string, UnitFile>;
  includes: readonly IncludeEdge[];
  /** Files any `#include` of the unit's files may read, whatever the conditions (the unit's inputs). */
  closure: readonly string[];
  /** Every name some flag, built-in or file of the unit defines (a quick filter before asking macrosAt). */
  macroNames: ReadonlySet<string>;
  /**
   * Names some definition of which passes `test` (a quick filter before a scan of a file for their
   * uses); kept per test, which must be a module's constant.
   */
  macrosWhere(test: (def: MacroDef) => boolean): ReadonlySet<string>;
  macrosAt(path: string, offset: number): MacroScope;
  /** What the walk could not follow (too deep, too many files), for a log. */
  notes: readonly string[];
}

/** Nested includes the walk follows (GCC's limit is 200): a deeper chain is cut there, with a note. */
export const MAX_INCLUDE_DEPTH = 200;
/** File inclusions in one unit (a header included again and again, X-macro style, counts each time). */
export const MAX_INCLUSIONS = 20_000;
/** Definitions a macro may have after undecided conditions before it is taken as unknown. */
const MAX_OPTIONS = 4;

/** Defined by host_defines.h, which nvcc includes into every unit. */
const CUDA_KEYWORD_MACROS: readonly string[] = [
  '__host__',
  '__device__',
  '__global__',
  '__shared__',
  '__constant__',
  '__managed__',
  '__forceinline__',
  '__noinline__',
  '__grid_constant__',
];

/** Macros nvcc never defines: a condition on one is decided (a HIP or NVRTC build is not this one). */
const NEVER_DEFINED: readonly string[] = [
  '__HIPCC__',
  '__HIP__',
  '__HIP_PLATFORM_AMD__',
  '__HIP_PLATFORM_HCC__',
  '__HIP_PLATFORM_NVIDIA__',
  '__HIP_PLATFORM_NVCC__',
  '__HIP_DEVICE_COMPILE__',
  '__CUDACC_RTC__',
];

const UNDEFINED: MacroState = { options: [null], open: false };
const OPEN: MacroState = { options: [null], open: true };

interface HistoryEntry {
  seq: number;
  state: MacroState;
  view: MacroDef | null;
}

interface Inclusion {
  path: string;
  text: string;
  state: RegionState;
  regions: Region[];
  /** After each directive: its end and the history's length then. */
  points: Array<{ offset: number; seq: number }>;
  entrySeq: number;
}

interface Frame {
  parent: RegionState;
  /** An earlier arm's condition is certainly true: later arms cannot be taken. */
  certain: boolean;
  /** An earlier arm may be taken. */
  possible: boolean;
  viewTaken: boolean;
  /** The current arm may be taken (its changes are a path through the group). */
  armPossible: boolean;
  hasElse: boolean;
  /** Per name the current arm changed: its state before the arm. */
  log: Map<string, MacroState>;
  /** Per possible arm: the states it left the names it changed in. */
  exits: Array<Map<string, MacroState>>;
  /** Every name some arm changed, with its state before the group. */
  entry: Map<string, MacroState>;
}

export function preprocessUnit(input: UnitInput): PreprocessedUnit {
  return new UnitWalk(input).run();
}

class UnitWalk {
  private seq = 0;
  private readonly history = new Map<string, HistoryEntry[]>();
  private readonly poss = new Map<string, MacroState>();
  private readonly viewTable = new Map<string, MacroDef | null>();
  private readonly frames: Frame[] = [];
  private readonly once = new Set<string>();
  private readonly inclusions = new Map<string, Inclusion>();
  private readonly edges: IncludeEdge[] = [];
  private readonly notes: string[] = [];
  private readonly setByFiles = new Set<string>(NEVER_DEFINED);
  private readonly closure: string[] = [];
  private inclusionCount = 0;
  /** The files being walked, innermost last. */
  private readonly walking: string[] = [];
  private readonly pass: Pass;
  private readonly flags: UnitFlags;
  private readonly texts = new Map<string, string | null>();
  private readonly resolved = new Map<string, string | null>();

  constructor(private readonly input: UnitInput) {
    this.pass = input.pass ?? { kind: 'host' };
    this.flags = input.flags ?? {};
  }

  run(): PreprocessedUnit {
    const main = normalizePath(this.input.main);
    this.findClosure(main);
    this.predefine();
    for (const forced of this.flags.forcedIncludes ?? []) {
      const path = this.resolve(forced, false, dirname(main));
      if (path) this.walkFile(path, 'active', 1);
    }
    this.walkFile(main, 'active', 0);
    const files = new Map<string, UnitFile>();
    for (const inc of this.inclusions.values())
      files.set(inc.path, { path: inc.path, text: inc.text, regions: inc.regions, state: inc.state });
    const inclusions = this.inclusions;
    const history = this.history;
    const setByFiles = this.setByFiles;
    const initial = (name: string): MacroState => (setByFiles.has(name) ? UNDEFINED : OPEN);
    const inclusionOf = new Map<string, Inclusion | undefined>();
    const macrosWhere = new Map<(def: MacroDef) => boolean, Set<string>>();
    return {
      main,
      pass: this.pass,
      files,
      includes: this.edges,
      closure: this.closure,
      notes: this.notes,
      macroNames: new Set(this.history.keys()),
      macrosWhere(test) {
        let names = macrosWhere.get(test);
        if (!names) {
          names = new Set();
          for (const [name, entries] of history)
            if (entries.some((e) => e.state.options.some((o) => o !== null && test(o)))) names.add(name);
          macrosWhere.set(test, names);
        }
        return names;
      },
      macrosAt(path, offset) {
        // Asked at every identifier of a file a pass reads: its path is made normal once.
        let inc = inclusionOf.get(path);
        if (inc === undefined && !inclusionOf.has(path))
          inclusionOf.set(path, (inc = inclusions.get(normalizePath(path))));
        const seq = inc ? seqAt(inc, offset) : Number.MAX_SAFE_INTEGER;
        const at = (name: string): HistoryEntry | null => {
          const entries = history.get(name);
          if (!entries) return null;
          // The last change before `seq`.
          let lo = 0;
          let hi = entries.length - 1;
          let found = -1;
          while (lo <= hi) {
            const mid = (lo + hi) >> 1;
            if (entries[mid].seq < seq) {
              found = mid;
              lo = mid + 1;
            } else hi = mid - 1;
          }
          return found >= 0 ? entries[found] : null;
        };
        return {
          state: (name) => at(name)?.state ?? initial(name),
          view: (name) => at(name)?.view ?? null,
        };
      },
    };
  }

  // --- the files the unit may read -------------------------------------------------------------

  private text(path: string): string | null {
    let t = this.texts.get(path);
    if (t === undefined) {
      t = this.input.sources.read(path);
      this.texts.set(path, t);
    }
    return t;
  }

  /** Every file any include may reach, and the names they define anywhere: a name no file sets starts open. */
  private findClosure(main: string): void {
    const seen = new Set<string>([main]);
    const queue = [main];
    for (const forced of this.flags.forcedIncludes ?? []) {
      const p = this.resolve(forced, false, dirname(main));
      if (p && !seen.has(p)) {
        seen.add(p);
        queue.push(p);
      }
    }
    while (queue.length > 0) {
      const path = queue.shift()!;
      const text = this.text(path);
      if (text === null) continue;
      this.closure.push(path);
      const { directives, defines } = fileDirectives(text);
      for (const name of defines) this.setByFiles.add(name);
      for (const d of directives) {
        if (!d.header) continue;
        const target = this.resolve(d.header.name, d.header.system, dirname(path), path);
        if (target && !seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
      }
    }
  }

  /**
   * The file an include names, in the compiler's order: for `"..."` the including file's folder, then
   * `-iquote`; then `-I`, `-isystem`; then, when none of those has it, the one known file with that
   * tail (or the nearest of several to the including file): the folder a build would pass with `-I`.
   */
  private resolve(target: string, system: boolean, fromDir: string, from?: string): string | null {
    const key = `${system ? '<' : '"'}${fromDir}\u0000${target}`;
    const kept = this.resolved.get(key);
    if (kept !== undefined) return kept;
    let found: string | null = null;
    if (/^\/|^[A-Za-z]:[\\/]/.test(target))
      found = this.text(normalizePath(target)) !== null ? normalizePath(target) : null;
    else {
      const dirs = [
        ...(system ? [] : [fromDir, ...(this.flags.quoteDirs ?? [])]),
        ...(this.flags.includeDirs ?? []),
        ...(this.flags.systemDirs ?? []),
      ];
      for (const dir of dirs) {
        const p = joinPath(dir, target);
        if (this.text(p) !== null) {
          found = p;
          break;
        }
      }
      if (!found && this.input.sources.byTail) {
        const tail = normalizePath(target).replace(/^(\.\.\/)+/, '');
        const candidates = this.input.sources.byTail(tail).filter((p) => p !== from);
        if (candidates.length === 1) found = candidates[0];
        else if (candidates.length > 1) {
          // The nearest to the including file; two as near are a guess, and no guess is made.
          const depth = (p: string) => commonDepth(p, fromDir);
          const best = Math.max(...candidates.map(depth));
          const nearest = candidates.filter((p) => depth(p) === best);
          if (nearest.length === 1) found = nearest[0];
        }
      }
    }
    this.resolved.set(key, found);
    return found;
  }

  // --- macros ---------------------------------------------------------------------------------

  private current(name: string): MacroState {
    return this.poss.get(name) ?? (this.setByFiles.has(name) ? UNDEFINED : OPEN);
  }

  private currentView(name: string): MacroDef | null {
    return this.viewTable.get(name) ?? null;
  }

  /** Changes what the unit knows of `name` (and, in the view, its definition there). */
  private set(name: string, state: MacroState, view: MacroDef | null | undefined): void {
    const frame = this.frames[this.frames.length - 1];
    if (frame && !frame.log.has(name)) frame.log.set(name, this.current(name));
    if (frame && !frame.entry.has(name)) frame.entry.set(name, this.current(name));
    this.poss.set(name, state);
    if (view !== undefined) this.viewTable.set(name, view);
    let entries = this.history.get(name);
    if (!entries) this.history.set(name, (entries = []));
    entries.push({ seq: this.seq++, state, view: this.currentView(name) });
  }

  private predefine(): void {
    const define = (name: string, value: string | null) => {
      const def = commandLineDefine(name, value, '<built-in>');
      if (def) this.set(name, { options: [def], open: false }, def);
    };
    const opaque = (name: string) => {
      const def = opaqueDefine(name);
      this.set(name, { options: [def], open: false }, def);
    };
    const never = (name: string) => this.set(name, UNDEFINED, null);
    define('__CUDACC__', '1');
    define('__NVCC__', '1');
    // The calling conventions of the runtime's callbacks (cuda_runtime_api.h, which nvcc includes into every
    // unit): nothing on Linux, `__stdcall` on Windows; either way no value, only a specifier.
    define('CUDART_CB', platformIs(this.input.toolchain?.platform, 'win32') ? '__stdcall' : '');
    define('CUDARTAPI', platformIs(this.input.toolchain?.platform, 'win32') ? '__stdcall' : '');
    define('__cplusplus', cplusplus(this.flags.std));
    // nvcc includes cuda_runtime.h into every unit before its first line: the execution spaces and
    // memory spaces are macros (host_defines.h), so `#ifndef __host__ / #define __device__ / #endif`
    // (a header that also builds without nvcc) leaves them alone. Their expansion is the compiler's.
    for (const name of CUDA_KEYWORD_MACROS) opaque(name);
    for (const name of NEVER_DEFINED) never(name);
    const cuda = this.input.toolchain?.cuda;
    if (cuda) {
      define('__CUDACC_VER_MAJOR__', String(cuda.major));
      define('__CUDACC_VER_MINOR__', String(cuda.minor));
      define('__CUDACC_VER_BUILD__', '0');
      // nvcc includes cuda_runtime.h into every unit: its version macro is always there.
      define('CUDART_VERSION', String(cuda.major * 1000 + cuda.minor * 10));
    } else {
      for (const name of ['__CUDACC_VER_MAJOR__', '__CUDACC_VER_MINOR__', '__CUDACC_VER_BUILD__', 'CUDART_VERSION'])
        opaque(name);
    }
    if (this.pass.kind === 'device') define('__CUDA_ARCH__', String(this.pass.arch));
    else never('__CUDA_ARCH__');
    const platform = this.input.toolchain?.platform;
    if (platform) {
      const on = (name: string, yes: boolean) => (yes ? define(name, '1') : never(name));
      on('__linux__', platform === 'linux');
      on('__unix__', platform !== 'win32');
      on('_WIN32', platform === 'win32');
      on('_WIN64', platform === 'win32');
      on('__APPLE__', platform === 'darwin');
      if (platform === 'win32') opaque('_MSC_VER');
      else never('_MSC_VER');
    }
    for (const m of this.flags.macros ?? []) {
      if ('undefine' in m) never(m.name);
      else {
        const def = commandLineDefine(m.name, m.value);
        if (def) this.set(m.name, { options: [def], open: false }, def);
      }
    }
    // A source whose whole code is under `#ifdef USE_CUDA`, which nothing here decides, is only read
    // in a build that defines it: its headers are read in that build too, so that a `#define` they
    // make under the same condition holds at the launches (LightGBM's sources and headers).
    const main = normalizePath(this.input.main);
    const text = this.text(main);
    const guard = text === null ? null : wholeFileCondition(text);
    const flagged = (this.flags.macros ?? []).some((m) => m.name === guard);
    if (guard && !flagged && !this.setByFiles.has(guard)) {
      define(guard, '1');
      this.notes.push(`${main} is all under \`#ifdef ${guard}\`: read as a build that defines it`);
    }
  }

  // --- the walk ---------------------------------------------------------------------------------

  private walkFile(path: string, state: RegionState, depth: number): void {
    if (this.once.has(path)) return;
    const text = this.text(path);
    if (text === null) return;
    if (depth > MAX_INCLUDE_DEPTH) {
      this.notes.push(`includes nest deeper than ${MAX_INCLUDE_DEPTH} at ${path}: not followed further`);
      return;
    }
    if (++this.inclusionCount > MAX_INCLUSIONS) {
      if (this.inclusionCount === MAX_INCLUSIONS + 1)
        this.notes.push(`more than ${MAX_INCLUSIONS} file inclusions: the rest are not followed`);
      return;
    }
    const inc: Inclusion = { path, text, state, regions: [], points: [], entrySeq: this.seq };
    // A file's regions are those of its first inclusion in the view (else its first).
    const known = this.inclusions.get(path);
    const keep = !known || (!inView(known.state) && inView(state));
    if (keep) this.inclusions.set(path, inc);
    const base = this.frames.length;
    this.walking.push(path);
    let region = state;
    let cursor = 0;
    const emit = (start: number, end: number, s: RegionState, directive?: boolean) => {
      if (!keep || end <= start) return;
      const last = inc.regions[inc.regions.length - 1];
      if (last && last.state === s && !last.directive && !directive && last.end === start) last.end = end;
      else inc.regions.push(directive ? { start, end, state: s, directive } : { start, end, state: s });
    };
    for (const d of fileDirectives(text).directives) {
      emit(cursor, d.start, region);
      emit(d.start, d.end, region, true);
      cursor = d.end;
      region = this.directive(d, region, path, depth);
      if (keep) inc.points.push({ offset: d.end, seq: this.seq });
    }
    emit(cursor, text.length, region);
    // An `#if` left open at the end of the file ends there.
    while (this.frames.length > base) this.endGroup();
    this.walking.pop();
  }

  /** Applies one directive read in `region`; the region state after it. */
  private directive(d: Directive, region: RegionState, path: string, depth: number): RegionState {
    switch (d.name) {
      case 'if':
      case 'ifdef':
      case 'ifndef':
        return this.beginGroup(d, region);
      case 'elif':
      case 'elifdef':
      case 'elifndef':
      case 'else':
        return this.nextArm(d);
      case 'endif':
        return this.endGroup();
    }
    if (region === 'inactive') return region;
    switch (d.name) {
      case 'define': {
        const def = defineFrom(d.tokens, path, d.hash);
        if (def) this.set(def.name, { options: [def], open: false }, inView(region) ? def : undefined);
        break;
      }
      case 'undef': {
        const name = d.tokens[0];
        if (name?.kind === 'ident') this.set(name.text, UNDEFINED, inView(region) ? null : undefined);
        break;
      }
      case 'include':
      case 'include_next':
      case 'import':
        this.include(d, region, path, depth);
        break;
      case 'pragma':
        if (d.tokens[0]?.text === 'once') this.once.add(path);
        break;
    }
    return region;
  }

  private include(d: Directive, region: RegionState, path: string, depth: number): void {
    const header = d.header;
    if (!header) return;
    const resolved = this.resolve(header.name, header.system, dirname(path), path);
    this.edges.push({ from: path, at: d.hash, target: header.name, system: header.system, resolved, state: region });
    if (resolved) this.walkFile(resolved, region, depth + 1);
    // The driver API's header is the toolkit's, never the workspace's: its version macro is what
    // the nvcc compiling the unit ships (`#if CUDA_VERSION >= 11000`).
    const cuda = this.input.toolchain?.cuda;
    if (!resolved && header.system && header.name === 'cuda.h' && cuda) {
      const def = commandLineDefine('CUDA_VERSION', String(cuda.major * 1000 + cuda.minor * 10), '<cuda.h>');
      if (def) this.set('CUDA_VERSION', { options: [def], open: false }, inView(region) ? def : undefined);
    }
  }

  private truth(tokens: Directive['tokens'], name: string, view: boolean): Truth {
    const ctx: ConditionContext = view
      ? { state: (n) => ({ options: [this.currentView(n)], open: false }), hasInclude: (h, s) => this.hasInclude(h, s) }
      : { state: (n) => this.current(n), hasInclude: (h, s) => this.hasInclude(h, s) };
    if (name === 'ifdef' || name === 'ifndef' || name === 'elifdef' || name === 'elifndef') {
      const id = tokens[0];
      if (!id || id.kind !== 'ident') return 'unknown';
      const state = ctx.state(id.text);
      const defined: Truth = state.options.every((o) => o !== null)
        ? true
        : state.options.every((o) => o === null) && !state.open
          ? false
          : 'unknown';
      return name.endsWith('ndef') ? (defined === 'unknown' ? 'unknown' : !defined) : defined;
    }
    return evaluateCondition(tokens, ctx);
  }

  private hasInclude(header: string, system: boolean): Truth {
    // Found among the files the unit can read: there. Not found: a system header may still be.
    const from = this.walking[this.walking.length - 1];
    const found = this.resolve(header, system, from ? dirname(from) : '.', from);
    return found ? true : 'unknown';
  }

  private beginGroup(d: Directive, region: RegionState): RegionState {
    const frame: Frame = {
      parent: region,
      certain: false,
      possible: false,
      viewTaken: false,
      armPossible: false,
      hasElse: false,
      log: new Map(),
      exits: [],
      entry: new Map(),
    };
    this.frames.push(frame);
    return this.arm(frame, d);
  }

  /** The state of the arm `d` opens in `frame`, reading its condition where it can be taken. */
  private arm(frame: Frame, d: Directive): RegionState {
    if (frame.parent === 'inactive' || frame.certain) {
      frame.armPossible = false;
      return 'inactive';
    }
    const isElse = d.name === 'else';
    const truth: Truth = isElse ? true : this.truth(d.tokens, d.name, false);
    const possible = truth !== false;
    frame.armPossible = possible;
    if (!possible) return 'inactive';
    const definite = truth === true && !frame.possible;
    let state: RegionState;
    if (frame.parent === 'alternative') state = 'alternative';
    else if (definite) {
      state = frame.parent;
      frame.viewTaken = true;
    } else {
      // Code under a condition the unit cannot decide, with no other arm to take instead: the view keeps
      // it (it parses either way), so that it is read; a group with arms takes the one the C default gives.
      const lone = !frame.possible && d.hasAlternative === false;
      const viewTruth = frame.viewTaken ? false : isElse || lone ? true : this.truth(d.tokens, d.name, true) === true;
      if (viewTruth) frame.viewTaken = true;
      state = viewTruth ? (frame.parent === 'active' ? 'assumed' : frame.parent) : 'alternative';
    }
    frame.possible = true;
    if (truth === true) frame.certain = true;
    return state;
  }

  private closeArm(frame: Frame): void {
    if (frame.armPossible) {
      const exit = new Map<string, MacroState>();
      for (const name of frame.log.keys()) exit.set(name, this.current(name));
      frame.exits.push(exit);
    }
    // The next arm starts from the group's entry: undo this arm's changes (the view's stay as they are,
    // since only one arm is in the view).
    for (const [name, before] of frame.log) this.restore(name, before);
    frame.log = new Map();
  }

  private restore(name: string, state: MacroState): void {
    this.poss.set(name, state);
    const entries = this.history.get(name)!;
    entries.push({ seq: this.seq++, state, view: this.currentView(name) });
  }

  private nextArm(d: Directive): RegionState {
    const frame = this.frames[this.frames.length - 1];
    if (!frame) return 'active';
    this.closeArm(frame);
    if (d.name === 'else') frame.hasElse = true;
    return this.arm(frame, d);
  }

  private endGroup(): RegionState {
    const frame = this.frames.pop();
    if (!frame) return 'active';
    // Close the last arm with the frame still on top (its changes are logged there).
    this.frames.push(frame);
    this.closeArm(frame);
    this.frames.pop();
    // Paths through the group: each arm that may be taken, and none of them when that may happen.
    const fallThrough = !frame.certain && !(frame.hasElse && frame.armPossible);
    for (const [name, before] of frame.entry) {
      const states = frame.exits.map((exit) => exit.get(name) ?? before);
      if (fallThrough || states.length === 0) states.push(before);
      const joined = join(states);
      // The outer group (if any) sees this as a change of its current arm.
      const outer = this.frames[this.frames.length - 1];
      if (outer && !outer.log.has(name)) outer.log.set(name, before);
      if (outer && !outer.entry.has(name)) outer.entry.set(name, before);
      this.restore(name, joined);
    }
    return frame.parent;
  }
}

/**
 * The macro a file's whole code is conditional on (`#ifdef X`, `#if defined(X)`, `#if X`, one arm,
 * nothing but comments and directives outside it), or null. An include guard (`#ifndef X` then
 * `#define X`) is not one.
 */
export function wholeFileCondition(text: string): string | null {
  const directives = fileDirectives(text).directives;
  const first = directives.findIndex((d) => d.name === 'if' || d.name === 'ifdef' || d.name === 'ifndef');
  if (first < 0) return null;
  const open = directives[first];
  if (open.name === 'ifndef' || open.hasAlternative !== false) return null;
  const words = open.tokens.map((t) => t.text).join(' ');
  const m =
    open.name === 'ifdef'
      ? /^([A-Za-z_]\w*)$/.exec(words)
      : /^(?:defined \( ([A-Za-z_]\w*) \)|defined ([A-Za-z_]\w*)|([A-Za-z_]\w*))$/.exec(words);
  const name = m ? (m[1] ?? m[2] ?? m[3] ?? null) : null;
  if (!name) return null;
  // Its #endif, and whether it is the file's last directive.
  let depth = 0;
  let close = -1;
  for (let k = first; k < directives.length; k++) {
    const d = directives[k].name;
    if (d === 'if' || d === 'ifdef' || d === 'ifndef') depth++;
    else if (d === 'endif' && --depth === 0) {
      close = k;
      break;
    }
  }
  if (close !== directives.length - 1) return null;
  // Nothing but comments and directives before it and after its #endif.
  const outside = (from: number, to: number) => {
    let rest = '';
    let at = from;
    for (const d of directives) {
      if (d.start < from || d.end > to) continue;
      rest += text.slice(at, d.start);
      at = d.end;
    }
    rest += text.slice(at, to);
    return rest.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '').trim() === '';
  };
  return outside(0, open.start) && outside(directives[close].end, text.length) ? name : null;
}

function platformIs(platform: Toolchain['platform'], name: string): boolean {
  return platform === name;
}

function inView(state: RegionState): boolean {
  return state === 'active' || state === 'assumed';
}

/** The history length after the last directive of `inc` before `offset`. */
function seqAt(inc: Inclusion, offset: number): number {
  const points = inc.points;
  let lo = 0;
  let hi = points.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid].offset <= offset) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 ? points[found].seq : inc.entrySeq;
}

/** What a macro may be after paths that left it in these states. */
function join(states: readonly MacroState[]): MacroState {
  const options: Array<MacroDef | null> = [];
  let open = false;
  for (const s of states) {
    open ||= s.open;
    for (const o of s.options)
      if (!options.some((x) => (x === null ? o === null : o !== null && sameDefinition(x, o)))) options.push(o);
  }
  if (options.length > MAX_OPTIONS) return OPEN;
  return options.length === 1 && states.every((s) => s === states[0]) ? states[0] : { options, open };
}

function cplusplus(std: number | undefined): string {
  switch (std) {
    case 11:
      return '201103L';
    case 14:
      return '201402L';
    case 20:
      return '202002L';
    case 23:
      return '202302L';
    default:
      return '201703L';
  }
}
