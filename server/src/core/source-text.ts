/**
 * A document's text with the facts every scanner needs: line starts for
 * offset/position conversion, and a masked copy in which comments, string and
 * character literals are blanked (same length, newlines kept), so that regular
 * expressions over it never match inside a comment or a string.
 */
import type { Position, Span } from './types';

export interface SourceText {
  readonly text: string;
  /** `text` with comments and literals replaced by spaces. */
  readonly masked: string;
  readonly lineStarts: readonly number[];
  /** The document line `text` starts on, when it is a piece of a document (default 0); positions count from it. */
  readonly firstLine?: number;
}

export function makeSourceText(text: string): SourceText {
  // A lone `\r` ends a line (as for LSP and compilers): masked as `\n` (same length) so that
  // `//` comments, directives and line-based scans end there too.
  const lines = text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text;
  return { text, masked: blankAlternateBranchBraces(maskCommentsAndLiterals(lines)), lineStarts: computeLineStarts(text) };
}

/**
 * `#if A / if (x) { / #else / if (y) { / #endif` opens one brace in the
 * program but two in the text. In every `#elif`/`#else` branch whose braces do
 * not balance, blank the braces (only them: the code stays visible to the
 * scanners), so that brace matching follows the first branch.
 */
export function blankAlternateBranchBraces(masked: string): string {
  // Most files have no alternate branch: do not split them into lines.
  if (!/^\s*#\s*el/m.test(masked)) return masked;
  const lines = masked.split('\n');
  interface Group { branchStarts: number[] }
  const stack: Group[] = [];
  const alternates: Array<[number, number]> = [];
  lines.forEach((line, k) => {
    const d = /^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b/.exec(line)?.[1];
    if (!d) return;
    if (d.startsWith('if')) stack.push({ branchStarts: [k] });
    else if (stack.length && (d.startsWith('el'))) {
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
  return { line: lo + (source.firstLine ?? 0), character: offset - starts[lo] };
}

export function offsetAt(source: SourceText, position: Position): number {
  const starts = source.lineStarts;
  const line = position.line - (source.firstLine ?? 0);
  if (line < 0) return 0;
  if (line >= starts.length) return source.text.length;
  const lineEnd = line + 1 < starts.length ? starts[line + 1] : source.text.length;
  return Math.min(starts[line] + Math.max(0, position.character), lineEnd);
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

/** Blank out comments, string, character and raw string literals, keeping newlines. */
export function maskCommentsAndLiterals(text: string): string {
  const n = text.length;
  // The result is joined from unchanged slices of `text` and blanked runs (a flat string: the
  // scanners read it by index); `text[copied...]` is not yet in `parts`.
  const parts: string[] = [];
  let copied = 0;
  const blank = (from: number, to: number) => {
    const end = Math.min(to, n);
    if (end <= from) return;
    parts.push(text.slice(copied, from));
    blankRange(text, from, end, parts);
    copied = end;
  };
  for (let i = nextSpecial(text, 0); i < n; i = nextSpecial(text, i)) {
    const c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (c === SLASH && next === SLASH) {
      const j = lineCommentEnd(text, i + 2);
      blank(i, j);
      i = j;
    } else if (c === SLASH && next === STAR) {
      const close = text.indexOf('*/', i + 2);
      const j = close < 0 ? n : close + 2;
      blank(i, j);
      i = j;
    } else if (c === R && next === DOUBLE_QUOTE && !isIdentChar(text[i - 1])) {
      const j = rawStringEnd(text, i);
      if (j < 0) {
        i++;
        continue;
      }
      blank(i + 1, j);
      i = j;
    } else if (c === DOUBLE_QUOTE || (c === SINGLE_QUOTE && !isDigitSeparator(text, i))) {
      let j = i + 1;
      for (let d = text.charCodeAt(j); j < n && d !== c && d !== NEWLINE; d = text.charCodeAt(j)) j += d === BACKSLASH ? 2 : 1;
      j = Math.min(n, j + 1);
      blank(i + 1, j - 1);
      i = j;
    } else {
      i++;
    }
  }
  if (copied === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
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
  return isHexDigit(text.charCodeAt(i - 1)) && isHexDigit(text.charCodeAt(i + 1)) && isDecimalDigit(precedingNumberStart(text, i));
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

export function isIdentChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_$]/.test(c);
}

/**
 * What bracket matching stops at, by opening bracket: the brackets of that
 * kind, and for all but `{` a `;`, `{` or `}` (they end the search). Global:
 * searched from `lastIndex`, to jump between them rather than read every character.
 */
const BRACKET_STOPS: Readonly<Record<string, RegExp>> = { '(': /[(){};]/g, '[': /[[\]{};]/g, '{': /[{}]/g, '<': /[<>{};]/g };
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
    const c = masked[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === '<' && looksLikeTemplateOpen(masked, i)) angle++;
    else if (c === '>' && angle > 0 && masked[i - 1] !== '-') angle--;
    else if (c === ',' && depth === 0 && angle === 0) {
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
  return isIdentChar(masked[j]) && !/[0-9]/.test(masked[j]);
}

export function trimRange(text: string, from: number, to: number): [number, number] {
  while (from < to && /\s/.test(text[from])) from++;
  while (to > from && /\s/.test(text[to - 1])) to--;
  return [from, to];
}
