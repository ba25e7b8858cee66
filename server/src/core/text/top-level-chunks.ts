/**
 * A document cut into chunks of whole lines at file scope, so that the text
 * passes (constants, kernels, launches) can be kept per chunk between versions:
 * a keystroke then re-reads only the chunk it fell in.
 *
 * A chunk ends after a line whose last character is a `;` or `}` of code (not
 * a comment) with no brace or parenthesis open: the next line starts outside
 * every comment, literal and definition. A definition's leading comment and
 * template header stay with it (they follow the previous chunk's last line).
 * Namespace and `extern "C"` blocks keep a brace open, so each stays one
 * chunk: a kernel's qualified name depends on them.
 *
 * Which candidate ends become chunk ends is decided by the text before them
 * (content-defined, like rsync's rolling checksum): an edit moves no boundary
 * but its own, so the chunks after it keep their keys. About one candidate in
 * GROUPING becomes an end, which keeps the per-chunk overhead small.
 */
import { commonPrefix, commonSuffix, type SourceText } from './source-text';

export interface Chunk {
  /** Offsets of the chunk's first character and one past its last (a line start, or the end of the text). */
  start: number;
  end: number;
  /** 0-based line of `start`. */
  line: number;
}

const GROUPING = 4;
/** A chunk this long ends at its next candidate whatever the hash says. */
const MAX_CHUNK = 32 * 1024;
/** Characters before a candidate end that decide whether it is taken. */
const WINDOW = 96;

export interface ChunkLayout {
  chunks: Chunk[];
  /** For each chunk, the index of the previous version's chunk with the same text (the edit lies elsewhere), or -1. */
  previousIndex: number[];
}

/**
 * The chunks of `source`: cut again from `previous` (the same document's last version) around the
 * edit when that is possible, saying which chunks are the previous version's (moved or not).
 */
export function layoutChunks(
  source: SourceText,
  previous?: { source: SourceText; chunks: readonly Chunk[] },
): ChunkLayout {
  const kept = previous && resplit(source, previous);
  if (kept) return kept;
  const chunks = scan(source, 0, 0, () => false);
  return { chunks, previousIndex: chunks.map(() => -1) };
}

/**
 * The chunks of an edited text from its previous version's: the chunks before the edit stay;
 * from the chunk before it, the text is cut again until a chunk end meets one of the previous
 * version's in the text after the edit, from where the previous chunks follow, moved. Null
 * where that does not hold (an `#elif`/`#else` can blank braces anywhere in the file).
 */
function resplit(source: SourceText, previous: { source: SourceText; chunks: readonly Chunk[] }): ChunkLayout | null {
  const before = previous.source.text;
  const { text } = source;
  if (source.alternateBranches !== false || previous.source.alternateBranches !== false || previous.chunks.length === 0)
    return null;
  const prefix = commonPrefix(before, text);
  const suffix = commonSuffix(before, text, Math.min(before.length, text.length) - prefix);
  const delta = text.length - before.length;
  const lineDelta = source.lineStarts.length - previous.source.lineStarts.length;
  let first = 0;
  while (first + 1 < previous.chunks.length && previous.chunks[first + 1].start <= prefix) first++;
  first = Math.max(0, first - 1); // the chunk ending at the edit may end differently
  const oldStarts = new Map(previous.chunks.map((c, k) => [c.start, k]));
  let resumeAt = -1;
  const middle = scan(source, previous.chunks[first].start, previous.chunks[first].line, (to) => {
    // The chunk ends after this one are decided on the text from WINDOW before it: all of it unchanged.
    if (to - WINDOW < text.length - suffix) return false;
    const k = oldStarts.get(to - delta);
    if (k === undefined) return false;
    resumeAt = k;
    return true;
  });
  const kept = previous.chunks.slice(0, first);
  const previousIndex = [...kept.map((_, k) => k), ...middle.map(() => -1)];
  if (resumeAt < 0) return { chunks: [...kept, ...middle], previousIndex };
  const moved = previous.chunks
    .slice(resumeAt)
    .map((c) => ({ start: c.start + delta, end: c.end + delta, line: c.line + lineDelta }));
  return {
    chunks: [...kept, ...middle, ...moved],
    previousIndex: [...previousIndex, ...moved.map((_, k) => resumeAt + k)],
  };
}

/**
 * Cut from `from` (a chunk start: outside every bracket, comment and literal) to the end of the
 * text, or up to the first chunk end for which `stop` says so (that chunk is the last returned).
 */
function scan(source: SourceText, from: number, fromLine: number, stop: (end: number) => boolean): Chunk[] {
  const { text, masked } = source;
  const chunks: Chunk[] = [];
  let braces = 0;
  let parens = 0;
  let chunkStart = from;
  let chunkLine = fromLine;
  let line = fromLine;
  let lineStart = from;
  // One pass over the characters: only brackets and line ends (a lone `\r` is a `\n` in masked text) count.
  const length = masked.length;
  for (let i = from; i < length; i++) {
    const c = masked.charCodeAt(i);
    if (c > 125 || (c > 41 && c < 123) || (c > 10 && c < 40)) continue;
    // Counted apart, as the scanners match them: a stray `)` must not cancel a `{`.
    if (c === 123 /* { */) braces++;
    else if (c === 125 /* } */) braces = Math.max(0, braces - 1);
    else if (c === 40 /* ( */) parens++;
    else if (c === 41 /* ) */) parens = Math.max(0, parens - 1);
    else if (c === 10) {
      const to = i + 1;
      if (
        braces === 0 &&
        parens === 0 &&
        to < length &&
        endsDefinition(source, lineStart, i) &&
        (to - chunkStart >= MAX_CHUNK || takes(text, to))
      ) {
        chunks.push({ start: chunkStart, end: to, line: chunkLine });
        if (stop(to)) return chunks;
        chunkStart = to;
        chunkLine = line + 1;
      }
      line++;
      lineStart = to;
    }
  }
  if (chunkStart < masked.length || chunks.length === 0)
    chunks.push({ start: chunkStart, end: masked.length, line: chunkLine });
  return chunks;
}

/**
 * The line [from, newline) ends with a `;` or `}` of code: the raw text must end with the same
 * character (else the line ends in a comment, `}  // …`).
 */
function endsDefinition({ text, masked }: SourceText, from: number, newline: number): boolean {
  let last = newline - 1;
  while (last >= from && masked.charCodeAt(last) <= 32) last--;
  if (last < from) return false;
  const c = masked.charCodeAt(last);
  return (c === 59 /* ; */ || c === 125) && text.charCodeAt(last) === c && endsLine(text, last, newline);
}

/** Only blanks follow `at` up to the line end at `to`. */
function endsLine(text: string, at: number, to: number): boolean {
  for (let i = at + 1; i < to; i++) if (text.charCodeAt(i) > 32) return false;
  return true;
}

/** FNV-1a over the WINDOW characters before `end`: whether this candidate ends a chunk. */
function takes(text: string, end: number): boolean {
  let h = 0x811c9dc5;
  for (let i = Math.max(0, end - WINDOW); i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) % GROUPING === 0;
}
