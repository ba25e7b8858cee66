/**
 * The text passes (constants, kernels, launches, shared-memory opt-ins) run
 * chunk by chunk (see top-level-chunks.ts) and kept between versions of one
 * document: a chunk whose text did not change takes its results from the
 * previous version, its lines shifted if it moved. Kernels and launches also
 * depend on the file's constants and the workspace; when those change, every
 * chunk is read again.
 */
import type { Kernel, Launch, SmemOptIn } from '../types';
import { isWordCode, offsetAt, type SourceText } from '../text/source-text';
import type { Lookup } from '../text/const-eval';
import {
  collectConstantDefinitions,
  decideBranches,
  decideMacroBranches,
  isReassigned,
  makeLookup,
  type ConstantDefinition,
  type ConstantTable,
  type Dim3Definition,
} from '../text/constant-table';
import {
  findInactiveRanges,
  hasConditionals,
  isInactive,
  NO_INACTIVE_RANGES,
  type InactiveRanges,
} from '../text/preprocessor-branches';
import type { MacroDefinition } from '../text/macros';
import { findKernels } from '../facts/kernel-finder';
import { findCallLaunches, findDirectLaunches, findSmemOptIns, withOwnWrappers } from '../facts/launch-finder';
import { movedWrapper, wrappersKey, type WrapperDefinition, type WrapperRef } from '../facts/launch-wrappers';
import { layoutChunks, type Chunk } from '../text/top-level-chunks';
import {
  contextKeyOf,
  fileContextParts,
  hash,
  hashHalves,
  shiftLines,
  type FileContextParts,
} from './kernel-analysis-cache';
import { ownCopy } from './engine-seams';
import { sameItems } from './same-items';

export interface TextFacts {
  /** The file's constants: every chunk's, in order (a name defined twice is ambiguous). */
  constants: ConstantTable;
  /** What constant lookups can answer (the outer key and the file's constants): equal means the same answers. */
  environment: string;
  kernels: Kernel[];
  launches: Launch[];
  smemOptIns: SmemOptIn[];
  /** The launch wrappers the file's functions are (see launch-wrappers.ts): the workspace index keeps them for other files. */
  wrappers: WrapperDefinition[];
  /**
   * What the kernel-body passes need besides each kernel's text, worked out the first time they ask
   * and kept: a newly opened file's first pass reads no kernel body, and a first hover waits for it.
   */
  bodyContext: () => BodyContext;
}

/** The file as the kernel-body passes see it around each kernel (cache keys, calls into the file's functions). */
export interface BodyContext {
  /** What the kernel-body passes of every kernel depend on besides its own text (see contextKeyOf), as a key. */
  contextKey: string;
  /** The file's named `__device__` functions: their texts (blanks squeezed) by name, for calleesKey. */
  deviceFunctions: ReadonlyMap<string, string[]>;
  /** Changes whenever one of `deviceFunctions` does. */
  devicesKey: string;
  /** Where the file's device functions start, as a key: results with spans in them hold while it does. */
  devicePlaces: string;
  /** Names that may name a function defined in the file (a superset: every name written as `f(…) {`). */
  functionNames: ReadonlySet<string>;
}

export interface TextPassInput {
  source: SourceText;
  /** Constants from outside the file (included headers, the workspace), after the file's own. */
  outer?: Lookup;
  /** Says where `outer` found a name, for notes. */
  describe?: (name: string) => string | null;
  /** Function-like macros from outside the file (included headers), after the file's own. */
  outerMacros?: ReadonlyMap<string, MacroDefinition>;
  /** Launch wrappers from outside the file (included headers, the workspace), by name. */
  outerWrappers?: ReadonlyMap<string, readonly WrapperRef[]>;
  /** Changes whenever `outer`, `describe` or `outerMacros` may answer differently (the workspace index's generation). */
  outerKey: string;
  cache?: TextPassCache;
}

interface ChunkResults {
  /** The line the chunk started on when these were computed. */
  line: number;
  kernels: Kernel[];
  launches: Launch[];
  smemOptIns: SmemOptIn[];
  /** The wrappers the chunk's own launches make of their functions. */
  wrappers: WrapperDefinition[];
}

