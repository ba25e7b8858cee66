/**
 * The size limits on what is analysed: a document larger than `maxBytes` (UTF-8), or with a line longer than
 * `maxLineLength` characters (generated tables, minified code), is not analysed at all; the server gives it one
 * information diagnostic and the CLI one line. Pure; shared by the server (lsp/document-store.ts) and the CLI.
 */
import { DEFAULT_SETTINGS, type Settings } from './settings';

export interface DocumentLimits {
  readonly maxBytes: number;
  readonly maxLineLength: number;
}

/** limits.documentMB's and limits.lineLength's defaults (settings.ts). */
export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = documentLimitsOf(DEFAULT_SETTINGS);

export function documentLimitsOf(settings: Pick<Settings, 'limits.documentMB' | 'limits.lineLength'>): DocumentLimits {
  return { maxBytes: settings['limits.documentMB'] * 1024 * 1024, maxLineLength: settings['limits.lineLength'] };
}

/** Why `text` is not analysed (`too large to analyse: 30 MB, ...`), or null when it is within the limits. */
export function tooLargeToAnalyse(text: string, limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS): string | null {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most documents need no byte count.
  if (text.length * 3 > limits.maxBytes) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > limits.maxBytes) return tooManyBytes(bytes, limits);
  }
  const long = longestLine(text, limits.maxLineLength);
  return long ? tooLongLine(long, limits) : null;
}

/** The verdict on a document of `bytes` bytes, over `limits.maxBytes` (the CLI knows the size before reading). */
export function tooManyBytes(bytes: number, limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS): string {
  return `too large to analyse: ${megabytes(bytes)} MB, over the ${megabytes(limits.maxBytes)} MB limit (cudaOccupancy.limits.documentMB)`;
}

/**
 * tooLargeToAnalyse for a text that was within the limits before an edit that wrote `[from, to)` of it: only the
 * lines the edit touched can have grown too long (a keystroke in a 35k-line file checks one line, not all).
 */
export function tooLargeAfterEdit(
  text: string,
  from: number,
  to: number,
  limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS,
): string | null {
  if (text.length * 3 > limits.maxBytes) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > limits.maxBytes) return tooManyBytes(bytes, limits);
  }
  const start = Math.max(text.lastIndexOf('\n', from - 1), text.lastIndexOf('\r', from - 1)) + 1;
  let end = to;
  while (end < text.length && text[end] !== '\n' && text[end] !== '\r') end++;
  if (end - start <= limits.maxLineLength) return null;
  const long = longestLine(text.slice(start, end), limits.maxLineLength);
  if (!long) return null;
  let line = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < start; i = text.indexOf('\n', i + 1)) line++;
  return tooLongLine({ line: line + long.line, length: long.length }, limits);
}

function tooLongLine(long: { line: number; length: number }, limits: DocumentLimits): string {
  return `too large to analyse: line ${long.line + 1} is ${long.length.toLocaleString('en-US')} characters long, over the ${limits.maxLineLength.toLocaleString('en-US')}-character limit (cudaOccupancy.limits.lineLength)`;
}

function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 10 ? String(Math.round(mb)) : String(Math.round(mb * 10) / 10);
}

/** The first line longer than `limit` characters (line ends: `\n`, `\r\n`, `\r`), or null. */
export function longestLine(text: string, limit: number): { line: number; length: number } | null {
  if (text.length <= limit) return null;
  if (!text.includes('\r')) {
    // The usual case, on every keystroke: indexOf is several times faster than a regular expression.
    let line = 0;
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      if (end - start > limit) return { line, length: end - start };
      start = end + 1;
      line++;
    }
    return text.length - start > limit ? { line, length: text.length - start } : null;
  }
  const ends = /\r\n?|\n/g;
  let start = 0;
  let line = 0;
  for (let m = ends.exec(text); m; m = ends.exec(text)) {
    if (m.index - start > limit) return { line, length: m.index - start };
    start = m.index + m[0].length;
    line++;
  }
  return text.length - start > limit ? { line, length: text.length - start } : null;
}
