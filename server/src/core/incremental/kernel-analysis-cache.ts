/**
 * Results of the per-kernel tree passes (divergence, memory-level
 * parallelism), kept between versions of one document. A kernel whose text,
 * launch shapes and file-level context did not change is not analysed again;
 * if only lines above it moved, its results are shifted to the new lines. The
 * keystroke path then pays only for the kernel being edited.
 */
import type { Kernel, Launch, Span } from '../types';
import { matchingClose, offsetAt, positionAt, type SourceText } from '../text/source-text';
import { findDirectiveRanges } from '../text/preprocessor-lines';
import { detach } from './engine-seams';
import { objectTable } from './kept-tables';

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
  /** The same names, as a key: what a kernel's callee key is kept by across versions. */
  functionNamesKey: string;
}

interface Entry<T> {
  value: T;
  line: number;
  /** The last analysis that used it (see sweep). */
  usedBy: number;
}

export class KernelAnalysisCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  /** Counts the analyses (sweeps): an entry marked with this one is in use. */
  private analysis = 0;

  /** The cached value for `key`, shifted to `line`, or undefined. */
  get<T>(key: string, line: number): T | undefined {
    const entry = this.entries.get(key) as Entry<T> | undefined;
    if (!entry) return undefined;
    entry.usedBy = this.analysis;
    return entry.line === line ? entry.value : shiftLines(entry.value, line - entry.line);
  }

  /** Keeps `value`, its strings made its own (see `detach`): a slice of this version's text would keep all of it. */
  set<T>(key: string, line: number, value: T): void {
    this.entries.set(key, { value: detach(value), line, usedBy: this.analysis });
  }

  /** Drop the entries the last analysis did not use (kernels deleted or changed). */
  sweep(): void {
    for (const [key, entry] of this.entries) if (entry.usedBy !== this.analysis) this.entries.delete(key);
    this.analysis++;
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * What a kernel's tree passes depend on besides its own text and launches: the
 * file's directives (macros), its constants (names and values), and the whole
 * text of the `__device__` functions it calls, directly or through others (a
 * kernel may take its thread index through one). The pieces come from the
 * chunks of the file, in order.
 */
export interface FileContextParts {
  directives: string[];
  deviceFunctions: DeviceFunctionText[];
}

export interface DeviceFunctionText {
  /** Null when the header names none the scanner can read: then every kernel depends on it. */
  name: string | null;
  /** The line it starts on, when the piece was read. */
  line: number;
  /** Its text, blanks squeezed. */
  text: string;
}

/** The part of every kernel's context that all share: directives, constants, device functions without a name. */
export function contextKeyOf(pieces: readonly FileContextParts[], constants: string): string {
  const unnamed = pieces.flatMap((p) => p.deviceFunctions.filter((d) => d.name === null).map((d) => d.text));
  return hash([...pieces.flatMap((p) => p.directives), constants, ...unnamed].join('\n'));
}

/**
 * The functions a kernel may call: those whose name its body calls, then those their texts call,
 * and so on; as a key (empty when it calls none). `devices` are the file's `__device__` functions.
 * The body passes also follow calls into the file's other functions (a `constexpr` one, which
 * device code calls under `--expt-relaxed-constexpr`; one that a macro marks `__device__`; one of
 * code that does not compile yet): `others` says which names they may follow and gives each one's
 * text, or null (then the definition's place and text, from the syntax tree). `usesOthers` says
 * whether `others` was asked about some called name.
 */
export function calleesKey(
  kernelBody: string,
  devices: ReadonlyMap<string, string[]>,
  others?: { mayDefine: (name: string) => boolean; text: (name: string) => string | null },
): { key: string; usesOthers: boolean } {
  if (devices.size === 0 && !others) return { key: '', usesOthers: false };
  const seen = new Set<string>();
  const texts: string[] = [];
  let usesOthers = false;
  // Depth first, each body right after the call that reaches it; with a stack of its own, not the call stack
  // (a chain of 20,000 device functions, each calling the next, overflowed it).
  const stack: Array<Iterator<RegExpMatchArray>> = [calls(kernelBody)];
  while (stack.length > 0) {
    const next = stack[stack.length - 1].next();
    if (next.done) {
      stack.pop();
      continue;
    }
    const name = next.value[1];
    if (seen.has(name)) continue;
    seen.add(name);
    const bodies = devices.get(name);
    if (bodies) {
      // Each body, and what it calls, before the next body of the same name.
      stack.push(...bodies.map((body) => visitBody(body)).reverse());
    } else if (others && !NOT_CALLS.has(name) && others.mayDefine(name)) {
      usesOthers = true;
      const body = others.text(name);
      if (body === null) continue;
      texts.push(`${name}@${body}`);
      stack.push(calls(body));
    }
  }
  function* visitBody(body: string): Generator<RegExpMatchArray> {
    texts.push(body);
    yield* calls(body);
  }
  return { key: texts.length ? hash(texts.join('\n')) : '', usesOthers };
}

/** The calls in a text: `f(`, and `f<T>(` for a template device function. */
function calls(text: string): IterableIterator<RegExpMatchArray> {
  return text.matchAll(/\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>\s*)?\(/g);
}

/** Words written like calls (`if (`, `sizeof(`) that name no function. */
const NOT_CALLS = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'return',
  'sizeof',
  'alignof',
  'decltype',
  'static_assert',
  'defined',
  'do',
  'else',
  'case',
  'throw',
  'new',
  'delete',
  'noexcept',
  'typeid',
  'alignas',
]);