/** The launches the chunk's calls of wrappers make, for the wrappers in view that `key` names. */
interface ChunkCalls {
  key: string;
  line: number;
  launches: Launch[];
  /** The wrappers these calls make of the functions they are in. */
  wrappers: WrapperDefinition[];
}

interface ChunkEntry {
  /** The chunk's text (its key in the cache). */
  key: string;
  /** The chunk's masked text: equal raw text can mask differently (`#if`/`#else` brace blanking). */
  masked: string;
  /** Constants with offsets relative to the chunk, lines as when the chunk was read (on line `line`). */
  constants: ConstantTable;
  /** Every definition the chunk writes, a name written twice twice: the constants keys sum these (see constantSums). */
  definitions: readonly ConstantDefinition[];
  line: number;
  /** The chunk's part of the body context, once asked for (see bodyPartsOf). */
  body?: ChunkBodyParts;
  /** Until then, the chunk as it was read (its text and masked text are the entry's). */
  unread?: SourceText;
  /** Results for the environment `environment` names. */
  results: ChunkResults | null;
  /** The chunk holds an `#if`, `#el…` or `#endif` line (the file's off branches are worked out only when one does). */
  conditionals: boolean;
  /** Its wrapper calls' launches, once read. */
  calls?: ChunkCalls;
  /** The chunk's part of the constants keys, for the line it was on when they were summed (see constantsKey). */
  sums?: ConstantSums;
  environment: string | null;
}

/** Per-chunk results of one document's earlier versions, keyed by the chunk's text. */
export class TextPassCache {
  private entries = new Map<string, ChunkEntry>();
  private used = new Map<string, ChunkEntry>();
  /**
   * The last version's text, chunks and their entries (the next one is cut again only around its
   * edit), and its file-wide tables (kept when the chunks the edit replaced held the same).
   */
  layout:
    | {
        source: SourceText;
        chunks: readonly Chunk[];
        entries: readonly ChunkEntry[];
        body: Lazy<BodyContext>;
        constantsPart: string;
      }
    | undefined;

  lookup(text: string, masked: string): ChunkEntry | undefined {
    const entry = this.used.get(text) ?? this.entries.get(text);
    if (!entry || entry.masked !== masked) return undefined;
    this.used.set(text, entry);
    return entry;
  }

  store(entry: ChunkEntry): void {
    this.used.set(entry.key, entry);
  }

  /** Forget chunks the last version did not have. */
  sweep(): void {
    this.entries = this.used;
    this.used = new Map();
  }
}

