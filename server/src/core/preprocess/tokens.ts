/**
 * Preprocessing tokens, as the C preprocessor sees a line (C++17 [lex.pptoken]): identifiers,
 * pp-numbers, character and string literals (raw strings included), punctuators, and anything
 * else one character at a time. Comments are whitespace, and a backslash at the end of a line
 * joins it to the next (a directive goes on over such lines). Offsets are into the file's text.
 */
import { ownCopy } from '../incremental/engine-seams';

export type TokenKind = 'ident' | 'number' | 'string' | 'char' | 'punct' | 'other';

export interface PpToken {
  kind: TokenKind;
  text: string;
  /** Offsets in the file's text: [start, end). */
  start: number;
  end: number;
  /** Whitespace (or a comment) before it: `#define F (x)` is object-like, `#define F(x)` is not. */
  space: boolean;
}

/** Punctuators, longest first within each leading character (maximal munch). */
const PUNCTUATORS: readonly string[] = [
  '%:%:',
  '...',
  '<<=',
  '>>=',
  '->*',
  '<=>',
  '::',
  '->',
  '++',
  '--',
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '##',
  '.*',
  '<:',
  ':>',
  '<%',
  '%>',
  '%:',
];

export function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36 || c >= 128;
}

export function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

const BACKSLASH = 92;
const NEWLINE = 10;
const CR = 13;

/** The offset after a backslash-newline at `i` (with `\r\n` or a lone `\r`), or `i` when there is none. */
export function afterSplice(text: string, i: number): number {
  if (text.charCodeAt(i) !== BACKSLASH) return i;
  let j = i + 1;
  // Blanks between the backslash and the line end are accepted, as GCC does (with a warning).
  while (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9) j++;
  const c = text.charCodeAt(j);
  if (c === NEWLINE) return j + 1;
  if (c === CR) return text.charCodeAt(j + 1) === NEWLINE ? j + 2 : j + 1;
  return i;
}

/**
 * The tokens of text[from, to), reading `\`-newlines as nothing and comments as whitespace. A
 * block comment or literal that runs past `to` ends the scan there.
 */
export function tokenize(text: string, from = 0, to = text.length): PpToken[] {
  const out: PpToken[] = [];
  let i = from;
  let space = false;
  while (i < to) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 12 || c === 11 || c === NEWLINE || c === CR) {
      i++;
      space = true;
      continue;
    }
    if (c === BACKSLASH) {
      const j = afterSplice(text, i);
      if (j !== i) {
        i = j;
        continue;
      }
    }
    if (c === 47 /* / */) {
      const n = text.charCodeAt(i + 1);
      if (n === 47) {
        i = lineCommentEnd(text, i, to);
        space = true;
        continue;
      }
      if (n === 42) {
        const end = text.indexOf('*/', i + 2);
        i = end < 0 || end + 2 > to ? to : end + 2;
        space = true;
        continue;
      }
    }
    const start = i;
    let kind: TokenKind;
    if (isIdentStart(c)) {
      i++;
      while (i < to && isIdentPart(text.charCodeAt(i))) i++;
      // An encoding prefix or `R` makes the identifier part of the literal after it.
      const q = text.charCodeAt(i);
      if ((q === 34 || q === 39) && /^(?:u8|u|U|L)?R?$/.test(text.slice(start, i))) {
        const raw = text.charCodeAt(i - 1) === 82 /* R */ && q === 34;
        i = raw ? rawStringEnd(text, i, to) : literalEnd(text, i, to);
        kind = q === 34 ? 'string' : 'char';
      } else kind = 'ident';
    } else if (isDigit(c) || (c === 46 && isDigit(text.charCodeAt(i + 1)))) {
      i = ppNumberEnd(text, i, to);
      kind = 'number';
    } else if (c === 34 || c === 39) {
      i = literalEnd(text, i, to);
      kind = c === 34 ? 'string' : 'char';
    } else {
      const p = PUNCTUATORS.find((p) => text.startsWith(p, i));
      i += p ? p.length : 1;
      kind = p || '+-*/%<>=!&|^~?:;,.()[]{}#'.includes(text[start]) ? 'punct' : 'other';
    }
    // Its own copy past V8's sliced-string threshold: a token kept in a table must not keep the file's text.
    const t = spliced(text.slice(start, i));
    out.push({ kind, text: t.length >= 13 ? ownCopy(t) : t, start, end: i, space });
    space = false;
  }
  return out;
}