export function fileContextParts(source: SourceText): FileContextParts {
  // Whitespace is normalised: re-indenting a constant does not invalidate every kernel.
  const squeeze = (t: string) => t.replace(/\s+/g, ' ').trim();
  const directives = findDirectiveRanges(source).map(([a, b]) => squeeze(source.text.slice(a, b)));
  const deviceFunctions: DeviceFunctionText[] = [];
  const device = /\b__device__\b/g;
  for (let m = device.exec(source.masked); m; m = device.exec(source.masked)) {
    const stop = source.masked.slice(m.index).search(/[;{]/);
    if (stop < 0) break;
    const open = m.index + stop;
    if (source.masked[open] !== '{') continue;
    const close = matchingClose(source.masked, open);
    const name = /([A-Za-z_]\w*)\s*\(/.exec(source.masked.slice(m.index, open))?.[1] ?? null;
    deviceFunctions.push({
      name,
      line: positionAt(source, m.index).line,
      text: squeeze(source.text.slice(m.index, close < 0 ? source.text.length : close + 1)),
    });
    if (close > 0) device.lastIndex = close;
  }
  return { directives, deviceFunctions };
}

/** The cache key of one kernel: its text from its first column, its column, its launches' shapes and the file context. */
export function kernelKey(source: SourceText, kernel: Kernel, launches: readonly Launch[], context: string): string {
  const start = () => offsetAt(source, kernel.span.start);
  const end = () => offsetAt(source, kernel.span.end);
  const mine = launches.filter((l) => l.baseName === kernel.name);
  // An unresolved block is quoted by its text, the first one in launch order ("launches with an
  // unresolved block size (`threads`) not checked"): its text is part of the key, in that order.
  const shapes = [
    ...mine
      .filter((l) => l.block.value)
      .map((l) => `${l.block.value!.x}x${l.block.value!.y}x${l.block.value!.z}`)
      .sort(),
    ...mine.filter((l) => !l.block.value).map((l) => `?${l.block.text}`),
  ].join(',');
  // The instances the launches make (divergence.ts, instancesOf): their template arguments as
  // written and read, and the constants they pass (a size every launch fixes binds a parameter).
  const instances = mine
    .map((l) => JSON.stringify([l.templateArgs ?? null, l.templateArgValues ?? null, l.argValues ?? null]))
    .sort()
    .join(',');
  let text = kernelTexts.get(kernel);
  if (text === undefined) kernelTexts.set(kernel, (text = hash(source.text.slice(start(), end()))));
  return `${kernel.span.start.character}|${shapes}|${hash(instances)}|${context}|${text}`;
}

/**
 * The hash of each kernel's text, by kernel: a kernel that a chunk kept from an earlier version
 * is the same object with the same text, and is not hashed again on every keystroke.
 */
const kernelTexts = objectTable<Kernel, string>('kernel text hashes');

/** A 64-bit key for equal-text checks (see hashHalves). */
export function hash(text: string): string {
  if (text.length < LONG_TEXT) return hashOf(text);
  let kept = longHashes.young.get(text);
  if (kept === undefined) {
    kept = longHashes.old.get(text) ?? hashOf(text);
    keepLongHash(text, kept);
  }
  return kept;
}

function hashOf(text: string): string {
  const [h1, h2] = hashHalves(text);
  return `${h1.toString(36)}${h2.toString(36)}:${text.length}`;
}

/**
 * The hashes of long texts (a unit's files), by the text itself: every unit of a repository keys
 * the headers it includes by their text, and looking a string up again costs far less than hashing
 * it again. Kept in two generations of at most LONG_TEXT_BUDGET characters each: what it holds of
 * an editor's earlier versions of a document is bounded by that (a few MB), and a repository's
 * units mostly include the same headers one after the other.
 */
const LONG_TEXT = 256;
const LONG_TEXT_BUDGET = 2_000_000;
const longHashes = { young: new Map<string, string>(), old: new Map<string, string>(), chars: 0 };

function keepLongHash(text: string, value: string): void {
  if (longHashes.chars + text.length > LONG_TEXT_BUDGET) {
    longHashes.old = longHashes.young;
    longHashes.young = new Map();
    longHashes.chars = 0;
  }
  longHashes.young.set(text, value);
  longHashes.chars += text.length;
}

/** FNV-1a over UTF-16 code units, twice with different seeds: two unsigned 32-bit halves. */
export function hashHalves(text: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  return [h1 >>> 0, h2 >>> 0];
}

/** A deep copy of plain data with every span's lines moved by `delta`. */
export function shiftLines<T>(value: T, delta: number): T {
  if (delta === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => shiftLines(v, delta)) as T;
  if (isSpan(value)) {
    return {
      ...value,
      start: { ...value.start, line: value.start.line + delta },
      end: { ...value.end, line: value.end.line + delta },
    } as T;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = shiftLines(v, delta);
  return out as T;
}

function isSpan(value: object): value is Span {
  const v = value as Partial<Span>;
  return typeof v.start?.line === 'number' && typeof v.end?.line === 'number' && typeof v.start?.character === 'number';
}