export function runTextPasses({
  source,
  outer,
  describe,
  outerMacros,
  outerWrappers,
  outerKey,
  cache = new TextPassCache(),
}: TextPassInput): TextFacts {
  const previous = cache.layout;
  const { chunks, previousIndex } = layoutChunks(source, previous);
  // The chunks read for the first time, as pieces of the document: the passes below read the same
  // piece, and what its scanners find once (directives, namespaces) is theirs to share.
  const pieces = new Map<Chunk, SourceText>();
  const parts = chunks.map((chunk, k) => {
    // A chunk the edit did not touch has the previous version's text: its entry, without looking it up by text.
    let entry = previousIndex[k] >= 0 ? previous!.entries[previousIndex[k]] : undefined;
    if (!entry) {
      // Copied before it is looked up: the copy is the key a new entry is stored under, and a string
      // is hashed once (a chunk's text runs to a few KB; the keystroke path looks up few chunks).
      const text = ownCopy(source.text.slice(chunk.start, chunk.end));
      const masked = source.masked.slice(chunk.start, chunk.end);
      entry = cache.lookup(text, masked);
      if (!entry) {
        // Read from its own copy of the chunk: what the passes cut from it keeps only the chunk alive, which
        // its entry does anyway (a slice of the document would keep this version's whole text, for as long as
        // the chunk stays unchanged).
        const piece = chunkSource(source, chunk, text, ownCopy(masked));
        pieces.set(chunk, piece);
        entry = newEntry(piece, chunk.line);
      }
    }
    cache.store(entry);
    return { chunk, entry };
  });
  const entries = parts.map((p) => p.entry);
  // The file's `#if` branches that are off: their launches are not reported, their definitions not read.
  // Only a file with a conditional has any (each chunk says whether it holds one: the file is not scanned again).
  const inactive = entries.some((e) => e.conditionals) ? findInactiveRanges(source) : NO_INACTIVE_RANGES;
  const constants = mergeConstants(
    source,
    parts.map(({ chunk, entry }) => ({
      chunk,
      table: entry.constants,
      definitions: entry.definitions,
      moved: chunk.line - entry.line,
    })),
    inactive,
  );
  // Hashed: it is compared once per chunk and per launch, and the constants of a large file written out run
  // long (45,000 characters for the 1,600 constants of the 35k-line bench file).
  const sums = parts.map(({ chunk, entry }) => constantSums(entry, chunk.line));
  const environment = hash(`${outerKey}\n${constantsKey(constants, sums, 'withLines')}`);
  // The file's function-like macros, then those of its includes (outerMacros changes with outerKey).
  const macros = !outerMacros?.size
    ? constants.macros
    : !constants.macros
      ? outerMacros
      : new Map([...outerMacros, ...constants.macros]);
  const lookup = makeLookup([constants], outer);
  // Constants count by name and value, not by where they are: typing in a `const` line, or a line break above
  // one, invalidates no kernel; a change to what the workspace answers (a header saved) invalidates them all.
  const constantsPart = `${outerKey}\n${constantsKey(constants, sums, 'withoutLines')}`;
  // The body context is the previous version's where the entries the edit replaced held the same as the
  // ones that replace them (typing in a kernel body changes no function name or directive). Taken now,
  // as plain data: holding the previous version's lazy value would hold every version before it.
  const keptBody = previous?.body.peek();
  const kept = keptBody
    ? {
        body: keptBody,
        sameConstants: previous!.constantsPart === constantsPart,
        edit: replacedEntries(previous!.entries, previousIndex, entries),
      }
    : undefined;
  const placed = parts.map(({ chunk, entry }) => ({ entry, moved: chunk.line - entry.line }));
  const body = lazyBodyContext(placed, constantsPart, kept);
  const facts: TextFacts = {
    constants,
    environment,
    bodyContext: body.get,
    kernels: [],
    launches: [],
    smemOptIns: [],
    wrappers: [],
  };
  cache.layout = { source, chunks, entries, body, constantsPart };
  for (const { chunk, entry } of parts) {
    // Read from the entry's copy of the chunk (see above).
    const piece = () => pieces.get(chunk) ?? chunkSource(source, chunk, entry.key, entry.masked);
    if (!entry.results || entry.environment !== environment) {
      const read = piece();
      entry.results = {
        line: chunk.line,
        kernels: findKernels(read, { lookup }),
        ...findCalls(read, constants, outer, describe, macros),
      };
      entry.environment = environment;
    } else if (entry.results.line !== chunk.line) {
      // The chunk moved: spans shift; a note that cites a line (`threads = 256 (local, line 48)`) is written again.
      const delta = chunk.line - entry.results.line;
      const { launches, smemOptIns, wrappers } = entry.results;
      entry.results = {
        line: chunk.line,
        kernels: shiftLines(entry.results.kernels, delta),
        ...(citesLines(launches) || smemOptIns.some((o) => citesLine(o.bytes.note))
          ? findCalls(piece(), constants, outer, describe, macros)
          : {
              launches: shiftLines(launches, delta),
              smemOptIns: shiftLines(smemOptIns, delta),
              wrappers: movedWrappers(wrappers, delta),
            }),
      };
    }
    facts.kernels.push(...entry.results.kernels);
    facts.smemOptIns.push(...entry.results.smemOptIns);
    if (entry.results.wrappers.length) facts.wrappers.push(...entry.results.wrappers);
  }
  const calls = readWrapperCalls(
    parts,
    {
      source,
      constants,
      outer,
      describe,
      macros,
      environment,
      outerWrappers,
      piece: (chunk, entry) => pieces.get(chunk) ?? chunkSource(source, chunk, entry.key, entry.masked),
    },
    facts.wrappers,
  );
  if (calls) facts.wrappers.push(...calls.wrappers);
  for (let k = 0; k < parts.length; k++) {
    const own = calls?.byChunk[k];
    const written = parts[k].entry.results!.launches;
    const launches = own?.length ? [...written, ...own].sort(byPlace) : written;
    if (inactive.certain.length === 0) facts.launches.push(...launches);
    else
      for (const launch of launches)
        if (!isInactive(inactive.certain, offsetAt(source, launch.span.start))) facts.launches.push(launch);
  }
  cache.sweep();
  return facts;
}

