/**
 * The text of a file as one configuration of its unit compiles it: the lines of inactive and
 * alternative regions and the directives blanked (same length, line breaks kept, so offsets and
 * positions are the file's), `#pragma` lines kept for what they say about the code after them.
 * A declaration split by `#if` then reads as the compiler reads it.
 */
import type { UnitFile } from './unit';

export function viewText(file: Pick<UnitFile, 'text' | 'regions'>): string {
  const { text, regions } = file;
  let out = '';
  let cursor = 0;
  for (const r of regions) {
    const hidden =
      r.state === 'inactive' ||
      r.state === 'alternative' ||
      (r.directive && !/^\s*#\s*pragma\b/.test(text.slice(r.start, r.end)));
    if (!hidden) continue;
    out += text.slice(cursor, r.start) + blank(text.slice(r.start, r.end));
    cursor = r.end;
  }
  return cursor === 0 ? text : out + text.slice(cursor);
}

/** Spaces for every character but line breaks. */
export function blank(s: string): string {
  return s.replace(/[^\n\r]/g, ' ');
}
