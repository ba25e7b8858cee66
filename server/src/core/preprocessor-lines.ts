/**
 * Which parts of a file are preprocessor directives (with their `\` line
 * continuations), so scanners can tell a launch written in a macro body from
 * one in code.
 */
import type { SourceText } from './source-text';

const directiveRanges = new WeakMap<SourceText, ReadonlyArray<[number, number]>>();

/** Sorted [start, end) offset ranges of directive lines: found once per text, shared by the scanners that ask. */
export function findDirectiveRanges(source: SourceText): ReadonlyArray<[number, number]> {
  let ranges = directiveRanges.get(source);
  if (!ranges) directiveRanges.set(source, (ranges = scanDirectiveRanges(source)));
  return ranges;
}

function scanDirectiveRanges(source: SourceText): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const { masked, lineStarts } = source;
  for (let line = 0; line < lineStarts.length; line++) {
    const start = lineStarts[line];
    let i = start;
    while (masked[i] === ' ' || masked[i] === '\t') i++;
    if (masked[i] !== '#') continue;
    let endLine = line;
    while (endLine + 1 < lineStarts.length && /\\\s*$/.test(lineText(masked, lineStarts, endLine))) endLine++;
    const end = endLine + 1 < lineStarts.length ? lineStarts[endLine + 1] : masked.length;
    ranges.push([start, end]);
    line = endLine;
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