const NO_WRAPPERS: ReadonlyMap<string, readonly WrapperRef[]> = new Map();

function byPlace(a: Launch, b: Launch): number {
  return a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character;
}

function citesLine(note: string | null): boolean {
  return note !== null && /\bline \d/.test(note);
}

function citesLines(launches: readonly Launch[]): boolean {
  return launches.some((l) => citesLine(l.grid.note) || citesLine(l.block.note) || citesLine(l.dynamicSmem.note));
}

function movedWrappers(wrappers: readonly WrapperDefinition[], delta: number): WrapperDefinition[] {
  return wrappers.map((w) => movedWrapper(w, delta));
}

interface CallContext {
  source: SourceText;
  constants: ConstantTable;
  outer: Lookup | undefined;
  describe: TextPassInput['describe'];
  macros: ReadonlyMap<string, MacroDefinition> | undefined;
  environment: string;
  outerWrappers: ReadonlyMap<string, readonly WrapperRef[]> | undefined;
  piece: (chunk: Chunk, entry: ChunkEntry) => SourceText;
}

/**
 * The launches each chunk's calls of wrappers make, and the wrappers those calls make of their
 * functions: read with the wrappers in view (the workspace's and the file's), again with the ones
 * found, until no new one is (a wrapper that calls a wrapper). Kept per chunk while the wrappers in
 * view and the chunk's environment stay the same; a chunk that names none of them reads nothing.
 */
function readWrapperCalls(
  parts: ReadonlyArray<{ chunk: Chunk; entry: ChunkEntry }>,
  ctx: CallContext,
  direct: readonly WrapperDefinition[],
): { byChunk: Launch[][]; wrappers: WrapperDefinition[] } | null {
  const outerWrappers = ctx.outerWrappers ?? NO_WRAPPERS;
  // No wrapper in view (most files): no call to read, nothing kept.
  if (direct.length === 0 && outerWrappers.size === 0) {
    for (const { entry } of parts) if (entry.calls) entry.calls = undefined;
    return null;
  }
  let derived: WrapperDefinition[] = [];
  let result: { byChunk: Launch[][]; wrappers: WrapperDefinition[] } | null = null;
  for (let round = 0, previous = ''; round < 4; round++) {
    const own = [...direct, ...derived];
    const inView = withOwnWrappers(outerWrappers, own, ctx.constants, ctx.outer);
    if (inView.size === 0) break;
    const key = `${ctx.environment}|${hash(wrappersKey(own))}|${inView.size}`;
    const names = triggerNames(inView, ctx.macros);
    const byChunk: Launch[][] = [];
    const found: WrapperDefinition[] = [];
    for (const { chunk, entry } of parts) {
      if (!names.some((n) => entry.masked.includes(n))) {
        byChunk.push([]);
        continue;
      }
      let calls = entry.calls;
      if (!calls || calls.key !== key) {
        const read = findCallLaunches(ctx.piece(chunk, entry), {
          fileConstants: ctx.constants,
          fallback: ctx.outer,
          describe: ctx.describe,
          macros: ctx.macros,
          wrappers: inView,
        });
        calls = { key, line: chunk.line, launches: read.launches, wrappers: read.wrappers };
      } else if (calls.line !== chunk.line) {
        const delta = chunk.line - calls.line;
        calls = citesLines(calls.launches)
          ? {
              ...calls,
              ...findCallLaunches(ctx.piece(chunk, entry), {
                fileConstants: ctx.constants,
                fallback: ctx.outer,
                describe: ctx.describe,
                macros: ctx.macros,
                wrappers: inView,
              }),
              line: chunk.line,
            }
          : {
              key,
              line: chunk.line,
              launches: shiftLines(calls.launches, delta),
              wrappers: movedWrappers(calls.wrappers, delta),
            };
      }
      entry.calls = calls;
      byChunk.push(calls.launches);
      found.push(...calls.wrappers);
    }
    result = { byChunk, wrappers: found };
    const next = wrappersKey(found);
    if (next === previous) break;
    previous = next;
    derived = found;
  }
  return result;
}

