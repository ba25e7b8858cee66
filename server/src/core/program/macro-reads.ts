/**
 * What a computation over a header read of its unit's macros: which names it asked whether the unit
 * defines, and what each macro it looked up was at each place it looked. A header is included by
 * many units; a result worked out in one holds in another exactly when the header's text is the
 * same and every one of these reads gets the same answer there (the same `#define`s before the
 * include, the same flags), and only then (see readsTable).
 */
import type { MacroState } from '../preprocess/conditions';
import type { MacroDef } from '../preprocess/macro-expansion';
import type { MacroScope, PreprocessedUnit } from '../preprocess/unit';
import { memoByObject } from '../incremental/kept-tables';

export interface MacroReads {
  /** Names asked of the unit's macro names, and whether it had them. */
  names: Map<string, boolean>;
  /** Macros looked up: file, offset, name, and the answer. */
  states: Array<[string, number, string, MacroState]>;
  /** Definitions the view has, looked up the same way. */
  views: Array<[string, number, string, MacroDef | null]>;
}

export function emptyReads(): MacroReads {
  return { names: new Map(), states: [], views: [] };
}

/** The unit's macros as `log` sees them: each answer it gives is written down in every log of `logs`. */
export function recordingScope(
  scope: MacroScope,
  path: string,
  offset: number,
  logs: readonly MacroReads[],
): MacroScope {
  return {
    state: (name) => {
      const state = scope.state(name);
      for (const log of logs) log.states.push([path, offset, name, state]);
      return state;
    },
    view: (name) => {
      const def = scope.view(name);
      for (const log of logs) log.views.push([path, offset, name, def]);
      return def;
    },
  };
}

/** Whether `unit` answers every read of `reads` as it was answered when they were made. */
export function sameReads(unit: PreprocessedUnit, reads: MacroReads): boolean {
  for (const [name, had] of reads.names) if (unit.macroNames.has(name) !== had) return false;
  let scope: MacroScope | null = null;
  let where = '';
  let at = -1;
  const scopeAt = (path: string, offset: number) => {
    // Reads come in runs at one place (a use and the macros its expansion reads).
    if (scope === null || path !== where || offset !== at) {
      scope = unit.macrosAt(path, offset);
      where = path;
      at = offset;
    }
    return scope;
  };
  for (const [path, offset, name, state] of reads.states)
    if (!sameState(scopeAt(path, offset).state(name), state)) return false;
  for (const [path, offset, name, def] of reads.views)
    if (!sameDef(scopeAt(path, offset).view(name), def)) return false;
  return true;
}

/** Whether the build may define it otherwise in both, and both may have the same definitions. */
function sameState(a: MacroState, b: MacroState): boolean {
  if (a === b) return true;
  if (a.open !== b.open || a.options.length !== b.options.length) return false;
  for (let i = 0; i < a.options.length; i++) if (!sameDef(a.options[i], b.options[i])) return false;
  return true;
}

/** The same definition: the units of a header share its `#define`s, else they are compared by what they say. */
function sameDef(a: MacroDef | null, b: MacroDef | null): boolean {
  return a === b || (a !== null && b !== null && defKey(a) === defKey(b));
}

/** A definition as text: where it is written and what it says (a flag's value has no place of its own). */
const defKey = memoByObject('macro definition keys', (def: MacroDef): string => {
  let body = '';
  for (const t of def.body ?? []) body += `${t.space ? ' ' : ''}${t.kind}:${t.text}\u0001`;
  return [
    def.file,
    def.at,
    def.name,
    def.params === null ? '' : def.params.join(','),
    def.variadic ? 'v' : '',
    def.body === null ? 'unknown' : body,
  ].join('\u0000');
});
