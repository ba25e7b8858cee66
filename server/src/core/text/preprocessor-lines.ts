/**
 * Which parts of a file are preprocessor directives (with their `\` line
 * continuations), so scanners can tell a launch written in a macro body from
 * one in code.
 */
import { positionAt, type SourceText } from './source-text';
import { memoByObject } from '../incremental/kept-tables';

/** Sorted [start, end) offset ranges of directive lines: found once per text, shared by the scanners that ask. */
export const findDirectiveRanges: (source: SourceText) => ReadonlyArray<[number, number]> = memoByObject(
  'directive ranges',
  scanDirectiveRanges,
);

function scanDirectiveRanges(source: SourceText): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const { masked, lineStarts } = source;
  // From each `#` (few lines have one), not from each line: a `#` with only blanks before it on its
  // line starts a directive. A line starts after each `\n` of the masked text (a lone `\r` is a `\n` there).
  for (let at = masked.indexOf('#'); at >= 0; at = masked.indexOf('#', at + 1)) {
    let start = at;
    while (start > 0 && (masked.charCodeAt(start - 1) === 32 || masked.charCodeAt(start - 1) === 9)) start--;
    if (start > 0 && masked.charCodeAt(start - 1) !== 10) continue;
    const { line: lineInFile, character } = positionAt(source, start);
    if (character !== 0) continue;
    const line = lineInFile - (source.firstLine ?? 0);
    let endLine = line;
    while (endLine + 1 < lineStarts.length && /\\\s*$/.test(lineText(masked, lineStarts, endLine))) endLine++;
    const end = endLine + 1 < lineStarts.length ? lineStarts[endLine + 1] : masked.length;
    ranges.push([start, end]);
    // A `#` on a continuation line belongs to this directive.
    if (end > at) at = end - 1;
  }
  return ranges;
}

function lineText(text: string, lineStarts: readonly number[], line: number): string {
  const end = line + 1 < lineStarts.length ? lineStarts[line + 1] : text.length;
  return text.slice(lineStarts[line], end).replace(/\r?\n$/, '');
}

export function inRanges(ranges: ReadonlyArray<[number, number]>, offset: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (offset < ranges[mid][0]) hi = mid - 1;
    else if (offset >= ranges[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}