/** The names a chunk must write for its calls to be read: the wrappers', and those of the macros that call one. */
function triggerNames(
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>,
  macros: ReadonlyMap<string, MacroDefinition> | undefined,
): string[] {
  const names = [...wrappers.keys()];
  if (macros) for (const [name, def] of macros) if (names.some((n) => def.body.includes(n))) names.push(name);
  return names;
}

type KeptBodyContext = {
  body: BodyContext;
  sameConstants: boolean;
  edit: { removed: ChunkEntry[]; added: ChunkEntry[] };
};

/**
 * bodyContextOf, when first asked for. Made here, not in runTextPasses: a closure there would share
 * its scope, and hold this version's text and the previous version's layout (and so every version before).
 */
function lazyBodyContext(
  placed: ReadonlyArray<{ entry: ChunkEntry; moved: number }>,
  constantsPart: string,
  kept: KeptBodyContext | undefined,
): Lazy<BodyContext> {
  return lazy(() => bodyContextOf(placed, constantsPart, kept));
}

/**
 * The body context of chunks `placed` (each entry with how many lines its chunk moved since it was read),
 * taking what `kept` (the previous version's, and the entries the edit replaced) still holds. The chunks
 * hold whole directives and device functions: the file's are theirs, in order, whichever way the file is
 * cut (content-defined chunk ends move when the text before them changes).
 */
function bodyContextOf(
  placed: ReadonlyArray<{ entry: ChunkEntry; moved: number }>,
  constantsPart: string,
  kept: KeptBodyContext | undefined,
): BodyContext {
  const unchanged = (part: (body: ChunkBodyParts) => readonly string[]) =>
    kept !== undefined &&
    sameItems(
      kept.edit.removed.flatMap((e) => part(bodyPartsOf(e))),
      kept.edit.added.flatMap((e) => part(bodyPartsOf(e))),
    );
  const bodies = placed.map(({ entry }) => bodyPartsOf(entry));
  const contexts = bodies.map((b) => b.context);
  const contextKey =
    kept?.sameConstants &&
    unchanged((b) => b.context.directives) &&
    unchanged((b) => b.context.deviceFunctions.filter((d) => d.name === null).map((d) => d.text))
      ? kept.body.contextKey
      : contextKeyOf(contexts, constantsPart);
  const functionNames =
    kept && unchanged((b) => b.functionNames)
      ? kept.body.functionNames
      : new Set(bodies.flatMap((b) => b.functionNames));
  let deviceFunctions = kept?.body.deviceFunctions;
  let devicesKey = kept?.body.devicesKey;
  if (!deviceFunctions || devicesKey === undefined || !unchanged((b) => [b.devices])) {
    const named = new Map<string, string[]>();
    for (const d of contexts.flatMap((p) => p.deviceFunctions))
      if (d.name !== null) named.set(d.name, [...(named.get(d.name) ?? []), d.text]);
    deviceFunctions = named;
    devicesKey = hash(bodies.map((b) => b.devices).join(','));
  }
  const devicePlaces = hash(
    placed.flatMap(({ moved }, k) => contexts[k].deviceFunctions.map((d) => d.line + moved)).join(','),
  );
  return { contextKey, deviceFunctions, devicesKey, devicePlaces, functionNames };
}

/** fileContextParts of one chunk alone, a hash of its named device functions, and the names it may define. */
interface ChunkBodyParts {
  context: FileContextParts;
  devices: string;
  functionNames: string[];
}

/** The entry's part of the body context: read from the chunk the first time it is asked for. */
function bodyPartsOf(entry: ChunkEntry): ChunkBodyParts {
  if (!entry.body) {
    const piece = entry.unread!;
    const context = fileContextParts(piece);
    entry.body = {
      context,
      devices: hash(
        context.deviceFunctions
          .filter((d) => d.name !== null)
          .map((d) => `${d.name}:${d.text}`)
          .join('\n'),
      ),
      functionNames: definedFunctionNames(piece.masked),
    };
    entry.unread = undefined;
  }
  return entry.body;
}

