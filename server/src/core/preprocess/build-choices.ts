/**
 * The `#if` groups of a stretch of a file that the unit cannot decide, as choices the build makes.
 * The view keeps one arm of each (the one a build with no further flags compiles), so a value set
 * in it would read as certain; another build compiles another arm. Where a function's body holds
 * such groups, its code is read with every arm in the text (`allArmsText`) and each group becomes
 * a branch the build takes (function-ir.ts, lowerBuildChoice): a value that depends on the arm is
 * one of the arms' values, or unknown.
 *
 * Pure: reads the unit's regions of the file and its directives.
 */
import { fileDirectives } from './directives';
import type { Region, RegionState, UnitFile } from './unit';
import { blank } from './view';

/** One arm of an undecided `#if` group: `group` numbers the group, `index` the arm in it. */
export interface BuildArm {
  group: number;
  index: number;
  /** The arm's text, from the end of its directive's line to the start of the next one's. */
  start: number;
  end: number;
  /** The group has an `#else`: some arm is always taken. */
  exhaustive: boolean;
}

/**
 * The arms of the undecided groups wholly inside `[start, end)` of `file`, in file offsets; empty
 * when there are none, or when a group there opens or closes outside the stretch.
 */
export function buildChoices(file: Pick<UnitFile, 'text' | 'regions'>, start: number, end: number): BuildArm[] {
  const directives = fileDirectives(file.text).directives.filter((d) => d.start >= start && d.end <= end);
  if (!directives.some((d) => d.name === 'if' || d.name === 'ifdef' || d.name === 'ifndef')) return [];
  const out: BuildArm[] = [];
  const open: Array<{ arms: Array<{ start: number; end: number }>; exhaustive: boolean }> = [];
  let groups = 0;
  for (const d of directives) {
    const top = open[open.length - 1];
    switch (d.name) {
      case 'if':
      case 'ifdef':
      case 'ifndef':
        open.push({ arms: [{ start: d.end, end: d.end }], exhaustive: false });
        break;
      case 'elif':
      case 'elifdef':
      case 'elifndef':
      case 'else':
        if (!top) return [];
        top.arms[top.arms.length - 1].end = d.start;
        top.arms.push({ start: d.end, end: d.end });
        if (d.name === 'else') top.exhaustive = true;
        break;
      case 'endif': {
        if (!top) return [];
        open.pop();
        top.arms[top.arms.length - 1].end = d.start;
        const states = top.arms.map((a) => stateAt(file.regions, a.start));
        // The build decides it: some arm is not in the view, or the view's arm may be left out.
        const undecided = states.includes('alternative') || (!top.exhaustive && states.includes('assumed'));
        if (!undecided) break;
        const group = groups++;
        top.arms.forEach((a, index) => {
          // An arm no build compiles (`#elif 0`) is no choice.
          if (states[index] !== 'inactive')
            out.push({ group, index, start: a.start, end: a.end, exhaustive: top.exhaustive });
        });
        break;
      }
    }
  }
  return open.length ? [] : out;
}

/**
 * The file's text as the view has it (view.ts), but with the arms the view leaves out kept: every
 * arm of an undecided group is code. Directive lines and arms no build compiles are blanked.
 */
export function allArmsText(file: Pick<UnitFile, 'text' | 'regions'>): string {
  const { text, regions } = file;
  let out = '';
  let cursor = 0;
  for (const r of regions) {
    const hidden = r.state === 'inactive' || (r.directive && !/^\s*#\s*pragma\b/.test(text.slice(r.start, r.end)));
    if (!hidden) continue;
    out += text.slice(cursor, r.start) + blank(text.slice(r.start, r.end));
    cursor = r.end;
  }
  return cursor === 0 ? text : out + text.slice(cursor);
}

/** The state of the region holding `offset` (a directive's region has the state of the text before it). */
export function stateAt(regions: readonly Region[], offset: number): RegionState {
  let lo = 0;
  let hi = regions.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = regions[mid];
    if (offset < r.start) hi = mid - 1;
    else if (offset >= r.end) lo = mid + 1;
    else return r.state;
  }
  return 'inactive';
}