/** The end of a `//` comment at `i`: the line end, unless a backslash continues it. */
export function lineCommentEnd(text: string, i: number, to = text.length): number {
  for (;;) {
    let end = i;
    while (end < to && text.charCodeAt(end) !== NEWLINE && text.charCodeAt(end) !== CR) end++;
    if (end >= to) return to;
    // A backslash (and blanks) before the line end continue the comment.
    let b = end - 1;
    while (b > i && (text.charCodeAt(b) === 32 || text.charCodeAt(b) === 9)) b--;
    if (text.charCodeAt(b) !== BACKSLASH) return end;
    i = text.charCodeAt(end) === CR && text.charCodeAt(end + 1) === NEWLINE ? end + 2 : end + 1;
  }
}

/** The end of the quoted literal starting at `i` (its quote); an unterminated one ends at the line end. */
export function literalEnd(text: string, i: number, to = text.length): number {
  const quote = text.charCodeAt(i);
  let j = i + 1;
  while (j < to) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) {
      const k = afterSplice(text, j);
      j = k !== j ? k : j + 2;
      continue;
    }
    if (c === quote) return j + 1;
    if (c === NEWLINE || c === CR) return j;
    j++;
  }
  return Math.min(j, to);
}

/** The end of a raw string `R"delim( ... )delim"` whose quote is at `i`. */
function rawStringEnd(text: string, i: number, to: number): number {
  const open = text.indexOf('(', i + 1);
  if (open < 0 || open - i - 1 > 16 || open >= to) return literalEnd(text, i, to);
  const close = text.indexOf(`)${text.slice(i + 1, open)}"`, open + 1);
  return close < 0 || close >= to ? to : close + open - i + 1;
}

/** A pp-number: digits, letters, `.`, `'` separators and exponent signs (`1e+5`, `0x1p-3`). */
function ppNumberEnd(text: string, i: number, to: number): number {
  let j = i + 1;
  while (j < to) {
    const c = text.charCodeAt(j);
    if (isIdentPart(c) || c === 46) j++;
    else if ((c === 43 || c === 45) && /[eEpP]/.test(text[j - 1])) j++;
    else if (c === 39 && isIdentPart(text.charCodeAt(j + 1))) j += 2;
    else break;
  }
  return j;
}

/** A token's text without the backslash-newlines inside it (rare: a name split over two lines). */
function spliced(s: string): string {
  return s.includes('\\') && /\\[ \t]*\r?[\n\r]/.test(s) ? s.replace(/\\[ \t]*(?:\r\n|\n|\r)/g, '') : s;
}

/** Tokens written back as text, with one space where the source had whitespace. */
export function spell(tokens: readonly Pick<PpToken, 'text' | 'space'>[]): string {
  let s = '';
  for (let k = 0; k < tokens.length; k++) {
    if (k > 0 && tokens[k].space) s += ' ';
    s += tokens[k].text;
  }
  return s;
}

/**
 * Whether `text` may write one of `names` (a substring test: never wrong when it says no, so that a
 * scan of the text's identifiers for them can be skipped). Past a few names it says yes without
 * looking: a search of the whole text per name would cost more than the one scan it saves.
 */
export function writesAny(text: string, names: Iterable<string>): boolean {
  let asked = 0;
  for (const name of names) if (++asked > MAX_NAMES_SEARCHED || text.includes(name)) return true;
  return false;
}

const MAX_NAMES_SEARCHED = 16;