/** A value computed the first time it is asked for; `peek` tells whether it was. */
interface Lazy<T> {
  get: () => T;
  peek: () => T | undefined;
}

function lazy<T>(compute: () => T): Lazy<T> {
  let value: T | undefined;
  let done = false;
  return {
    get: () => {
      if (!done) {
        value = compute();
        done = true;
      }
      return value as T;
    },
    peek: () => (done ? value : undefined),
  };
}

/**
 * The previous version's entries that no chunk kept by position (the edit replaced them), and this
 * version's entries not taken by position, each in file order. They are the same run of the file.
 */
function replacedEntries(
  previous: readonly ChunkEntry[],
  previousIndex: readonly number[],
  entries: readonly ChunkEntry[],
): { removed: ChunkEntry[]; added: ChunkEntry[] } {
  const kept = new Array<boolean>(previous.length).fill(false);
  for (const k of previousIndex) if (k >= 0) kept[k] = true;
  return { removed: previous.filter((_, k) => !kept[k]), added: entries.filter((_, k) => previousIndex[k] < 0) };
}

function findCalls(
  piece: SourceText,
  constants: ConstantTable,
  outer: Lookup | undefined,
  describe: TextPassInput['describe'],
  macros: ReadonlyMap<string, MacroDefinition> | undefined,
): Pick<ChunkResults, 'launches' | 'smemOptIns' | 'wrappers'> {
  const { launches, wrappers } = findDirectLaunches(piece, {
    fileConstants: constants,
    fallback: outer,
    describe,
    macros,
  });
  return {
    launches,
    wrappers,
    smemOptIns: findSmemOptIns(piece, { fileConstants: constants, fallback: outer }),
  };
}

/**
 * Every name written as `name(…)` (its parentheses closed before any `;`, `{` or `}`) followed by a
 * `{` before any `;` or `}`: a superset of the functions a chunk defines. One pass over the brackets
 * and stops: a name waits on a stack until its `)`, then until the next stop, which decides. Names
 * are kept as offsets (most are calls, never cut out).
 */
function definedFunctionNames(masked: string): string[] {
  const names = new Set<string>();
  /** For each open parenthesis, the name before it: start and end offsets (-1, -1 when none); `open[0, openTop)`. */
  const open: number[] = [];
  let openTop = 0;
  /** Names whose parentheses closed since the last stop, as start and end offsets; `closed[0, closedTop)`. */
  const closed: number[] = [];
  let closedTop = 0;
  for (let i = 0; i < masked.length; i++) {
    const c = masked.charCodeAt(i);
    // Not one of `(){};` (40 41 59 123 125): most characters, passed over in a comparison or two.
    if (c < OPEN_PAREN || (c > CLOSE_PAREN && c !== SEMICOLON && c < OPEN_BRACE) || c > CLOSE_BRACE || c === 124)
      continue;
    if (c === OPEN_PAREN) {
      // The identifier (`[A-Za-z_]\w*`, a whole word) before the parenthesis, blanks between, or -1, -1.
      const end = blanksStart(masked, i);
      const start = wordStart(masked, end);
      const named = start < end && !isDigit(masked.charCodeAt(start));
      open[openTop++] = named ? start : -1;
      open[openTop++] = named ? end : -1;
    } else if (c === CLOSE_PAREN) {
      if (openTop === 0) continue;
      const end = open[--openTop];
      const start = open[--openTop];
      if (start >= 0) {
        closed[closedTop++] = start;
        closed[closedTop++] = end;
      }
    } else {
      // Names in the order they are written, as a left-to-right reading finds them.
      if (c === OPEN_BRACE)
        for (const k of pairsByStart(closed, closedTop)) names.add(masked.slice(closed[k], closed[k + 1]));
      closedTop = 0;
      openTop = 0; // a stop inside parentheses: they match nothing
    }
  }
  return [...names];
}

