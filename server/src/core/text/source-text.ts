/**
 * A document's text with the facts every scanner needs: line starts for
 * offset/position conversion, and a masked copy in which comments, string and
 * character literals are blanked (same length, newlines kept), so that regular
 * expressions over it never match inside a comment or a string.
 */
import type { Position, Span } from '../types';

export interface SourceText {
  readonly text: string;
  /** `text` with comments and literals replaced by spaces. */
  readonly masked: string;
  readonly lineStarts: readonly number[];
  /** The document line `text` starts on, when it is a piece of a document (default 0); positions count from it. */
  readonly firstLine?: number;
  /**
   * Of a whole document's text: where each comment and literal starts and ends (offset pairs, in
   * order), and whether an `#elif`/`#else` line may have blanked braces. The next version is then
   * masked again only around its edit (see makeSourceText).
   */
  readonly regions?: readonly number[];
  readonly alternateBranches?: boolean;
}

/** `position` lies in `span` (both ends included). */
export function contains(span: Span, position: Position): boolean {
  const after = (a: Position, b: Position) => a.line > b.line || (a.line === b.line && a.character >= b.character);
  return after(position, span.start) && after(span.end, position);
}

/**
 * `text` with its masked copy and line starts. With `previous` (an earlier version of the same
 * document), only the lines around the edit are masked again: from a line start before it that
 * lies outside every comment and literal, to the first line start after it where the scan is
 * outside them again and the previous version's was too, from where the masked text is the
 * previous one's. The result is the same as without `previous`.
 */
export function makeSourceText(text: string, previous?: SourceText): SourceText {
  return (previous && remask(text, previous)) ?? maskWhole(text);
}

function maskWhole(text: string): SourceText {
  // A lone `\r` ends a line (as for LSP and compilers): masked as `\n` (same length) so that
  // `//` comments, directives and line-based scans end there too.
  const lines = text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text;
  const regions: number[] = [];
  const masked = maskRange(lines, 0, regions).masked;
  const alternateBranches = ALTERNATE_BRANCH.test(masked);
  return {
    text,
    masked: alternateBranches ? blankAlternateBranchBraces(masked) : masked,
    lineStarts: computeLineStarts(text),
    regions,
    alternateBranches,
  };
}

/** A line that starts an `#elif`/`#else` branch (blanks before and after the `#`, on that line). */
const ALTERNATE_BRANCH = /^[^\S\n]*#[^\S\n]*el/m;

function remask(text: string, previous: SourceText): SourceText | null {
  const before = previous.text;
  const oldRegions = previous.regions;
  // Line ends other than `\n` and blanked braces are left to the whole-text path.
  if (!oldRegions || previous.alternateBranches !== false || before.includes('\r') || text.includes('\r')) return null;
  const prefix = commonPrefix(before, text);
  const suffix = commonSuffix(before, text, Math.min(before.length, text.length) - prefix);
  const delta = text.length - before.length;
  const editEnd = text.length - suffix;
  // Every line start before the edit is scanned as before; take one outside every comment and literal.
  // A comment or literal still open at the end of the previous text may go on into what follows it.
  const last = oldRegions.length - 2;
  const openAtEnd = last >= 0 && oldRegions[last + 1] >= before.length ? oldRegions[last] : -1;
  const inside = (at: number, orEndingAt = false): number => {
    const r = regionAround(oldRegions, at, orEndingAt);
    return r >= 0 ? oldRegions[r] : openAtEnd >= 0 && at > openAtEnd ? openAtEnd : -1;
  };
  // Not one a region ends at: a `//` comment whose backslash continues it over an empty line ends at
  // that line's start, and what is typed there goes on with the comment.
  let from = lineStartBefore(text, prefix);
  for (let start = inside(from, true); start >= 0; start = inside(from, true)) from = lineStartBefore(text, start);
  // A line start at or after the edit's end, outside every comment and literal here (the scan is between
  // two of them) and in the previous version: the rest scans as it did there.
  const resync = (lo: number, hi: number): number => {
    for (let p = text.indexOf('\n', Math.max(lo, editEnd, 1) - 1); p >= 0 && p < hi; p = text.indexOf('\n', p + 1)) {
      const q = p + 1;
      const old = q - delta;
      if (before.charCodeAt(old - 1) === NEWLINE && inside(old) < 0) return q;
    }
    return -1;
  };
  const regions: number[] = [];
  for (let k = 0; k < oldRegions.length && oldRegions[k + 1] <= from; k += 2)
    regions.push(oldRegions[k], oldRegions[k + 1]);
  const window = maskRange(text, from, regions, resync);
  const to = window.end;
  if (ALTERNATE_BRANCH.test(window.masked)) return null;
  const lineStarts: number[] = [];
  const oldStarts = previous.lineStarts;
  let k = 0;
  for (; k < oldStarts.length && oldStarts[k] <= from; k++) lineStarts.push(oldStarts[k]);
  for (let p = text.indexOf('\n', from); p >= 0 && p < to; p = text.indexOf('\n', p + 1)) lineStarts.push(p + 1);
  let masked = previous.masked.slice(0, from) + window.masked;
  if (to < text.length) {
    const old = to - delta;
    masked += previous.masked.slice(old);
    for (k = firstAbove(oldStarts, old); k < oldStarts.length; k++) lineStarts.push(oldStarts[k] + delta);
    for (k = firstRegionFrom(oldRegions, old); k < oldRegions.length; k++) regions.push(oldRegions[k] + delta);
  }
  return { text, masked, lineStarts, regions, alternateBranches: false };
}

