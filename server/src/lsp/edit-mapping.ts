/**
 * Positions carried through a document's incremental changes (LSP's `contentChanges`, each range read
 * in the text before it), without the texts: what lets an answer computed on an earlier version be
 * shown on the current one, as rust-analyzer and clangd do with their snapshots. A place an edit
 * touched has no counterpart: it maps to null, and an answer about it is dropped.
 */
import type { Position, Range } from 'vscode-languageserver/node';

/** One incremental change: `range` of the text before it replaced by `text`. */
export interface RangeChange {
  range: Range;
  text: string;
}

const compare = (a: Position, b: Position) => a.line - b.line || a.character - b.character;

/** The range with its start first (a client may send them reversed; TextDocument.update reads them so). */
function ordered(range: Range): Range {
  return compare(range.end, range.start) < 0 ? { start: range.end, end: range.start } : range;
}

/** Where the text inserted by a change starting at `start` ends, in the text after it. */
function insertedEnd(start: Position, text: string): Position {
  const lines = text.split(/\r\n|\r|\n/);
  return lines.length === 1
    ? { line: start.line, character: start.character + lines[0].length }
    : { line: start.line + lines.length - 1, character: lines[lines.length - 1].length };
}

/** A position at or after `from` (of one text), moved to where `from` is `to` (in the other). */
function moved(position: Position, from: Position, to: Position): Position {
  return position.line === from.line
    ? { line: to.line, character: to.character + (position.character - from.character) }
    : { line: position.line + (to.line - from.line), character: position.character };
}

/** A position of the current text in the text before `changes` (applied in order); null when an edit wrote it. */
export function positionBefore(position: Position, changes: readonly RangeChange[]): Position | null {
  let at = position;
  for (let i = changes.length - 1; i >= 0; i--) {
    const { start, end } = ordered(changes[i].range);
    if (compare(at, start) < 0) continue;
    const written = insertedEnd(start, changes[i].text);
    if (compare(at, written) < 0) return null;
    at = moved(at, written, end);
  }
  return at;
}

/**
 * A range of the text before `changes`, in the current text; null when an edit touched it: replaced
 * text in it, or wrote inside it (text written right before or right after it leaves it whole).
 */
export function rangeAfter(range: Range, changes: readonly RangeChange[]): Range | null {
  let { start, end } = ordered(range);
  for (const change of changes) {
    const edit = ordered(change.range);
    if (compare(start, edit.end) >= 0) {
      const written = insertedEnd(edit.start, change.text);
      start = moved(start, edit.end, written);
      end = moved(end, edit.end, written);
    } else if (compare(end, edit.start) > 0) return null;
  }
  return { start, end };
}