const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const SEMICOLON = 59;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** The indexes of the (start, end) pairs in `pairs[0, length)`, by start. */
function pairsByStart(pairs: readonly number[], length: number): number[] {
  if (length === 0) return [];
  if (length === 2) return [0];
  const order: number[] = [];
  for (let k = 0; k < length; k += 2) order.push(k);
  return order.sort((a, b) => pairs[a] - pairs[b]);
}

/** Where the blanks that end before `at` start. */
function blanksStart(masked: string, at: number): number {
  while (at > 0 && isBlank(masked.charCodeAt(at - 1))) at--;
  return at;
}

/** Where the word characters that end before `at` start. */
function wordStart(masked: string, at: number): number {
  while (at > 0 && isWordCode(masked.charCodeAt(at - 1))) at--;
  return at;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isBlank(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** A chunk read for the first time (`piece`, on its own copy of the text), on document line `line`. */
function newEntry(piece: SourceText, line: number): ChunkEntry {
  const { table, definitions } = collectConstantDefinitions(piece);
  return {
    key: piece.text,
    masked: piece.masked,
    constants: table,
    definitions,
    line,
    // A piece of its own: what the passes find in `piece` once (directives, namespaces) is not kept with the entry.
    unread: { text: piece.text, masked: piece.masked, lineStarts: piece.lineStarts, firstLine: piece.firstLine },
    results: null,
    environment: null,
    conditionals: hasConditionals(piece),
  };
}

/** One chunk as a piece of the document: its positions are the document's. */
function chunkSource(source: SourceText, chunk: Chunk, text: string, masked: string): SourceText {
  const lineStarts: number[] = [];
  // Up to the line that starts at the chunk's end: an offset there (a definition left open) is that line's start, as in the whole file.
  for (let line = chunk.line; line < source.lineStarts.length && source.lineStarts[line] <= chunk.end; line++)
    lineStarts.push(source.lineStarts[line] - chunk.start);
  return { text, masked, lineStarts, firstLine: chunk.line };
}

/**
 * The chunks' tables as one, as collectConstants reads a whole file: a name
 * defined twice is ambiguous, and a file-scope `dim3` assigned again in a
 * later chunk (`b.x = 512;` in some function) has no known value.
 */
function mergeConstants(
  source: SourceText,
  tables: ReadonlyArray<{
    chunk: Chunk;
    table: ConstantTable;
    definitions: readonly ConstantDefinition[];
    moved: number;
  }>,
  inactive: InactiveRanges,
): ConstantTable {
  const constants = new Map<string, ConstantDefinition>();
  const dim3s = new Map<string, Dim3Definition>();
  const decide = inactive.certain.length > 0 || inactive.assumed.length > 0;
  const definitions: ConstantDefinition[] = [];
  for (const { chunk, table, definitions: written, moved: lines } of tables) {
    for (const def of table.constants.values()) {
      const moved = { ...def, offset: def.offset + chunk.start, line: (def.line ?? 0) + lines };
      constants.set(def.name, constants.has(def.name) ? { ...moved, expr: '' } : moved);
    }
    if (decide)
      for (const def of written)
        definitions.push({ ...def, offset: def.offset + chunk.start, line: (def.line ?? 0) + lines });
    const atFileScope = fileScopeOf(source, chunk);
    for (const def of table.dim3s.values()) {
      const offset = def.offset + chunk.start;
      const known =
        def.args.length > 0 &&
        !dim3s.has(def.name) &&
        !(atFileScope(def) && isReassigned(source.masked, def.name, chunk.end, source.masked.length, true));
      dim3s.set(def.name, { name: def.name, args: known ? def.args : [], offset });
    }
  }
  // A chunk decides the branches it holds whole; the file decides those that run over several chunks.
  if (decide) decideBranches(constants, definitions, inactive);
  const table: ConstantTable = { constants, dim3s, shadowed: new Map() };
  const macros = mergeMacros(tables, inactive);
  if (macros) table.macros = macros;
  return table;
}

/** The chunks' function-like macros as one table (see mergeConstants). */
function mergeMacros(
  tables: ReadonlyArray<{ chunk: Chunk; table: ConstantTable; moved: number }>,
  inactive: InactiveRanges,
): Map<string, MacroDefinition> | undefined {
  let macros: Map<string, MacroDefinition> | undefined;
  let all: MacroDefinition[] | undefined;
  for (const { chunk, table, moved: lines } of tables) {
    if (!table.macros) continue;
    macros ??= new Map();
    for (const def of table.macros.values()) {
      const moved = { ...def, offset: def.offset + chunk.start, line: (def.line ?? 0) + lines };
      const prior = macros.get(def.name);
      macros.set(def.name, prior && prior.body !== def.body ? { ...moved, body: '' } : moved);
      (all ??= []).push(moved);
    }
  }
  if (macros && all && (inactive.certain.length || inactive.assumed.length)) decideMacroBranches(macros, all, inactive);
  return macros;
}

/**
 * Whether a definition sits outside every brace of its chunk. The braces are counted on from the last definition
 * asked about (they come in the text's order): a function with 20,000 `dim3`s counted its text 20,000 times.
 */
function fileScopeOf(source: SourceText, chunk: Chunk): (def: Dim3Definition) => boolean {
  const masked = source.masked;
  let at = chunk.start;
  let depth = 0;
  return (def) => {
    const end = chunk.start + def.offset;
    if (end < at) {
      at = chunk.start;
      depth = 0;
    }
    for (; at < end; at++) {
      const c = masked.charCodeAt(at);
      if (c === 123) depth++;
      else if (c === 125) depth--;
    }
    return depth <= 0;
  };
}

/**
 * What the kernels and launches read of the constants: names, expressions and lines (notes cite
 * them), or names and expressions only. The constants count as a multiset, summed chunk by chunk:
 * the same definitions give the same key whichever way the file is cut (content-defined chunk ends
 * move when the text before them changes), and a keystroke adds up one sum per chunk instead of
 * writing out and sorting every definition. The file-scope `dim3`s come from the merged table (a
 * later assignment makes one unknown).
 */
function constantsKey(
  table: ConstantTable,
  sums: readonly ConstantSums[],
  which: 'withLines' | 'withoutLines',
): string {
  let a = 0;
  let b = 0;
  for (const sum of sums) {
    a = (a + sum[which][0]) >>> 0;
    b = (b + sum[which][1]) >>> 0;
  }
  const dim3s: string[] = [];
  for (const d of table.dim3s.values()) dim3s.push(`${d.name}(${d.args.map(tokens).join(',')})`);
  return `${a.toString(36)}.${b.toString(36)}|${dim3s.sort().join('\n')}`;
}

interface ConstantSums {
  line: number;
  withLines: [number, number];
  withoutLines: [number, number];
}

/**
 * A chunk's constants as two sums of per-definition hashes, kept while the chunk stays on `line`. Summed
 * over every definition written, not the chunk's table: a table says once that a name written twice
 * is ambiguous, and two chunks that each write it once, merged by an edit that moves the end between
 * them (content-defined), would change the key of every kernel in the file.
 */
function constantSums(entry: ChunkEntry, line: number): ConstantSums {
  if (entry.sums && entry.sums.line === line) return entry.sums;
  const moved = line - entry.line;
  const withLines: [number, number] = [0, 0];
  const withoutLines: [number, number] = [0, 0];
  for (const d of entry.definitions) {
    const definition = `${d.name}=${tokens(d.expr)}:${d.kind}`;
    addHash(withoutLines, definition);
    addHash(withLines, `${definition}@${(d.line ?? 0) + moved}`);
  }
  return (entry.sums = { line, withLines, withoutLines });
}

/** Add hashHalves of `text` to `sum`, half by half. */
function addHash(sum: [number, number], text: string): void {
  const [h1, h2] = hashHalves(text);
  sum[0] = (sum[0] + h1) >>> 0;
  sum[1] = (sum[1] + h2) >>> 0;
}

/** An expression without the blanks that do not separate two words: a space typed into `(n + 1)` changes no value. */
function tokens(expr: string): string {
  return expr.replace(/\s+/g, (blank, at: number) =>
    /\w/.test(expr[at - 1] ?? '') && /\w/.test(expr[at + blank.length] ?? '') ? ' ' : '',
  );
}
