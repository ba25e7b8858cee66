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

/** Blank out comments, string, character and raw string literals, keeping newlines. */
export function maskCommentsAndLiterals(text: string): string {
  const out = text.split('');
  const n = text.length;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to && k < n; k++) {
      if (out[k] !== '\n' && out[k] !== '\r') out[k] = ' ';
    }
  };
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      let j = i + 2;
      while (j < n && text[j] !== '\n') {
        // a backslash-newline continues a line comment
        if (text[j] === '\\' && (text[j + 1] === '\n' || (text[j + 1] === '\r' && text[j + 2] === '\n'))) j += text[j + 1] === '\r' ? 3 : 2;
        else j++;
      }
      blank(i, j);
      i = j;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      const j = close < 0 ? n : close + 2;
      blank(i, j);
      i = j;
    } else if (c === 'R' && text[i + 1] === '"' && !isIdentChar(text[i - 1])) {
      const open = text.indexOf('(', i + 2);
      const delimiter = open < 0 ? '' : text.slice(i + 2, open);
      if (open < 0 || delimiter.length > 16 || /[\s()\\]/.test(delimiter)) {
        i++;
        continue;
      }
      const close = text.indexOf(')' + delimiter + '"', open + 1);
      const j = close < 0 ? n : close + delimiter.length + 2;
      blank(i + 1, j);
      i = j;
    } else if (c === '"' || (c === "'" && !isDigitSeparator(text, i))) {
      let j = i + 1;
      while (j < n && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      j = Math.min(n, j + 1);
      blank(i + 1, j - 1);
      i = j;
    } else {
      i++;
    }
  }
  return out.join('');
}

/** `1'000'000`: a quote between digits is a C++14 digit separator, not a character literal. */
function isDigitSeparator(text: string, i: number): boolean {
  return /[0-9a-fA-F]/.test(text[i - 1] ?? '') && /[0-9a-fA-F]/.test(text[i + 1] ?? '') && /[0-9]/.test(precedingNumberStart(text, i));
}

function precedingNumberStart(text: string, i: number): string {
  let j = i - 1;
  while (j > 0 && /[0-9a-fA-FxX']/.test(text[j - 1])) j--;
  return text[j] ?? '';
}

export function isIdentChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_$]/.test(c);
}

/** The offset of the bracket matching the one at `open` in masked text, or -1. */
export function matchingClose(masked: string, open: number, limit = masked.length): number {
  const opener = masked[open];
  const closer = opener === '(' ? ')' : opener === '[' ? ']' : opener === '{' ? '}' : '>';
  let depth = 0;
  for (let i = open; i < limit; i++) {
    const c = masked[i];
    if (c === opener) depth++;
    else if (c === closer) {
      depth--;
      if (depth === 0) return i;
    } else if (opener !== '{' && (c === ';' || c === '{' || c === '}')) {
      return -1;
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