/** The start of the line `at` is on (at a line start, that line's). */
function lineStartBefore(text: string, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
}

/** The index of the region pair that `at` lies strictly inside (or, with `orEndingAt`, that ends at `at`), or -1. */
function regionAround(regions: readonly number[], at: number, orEndingAt = false): number {
  // The last pair starting before `at`.
  let lo = 0;
  let hi = regions.length / 2 - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (regions[2 * mid] < at) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && (regions[2 * found + 1] > at || (orEndingAt && regions[2 * found + 1] === at)) ? 2 * found : -1;
}

/** The index of the first region pair starting at or after `at`. */
function firstRegionFrom(regions: readonly number[], at: number): number {
  let lo = 0;
  let hi = regions.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (regions[2 * mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return 2 * lo;
}

/** The index of the first entry above `at`. */
function firstAbove(sorted: readonly number[], at: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Compared a block at a time (a native comparison), then character by character in the block that differs. */
const BLOCK = 4096;

/** The length of the longest common prefix of `a` and `b`. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + BLOCK <= n && a.slice(i, i + BLOCK) === b.slice(i, i + BLOCK)) i += BLOCK;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** The length of the longest common suffix of `a` and `b`, at most `limit`. */
export function commonSuffix(a: string, b: string, limit: number): number {
  let i = 0;
  while (
    i + BLOCK <= limit &&
    a.slice(a.length - i - BLOCK, a.length - i) === b.slice(b.length - i - BLOCK, b.length - i)
  )
    i += BLOCK;
  while (i < limit && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++;
  return i;
}

/**
 * `#if A / if (x) { / #else / if (y) { / #endif` opens one brace in the
 * program but two in the text. In every `#elif`/`#else` branch whose braces do
 * not balance, blank the braces (only them: the code stays visible to the
 * scanners), so that brace matching follows the first branch.
 */
function blankAlternateBranchBraces(masked: string): string {
  // Most files have no alternate branch: do not split them into lines.
  if (!ALTERNATE_BRANCH.test(masked)) return masked;
  const lines = masked.split('\n');
  interface Group {
    branchStarts: number[];
  }
  const stack: Group[] = [];
  const alternates: Array<[number, number]> = [];
  lines.forEach((line, k) => {
    const d = /^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b/.exec(line)?.[1];
    if (!d) return;
    if (d.startsWith('if')) stack.push({ branchStarts: [k] });
    else if (stack.length && d.startsWith('el')) {
      const group = stack[stack.length - 1];
      if (group.branchStarts.length > 1) alternates.push([group.branchStarts[group.branchStarts.length - 1], k]);
      group.branchStarts.push(k);
    } else if (d === 'endif' && stack.length) {
      const group = stack.pop()!;
      if (group.branchStarts.length > 1) alternates.push([group.branchStarts[group.branchStarts.length - 1], k]);
    }
  });
  if (alternates.length === 0) return masked;
  for (const [from, to] of alternates) {
    let balance = 0;
    for (let k = from + 1; k < to; k++) for (const c of lines[k]) balance += c === '{' ? 1 : c === '}' ? -1 : 0;
    if (balance === 0) continue;
    for (let k = from + 1; k < to; k++) lines[k] = lines[k].replace(/[{}]/g, ' ');
  }
  return lines.join('\n');
}

function computeLineStarts(text: string): number[] {
  const starts = [0];
  if (!text.includes('\r')) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    return starts;
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) starts.push(i + 1);
    else if (c === 13 && text.charCodeAt(i + 1) !== 10) starts.push(i + 1);
  }
  return starts;
}

export function positionAt(source: SourceText, offset: number): Position {
  const starts = source.lineStarts;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  // An offset between the `\r` and `\n` of a line break (a tree-sitter node ending in a `//`
  // comment on a CRLF line takes the `\r`) is the end of its line: LSP does not count the `\r`.
  const text = source.text;
  const insideBreak = offset > starts[lo] && text.charCodeAt(offset - 1) === CR && text.charCodeAt(offset) === NEWLINE;
  return { line: lo + (source.firstLine ?? 0), character: offset - starts[lo] - (insideBreak ? 1 : 0) };
}

export function offsetAt(source: SourceText, position: Position): number {
  const starts = source.lineStarts;
  const line = position.line - (source.firstLine ?? 0);
  if (line < 0) return 0;
  if (line >= starts.length) return source.text.length;
  const lineEnd = line + 1 < starts.length ? starts[line + 1] : source.text.length;
  return Math.min(starts[line] + Math.max(0, position.character), lineEnd);
}

/**
 * `span` with each end no further than the end of its line. tree-sitter counts the `\r` of a
 * `\r\n` in its line and LSP does not: a node whose last token is a `//` comment on a CRLF line
 * (a loop written without its body yet) ends after it.
 */
export function withinLines(source: SourceText, span: Span): Span {
  const start = withinLine(source, span.start);
  const end = withinLine(source, span.end);
  return start === span.start && end === span.end ? span : { start, end };
}

function withinLine(source: SourceText, position: Position): Position {
  const starts = source.lineStarts;
  const line = position.line - (source.firstLine ?? 0);
  if (line < 0 || line >= starts.length) return position;
  let end = line + 1 < starts.length ? starts[line + 1] : source.text.length;
  if (end > starts[line] && source.text.charCodeAt(end - 1) === NEWLINE) end--;
  if (end > starts[line] && source.text.charCodeAt(end - 1) === CR) end--;
  const length = end - starts[line];
  return position.character > length ? { line: position.line, character: length } : position;
}

export function spanOf(source: SourceText, start: number, end: number): Span {
  return { start: positionAt(source, start), end: positionAt(source, end) };
}

const NEWLINE = 10;
const CR = 13;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;
const STAR = 42;
const SLASH = 47;
const R = 82;
const BACKSLASH = 92;

/**
 * Blank out comments, string, character and raw string literals, keeping newlines, from `from`
 * (a line start outside every comment and literal) to the end of `text`, or to the first offset
 * `stop` returns: it is asked, between comments and literals, for one in [lo, hi], where the scan
 * is outside all of them. Each comment and literal's start and end go to `regions`.
 */
function maskRange(
  text: string,
  from: number,
  regions: number[],
  stop?: (lo: number, hi: number) => number,
): { masked: string; end: number } {
  const n = text.length;
  // The result is joined from unchanged slices of `text` and blanked runs (a flat string: the
  // scanners read it by index); `text[copied...]` is not yet in `parts`.
  const parts: string[] = [];
  let copied = from;
  const blank = (a: number, b: number) => {
    const end = Math.min(b, n);
    if (end <= a) return;
    parts.push(text.slice(copied, a));
    blankRange(text, a, end, parts);
    copied = end;
  };
  let end = n;
  for (let at = from; ;) {
    const i = nextSpecial(text, at);
    if (stop) {
      const q = stop(at, i);
      if (q >= 0) {
        end = q;
        break;
      }
    }
    if (i >= n) break;
    const c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    let j = i + 1;
    let region = true;
    if (c === SLASH && next === SLASH) {
      j = lineCommentEnd(text, i + 2);
      blank(i, j);
    } else if (c === SLASH && next === STAR) {
      const close = text.indexOf('*/', i + 2);
      j = close < 0 ? n : close + 2;
      blank(i, j);
    } else if (c === R && next === DOUBLE_QUOTE && !isIdentChar(text[i - 1]) && rawStringEnd(text, i) >= 0) {
      j = rawStringEnd(text, i);
      blank(i + 1, j);
    } else if (c === DOUBLE_QUOTE || (c === SINGLE_QUOTE && !isDigitSeparator(text, i))) {
      for (let d = text.charCodeAt(j); j < n && d !== c && d !== NEWLINE; d = text.charCodeAt(j))
        j += d === BACKSLASH ? 2 : 1;
      j = Math.min(n, j + 1);
      blank(i + 1, j - 1);
    } else {
      region = false;
    }
    if (region) regions.push(i, j);
    at = j;
  }
  if (copied === from && end === n && from === 0) return { masked: text, end };
  parts.push(text.slice(copied, end));
  return { masked: parts.join(''), end };
}

/** Where a comment or literal may start: `/`, a quote or `R`. Global: searched from `lastIndex`. */
const SPECIAL = /[/"'R]/g;

/** The offset of the first character at or after `from` that may start a comment or literal, or the text's length. */
function nextSpecial(text: string, from: number): number {
  SPECIAL.lastIndex = from;
  return SPECIAL.exec(text)?.index ?? text.length;
}

/** The `\n` ending a `//` comment that starts before `from` (a backslash-newline continues it), or the text's end. */
function lineCommentEnd(text: string, from: number): number {
  for (let p = text.indexOf('\n', from); p >= 0; p = text.indexOf('\n', p + 1)) {
    const before = text.charCodeAt(p - 1);
    const continued = before === BACKSLASH || (before === CR && text.charCodeAt(p - 2) === BACKSLASH);
    if (!continued) return p;
  }
  return text.length;
}

/**
 * The end of the raw string literal `R"delim(...)delim"` whose `R` is at `at`
 * (the text's end when unterminated), or -1 when no valid opening follows
 * (a delimiter has at most 16 characters, none of them space, parentheses or backslash).
 */
function rawStringEnd(text: string, at: number): number {
  const delimiterStart = at + 2;
  const opening = text.slice(delimiterStart, delimiterStart + 17).indexOf('(');
  if (opening < 0) return -1;
  const open = delimiterStart + opening;
  const delimiter = text.slice(delimiterStart, open);
  if (/[\s()\\]/.test(delimiter)) return -1;
  const close = text.indexOf(')' + delimiter + '"', open + 1);
  return close < 0 ? text.length : close + delimiter.length + 2;
}

const SPACES = ' '.repeat(1024);

/** Push `text[from, to)` to `parts` with every character but line ends replaced by a space. */
function blankRange(text: string, from: number, to: number, parts: string[]): void {
  let run = from;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c === NEWLINE || c === CR) {
      parts.push(spaces(k - run), text[k]);
      run = k + 1;
    }
  }
  parts.push(spaces(to - run));
}

function spaces(length: number): string {
  return length <= SPACES.length ? SPACES.slice(0, length) : ' '.repeat(length);
}

/** `1'000'000`: a quote between digits is a C++14 digit separator, not a character literal. */
function isDigitSeparator(text: string, i: number): boolean {
  return (
    isHexDigit(text.charCodeAt(i - 1)) &&
    isHexDigit(text.charCodeAt(i + 1)) &&
    isDecimalDigit(precedingNumberStart(text, i))
  );
}

/** The first character code of the number literal a quote at `i` follows. */
function precedingNumberStart(text: string, i: number): number {
  let j = i - 1;
  for (; j > 0; j--) {
    const c = text.charCodeAt(j - 1);
    if (!isHexDigit(c) && c !== 120 && c !== 88 && c !== SINGLE_QUOTE) break; // x, X, '
  }
  return text.charCodeAt(j);
}

function isDecimalDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHexDigit(c: number): boolean {
  return isDecimalDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** `[A-Za-z0-9_$]`: one character (a string of length 1), or undefined (false). */
export function isIdentChar(c: string | undefined): boolean {
  return c !== undefined && c.length === 1 && isIdentCode(c.charCodeAt(0));
}

/** The character at `i` is `[A-Za-z0-9_$]` (false outside the text). */
export function isIdentCharAt(text: string, i: number): boolean {
  return isIdentCode(text.charCodeAt(i));
}

/** `[A-Za-z0-9_]`, as a character code. */
export function isWordCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** `k` in `ns::k`, `k` in `k`. */
export function lastComponent(name: string): string {
  const at = name.lastIndexOf('::');
  return at < 0 ? name : name.slice(at + 2);
}

function isIdentCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36;
}

/** What `/\s/` matches at `i` (white space and line ends, Unicode's included; false outside the text), without cutting the character out. */
export function isSpaceAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return (
    c === 160 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * What bracket matching stops at, by opening bracket: the brackets of that
 * kind, and for all but `{` a `;`, `{` or `}` (they end the search). Global:
 * searched from `lastIndex`, to jump between them rather than read every character.
 */
const BRACKET_STOPS: Readonly<Record<string, RegExp>> = {
  '(': /[(){};]/g,
  '[': /[[\]{};]/g,
  '{': /[{}]/g,
  '<': /[<>{};]/g,
};
const CLOSERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}', '<': '>' };

/** The offset of the bracket matching the one (`(`, `[`, `{` or `<`) at `open` in masked text, or -1. */
export function matchingClose(masked: string, open: number, limit = masked.length): number {
  const opener = masked[open];
  const stops = BRACKET_STOPS[opener];
  if (!stops) return -1;
  const closer = CLOSERS[opener];
  let depth = 0;
  stops.lastIndex = open;
  for (let m = stops.exec(masked); m && m.index < limit; m = stops.exec(masked)) {
    const c = m[0];
    if (c === opener) depth++;
    else if (c === closer) {
      depth--;
      if (depth === 0) return m.index;
    } else {
      return -1; // `;`, `{` or `}` inside `(...)`, `[...]` or `<...>`
    }
  }
  return -1;
}

/** Split `a, f(b, c), d` at top-level commas; returns [start, end) ranges, trimmed. */
export function splitTopLevel(masked: string, from: number, to: number): Array<[number, number]> {
  const parts: Array<[number, number]> = [];
  let depth = 0;
  let angle = 0;
  let start = from;
  for (let i = from; i < to; i++) {
    const c = masked.charCodeAt(i);
    if (c === 40 /* ( */ || c === 91 /* [ */ || c === 123 /* { */) depth++;
    else if (c === 41 /* ) */ || c === 93 /* ] */ || c === 125 /* } */) depth--;
    else if (c === 60 /* < */ && looksLikeTemplateOpen(masked, i)) angle++;
    else if (c === 62 /* > */ && angle > 0 && masked.charCodeAt(i - 1) !== 45 /* - */) angle--;
    else if (c === 44 /* , */ && depth === 0 && angle === 0) {
      parts.push(trimRange(masked, start, i));
      start = i + 1;
    }
  }
  if (to > from || parts.length > 0) parts.push(trimRange(masked, start, to));
  return parts;
}

function looksLikeTemplateOpen(masked: string, i: number): boolean {
  if (masked[i + 1] === '<' || masked[i - 1] === '<' || masked[i + 1] === '=') return false;
  let j = i - 1;
  while (j >= 0 && masked[j] === ' ') j--;
  const c = masked.charCodeAt(j);
  return isIdentCode(c) && !(c >= 48 && c <= 57);
}

export function trimRange(text: string, from: number, to: number): [number, number] {
  while (from < to && isSpaceAt(text, from)) from++;
  while (to > from && isSpaceAt(text, to - 1)) to--;
  return [from, to];
}
