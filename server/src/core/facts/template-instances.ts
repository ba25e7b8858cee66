/**
 * A launch in a host function template reads the template's parameters (`k<<<g, BLOCK>>>` in
 * `template <int BLOCK> void run(...)`): alone it is unknown, and each call of the template is
 * reported at the call with its instance's values. A template defined in a `.cu` file is
 * instantiated by that unit alone, so where every use of its name in the file is such a call, the
 * launch's block is one of theirs: the instances the program runs.
 *
 * Pure: reads the document's launch observations, its outline and its parse view.
 */
import type { OutlineFunction } from '../program/outline';
import { join, type Val } from '../values/domain';
import type { LaunchObservation } from './launch-sites';

/** Bits of `paramsOf` that stand for template parameters (values/domain.ts, templateBit). */
const TEMPLATE_BITS = ((1 << 9) - 1) << 20;

export function withTemplateInstances(
  observations: readonly LaunchObservation[],
  doc: { path: string; view: string; functions: readonly OutlineFunction[] },
): LaunchObservation[] {
  if (!doc.path.endsWith('.cu')) return [...observations];
  // Each name's uses are found once, whatever number of launches its template holds.
  const usesOf = new Map<string, number[]>();
  return observations.map((o) => {
    if (o.through !== null || o.launchFile !== doc.path || known(o.block) || (o.params & TEMPLATE_BITS) === 0) return o;
    const fn = doc.functions.find(
      (f) => f.templateParams && f.bodyAt && f.bodyAt[0] <= o.launchAt[0] && o.launchAt[1] <= f.bodyAt[1],
    );
    // One function of that name, a plain one (not an operator): an overload's calls would be counted as the template's.
    if (!fn || !/^[A-Za-z_]\w*$/.test(fn.name) || doc.functions.filter((f) => f.name === fn.name).length !== 1)
      return o;
    const calls = observations.filter(
      (w) =>
        w.through?.kind === 'wrapper' &&
        w.launchFile === doc.path &&
        w.launchAt[0] === o.launchAt[0] &&
        w.path.endsWith(`>${o.path}`),
    );
    if (calls.length === 0) return o;
    // Every use of the name is a call read with its values: an explicit instantiation, a pointer taken,
    // a call from another template with its own parameters or a mention in a comment is not.
    const called = new Set(calls.map((w) => w.nameAt[0]));
    let written = usesOf.get(fn.name);
    if (!written) usesOf.set(fn.name, (written = uses(doc.view, fn.name)));
    for (const at of written) if (at !== fn.nameAt[0] && !called.has(at)) return o;
    let block: Val | null = null;
    for (const w of calls) {
      if (!known(w.block)) return o;
      block = block ? join(block, w.block) : w.block;
    }
    return block ? { ...o, block, instances: called.size } : o;
  });
}

/** A value with no unknown in it (a number, a few, or a dim3 of them). */
function known(v: Val): boolean {
  if (v.k === 'num') return true;
  if (v.k === 'dim3') return known(v.x) && known(v.y) && known(v.z);
  return false;
}

/** Where `name` is written as a whole word. */
function uses(text: string, name: string): number[] {
  const out: number[] = [];
  const word = new RegExp(`(?<![\\w$])${name}(?![\\w$])`, 'g');
  for (let m = word.exec(text); m; m = word.exec(text)) out.push(m.index);
  return out;
}
