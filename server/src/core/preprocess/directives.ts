/**
 * A file's preprocessing directives: every line whose first token is `#` outside comments and
 * literals, with its name and tokens. Read once per text and shared by every translation unit
 * that includes the file; what the directives mean in a unit is unit-walk.ts's business.
 */
import { memoByText } from '../incremental/kept-tables';
import { hash } from '../incremental/kernel-analysis-cache';
import { afterSplice, isIdentPart, isIdentStart, lineCommentEnd, literalEnd, tokenize, type PpToken } from './tokens';

export interface Directive {
  /** `define`, `if`, `include`, ...; `` for a lone `#`; the first token's text for anything else. */
  name: string;
  /** The start of its line (blanks before the `#` included). */
  start: number;
  /** Where the `#` is. */
  hash: number;
  /** The end of its logical line (the line break that ends it, or the end of the text). */
  end: number;
  /** The tokens after the name. */
  tokens: PpToken[];
  /** For `#include`/`#include_next`: the header as written (`<cuda.h>`, `"a.h"`), or null when it is a macro to expand. */
  header?: { name: string; system: boolean } | null;
  /** For `#if`/`#ifdef`/`#ifndef`: its group has another arm (`#elif` or `#else`). */
  hasAlternative?: boolean;
}

export interface FileDirectives {
  readonly directives: readonly Directive[];
  /** Names the file `#define`s anywhere (any branch): what the unit's walk knows some file sets. */
  readonly defines: ReadonlySet<string>;
}

const NEWLINE = 10;
const CR = 13;

/**
 * The directives of a text, kept by a hash of the text (a header read by many units is scanned
 * once): keyed by the text itself, the table would keep every version of an edited document alive.
 */
export const fileDirectives: (text: string) => FileDirectives = memoByText('file directives', hash, scanDirectives);

export function scanDirectives(text: string): FileDirectives {
  const directives: Directive[] = [];
  const defines = new Set<string>();
  const n = text.length;
  let i = 0;
  let lineStart = true;
  let lineBegin = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === NEWLINE || c === CR) {
      i++;
      lineStart = true;
      lineBegin = i;
      continue;
    }
    if (c === 32 || c === 9 || c === 12 || c === 11) {
      i++;
      continue;
    }
    if (c === 92 /* \ */) {
      const j = afterSplice(text, i);
      if (j !== i) {
        i = j;
        continue;
      }
    }
    if (c === 47 /* / */) {
      const next = text.charCodeAt(i + 1);
      if (next === 47) {
        i = lineCommentEnd(text, i);
        continue;
      }
      if (next === 42) {
        // A block comment is whitespace: a `#` after one that closes on the same line still starts a directive.
        const close = text.indexOf('*/', i + 2);
        const end = close < 0 ? n : close + 2;
        if (/[\n\r]/.test(text.slice(i, end))) lineStart = false;
        i = end;
        continue;
      }
    }
    if (lineStart && c === 35 /* # */) {
      const d = readDirective(text, lineBegin, i);
      directives.push(d);
      if (d.name === 'define' && d.tokens[0]?.kind === 'ident') defines.add(d.tokens[0].text);
      i = d.end;
      continue;
    }
    lineStart = false;
    if (c === 34 || c === 39) {
      i = literalEnd(text, i);
      continue;
    }
    if (isIdentStart(c)) {
      const start = i;
      while (i < n && isIdentPart(text.charCodeAt(i))) i++;
      // A raw string literal: R"delim( ... )delim", with or without an encoding prefix.
      if (text.charCodeAt(i) === 34 && text.charCodeAt(i - 1) === 82 && /^(?:u8|u|U|L)?R$/.test(text.slice(start, i)))
        i = rawEnd(text, i);
      continue;
    }
    i++;
  }
  markAlternatives(directives);
  return { directives, defines };
}

/** Which `#if` groups have an `#elif` or `#else`. */
function markAlternatives(directives: Directive[]): void {
  const open: Directive[] = [];
  for (const d of directives) {
    if (d.name === 'if' || d.name === 'ifdef' || d.name === 'ifndef') {
      d.hasAlternative = false;
      open.push(d);
    } else if (/^(elif|elifdef|elifndef|else)$/.test(d.name)) {
      const top = open[open.length - 1];
      if (top) top.hasAlternative = true;
    } else if (d.name === 'endif') open.pop();
  }
}

function rawEnd(text: string, quote: number): number {
  const open = text.indexOf('(', quote + 1);
  if (open < 0 || open - quote - 1 > 16) return literalEnd(text, quote);
  const close = text.indexOf(`)${text.slice(quote + 1, open)}"`, open + 1);
  return close < 0 ? text.length : close + open - quote + 1;
}

/** The directive whose `#` is at `hash`: to the end of its logical line, block comments in it included. */
function readDirective(text: string, start: number, hash: number): Directive {
  const end = directiveEnd(text, hash + 1);
  const tokens = tokenize(text, hash + 1, end);
  const first = tokens[0];
  const name = first ? first.text : '';
  const rest = first ? tokens.slice(1) : tokens;
  const d: Directive = { name, start, hash, end, tokens: rest };
  if (name === 'include' || name === 'include_next' || name === 'import') d.header = headerName(text, first!.end, end);
  return d;
}

/** The end of a logical line from `i`: its line break, where no backslash continues it and no block comment spans it. */
function directiveEnd(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === NEWLINE || c === CR) return i;
    if (c === 92) {
      const j = afterSplice(text, i);
      if (j !== i) {
        i = j;
        continue;
      }
    }
    if (c === 47) {
      const next = text.charCodeAt(i + 1);
      if (next === 47) return lineCommentEnd(text, i);
      if (next === 42) {
        const close = text.indexOf('*/', i + 2);
        i = close < 0 ? n : close + 2;
        continue;
      }
    }
    if (c === 34 || c === 39) {
      i = literalEnd(text, i);
      continue;
    }
    i++;
  }
  return n;
}

/** `<a/b.h>` or `"a.h"` after `#include`, or null when the operand is something to expand. */
function headerName(text: string, from: number, to: number): Directive['header'] {
  let i = from;
  while (i < to && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
  const open = text[i];
  if (open !== '<' && open !== '"') return null;
  const close = text.indexOf(open === '<' ? '>' : '"', i + 1);
  if (close < 0 || close > to) return null;
  return { name: text.slice(i + 1, close), system: open === '<' };
}
