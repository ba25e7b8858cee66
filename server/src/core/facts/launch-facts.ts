/**
 * Launches as the report reads them (types.ts `Launch`): each observation of the value analysis
 * written up with the configuration's text, its value where every path agrees on one, the few
 * values it can take where paths disagree (block size candidates), what is known of a partly
 * known `dim3` (`32 × ? × 1`), and a note that says where a value comes from or why it is unknown.
 */
import type { Dim3, Launch, ResolvedValue } from '../types';
import type { Expr, Range } from '../ir/expr';
import { printExpr } from '../ir/print-ir';
import { baseName, forEachExpr } from '../ir/expr';
import { positionAt, spanOf, type SourceText } from '../text/source-text';
import { asDim3, single, valKey, type FnRef, type Val } from '../values/domain';
import { kernelRefs, type LaunchObservation } from './launch-sites';
import type { FunctionScope, UnitProgram } from '../program/program';

export interface LaunchFactsInput {
  program: UnitProgram;
  /** The document: its path in the unit and its text as written. */
  path: string;
  source: SourceText;
  /** The program of another unit a launch was read in (LaunchObservation.unit). */
  programOf?: (unit: string) => UnitProgram | null;
  /** Told each offset of the document whose line or column a launch says (its places, a definition's line in a note). */
  placed?: (offset: number) => void;
}

/** At most this many candidate blocks are listed (each a row of the hover). */
const MAX_CANDIDATES = 8;

/**
 * `made`, when given, answers for an observation whose launch it already holds (the incremental
 * layer's: it calls `make` otherwise).
 */
export function launchFacts(
  observations: readonly LaunchObservation[],
  input: LaunchFactsInput,
  made?: (o: LaunchObservation, make: () => Launch) => Launch,
): Launch[] {
  const launches = observations.map((o) => (made ? made(o, () => toLaunch(o, input)) : toLaunch(o, input)));
  return launches.sort(
    (a, b) => a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character,
  );
}

function toLaunch(o: LaunchObservation, home: LaunchFactsInput): Launch {
  // A launch read in another unit: its expressions and constants are that unit's.
  const other = o.unit ? home.programOf?.(o.unit) : null;
  const input = other ? { ...home, program: other } : home;
  const refs = kernelRefs(o);
  // One kernel, or several that differ only in what this launch cannot tell: the first names it.
  const ref: FnRef | null = refs.length === 1 ? refs[0] : null;
  const explain = (e: Expr | null, v: Val) => (e ? noteFor(input, o, e, v) : v.k === 'top' ? (v.why ?? null) : null);
  // A launch a macro's body writes: its expressions from the body are read from the expansion.
  const use = o.through?.kind === 'macro' ? o.at : undefined;
  // A kernel the analysis could not pin is named as written: in a macro's body, as the expansion
  // reads (`red<T, 8>`), not as the macro's use (`LAUNCH_RED(8)`, which names no kernel).
  const kernelName = ref?.name ?? (o.kernelExpr ? exprText(input, o.launchFile, o.kernelExpr, use) : '?');
  const text = (e: Expr | null) => (e ? exprText(input, o.launchFile, e, use) : '');
  const block = dim3Value(o.block, text(o.exprs.block), explain(o.exprs.block, o.block), o.via);
  const grid = dim3Value(o.grid, text(o.exprs.grid), explain(o.exprs.grid, o.grid), o.via);
  const smemValue = o.smem === null ? 0 : single(o.smem);
  const dynamicSmem: ResolvedValue<number> =
    o.smem === null
      ? { text: '0', value: 0, note: 'not given (0)' }
      : {
          text: text(o.exprs.smem) || (smemValue !== null ? String(smemValue) : ''),
          value: smemValue !== null && Number.isInteger(smemValue) && smemValue >= 0 ? smemValue : null,
          note: explain(o.exprs.smem, o.smem) ?? (smemValue === null ? 'not a compile-time constant here' : null),
        };
  const candidates = block.value === null ? candidatesOf(o.block) : null;
  // The arguments are quoted where the kernel was named, which a wrapper's launch may not be.
  const namedIn = ref?.writtenIn ?? o.launchFile;
  const templateArgs = ref?.written
    ? ref.written.map((t) =>
        'type' in t ? t.type : exprText(input, namedIn, t.expr, namedIn === o.launchFile ? use : undefined),
      )
    : null;
  return {
    via: o.via,
    kernelName,
    baseName: baseName(kernelName),
    templateArgs,
    span: placedSpan(input, o.at),
    nameSpan: placedSpan(input, o.nameAt),
    grid,
    block,
    dynamicSmem,
    stream: o.exprs.stream ? text(o.exprs.stream) || null : null,
    inMacro: false,
    enclosingFunction: o.function,
    templateArgValues: ref?.templateArgs ? ref.templateArgs.map((t) => ('value' in t ? single(t.value) : null)) : null,
    ...(o.args.some((a) => integerOf(a) !== null) ? { argValues: o.args.map(integerOf) } : {}),
    calledThrough: ref?.through ?? null,
    through: o.through,
    ...(o.params !== 0 && !o.through ? { fromParameters: true as const } : {}),
    ...(o.instances ? { blockFromInstances: o.instances } : {}),
    ...(candidates ? { candidates } : {}),
  };
}

function placedSpan(input: LaunchFactsInput, [from, to]: Range) {
  input.placed?.(from);
  input.placed?.(to);
  return spanOf(input.source, from, to);
}

function integerOf(v: Val): number | null {
  const n = single(v);
  return n !== null && Number.isInteger(n) ? n : null;
}

function dim3Value(v: Val, text: string, note: string | null, via: LaunchObservation['via']): ResolvedValue<Dim3> {
  const d = asDim3(v);
  const value =
    d.k === 'dim3'
      ? (() => {
          const [x, y, z] = [single(d.x), single(d.y), single(d.z)];
          return x !== null && y !== null && z !== null && [x, y, z].every((n) => Number.isInteger(n))
            ? { x, y, z }
            : null;
        })()
      : null;
  if (value) return { text: text || `${value.x}`, value, note };
  const known = d.k === 'dim3' ? partial(d) : null;
  void via;
  return { text, value: null, note: note ?? 'not a compile-time constant here', ...(known ? { known } : {}) };
}

/** `32 × ? × 1`: what is known of a dim3 some of whose components are not. */
function partial(d: Extract<Val, { k: 'dim3' }>): string | null {
  const parts = [d.x, d.y, d.z].map((c) => single(c));
  if (parts.every((p) => p === null)) return null;
  return parts.map((p) => (p === null ? '?' : String(p))).join(' × ');
}

/** Each block a launch can take when the paths reaching it agree on a few (at least two), fewest threads first. */
function candidatesOf(v: Val): Dim3[] | null {
  const d = asDim3(v);
  if (d.k !== 'dim3') return null;
  const sets = [d.x, d.y, d.z].map((c) => (c.k === 'num' && c.values.every(Number.isInteger) ? c.values : null));
  if (sets.some((s) => s === null)) return null;
  const out: Dim3[] = [];
  for (const x of sets[0]!) for (const y of sets[1]!) for (const z of sets[2]!) out.push({ x, y, z });
  if (out.length < 2 || out.length > MAX_CANDIDATES) return null;
  return out.sort((a, b) => a.x * a.y * a.z - b.x * b.y * b.z || a.x - b.x);
}

/** The expression as written in its file (a launch written in a wrapper in a header: there). */
function exprText(input: LaunchFactsInput, file: string, e: Expr, use?: Range): string {
  // Tokens a macro's body writes stand at the macro's whole use (`LAUNCH(T, 64)`), as the launch
  // it writes does: that expression is said as the expansion reads. The macro's arguments keep
  // their own places, and are quoted as written.
  if (use && e.at[0] === use[0] && e.at[1] === use[1]) return printExpr(e);
  const text = file === input.path ? input.source.text : (input.program.file(file)?.view ?? '');
  return text.slice(e.at[0], e.at[1]).replace(/\s+/g, ' ').trim();
}

/**
 * Where a value comes from, or why it is not known: each constant the expression names with its
 * value and definition (`BLOCK = 256 (#define, config.h:3)`), or the first reason an unknown gives.
 */
function noteFor(input: LaunchFactsInput, o: LaunchObservation, e: Expr, v: Val): string | null {
  // Unknown, or partly (a dim3 one of whose components is): why the first unknown part is.
  const why = firstWhy(v);
  if (why) return why;
  const parts: string[] = [];
  const seen = new Set<string>();
  const scope: FunctionScope = { file: o.launchFile, scope: [], bindings: new Map() };
  const visit = (x: Expr): boolean => {
    if (x.from && !seen.has(x.from.name)) {
      seen.add(x.from.name);
      const value = input.program.evaluateIn(x, scope);
      const n = single(value);
      const where = `#define, ${location(input, x.from.file, x.from.defAt)}`;
      if (x.from.several)
        parts.push(`\`${x.from.name}\` is defined differently in branches of \`#if\` the unit cannot decide`);
      else
        parts.push(
          n !== null
            ? `${x.from.name} = ${n} (${where})`
            : `\`${x.from.name}\` (${where}) is not a compile-time integer`,
        );
      return false;
    }
    if (x.k === 'name' && x.local === null && !seen.has(x.name)) {
      seen.add(x.name);
      const d = input.program.describeConstant(x.name, scope);
      if (d)
        parts.push(
          d.value !== null
            ? `${x.name} = ${d.value} (${d.kind}, ${location(input, d.file, d.at)})`
            : `\`${x.name}\` (${d.kind}, ${location(input, d.file, d.at)}) is not a compile-time integer`,
        );
    }
    return true;
  };
  forEachExpr(e, visit);
  if (parts.length) return parts.join('; ');
  return v.k === 'top' ? (v.why ?? null) : null;
}

function firstWhy(v: Val): string | null {
  if (v.k === 'top') return v.why ?? null;
  if (v.k === 'dim3') return firstWhy(v.x) ?? firstWhy(v.y) ?? firstWhy(v.z);
  return null;
}

/** `line 3` in the document, `config.h:3` in another file. */
function location(input: LaunchFactsInput, file: string, at: number): string {
  if (file === '<built-in>' || file === '<command line>') return file;
  if (file === input.path) {
    input.placed?.(at);
    return `line ${positionAt(input.source, at).line + 1}`;
  }
  return `${file.slice(file.lastIndexOf('/') + 1)}:${lineOf(input.program.file(file)?.view ?? '', at)}`;
}

/** The 1-based line of an offset, counted without copying the text before it. */
function lineOf(text: string, at: number): number {
  let line = 1;
  for (let k = text.indexOf('\n'); k >= 0 && k < at; k = text.indexOf('\n', k + 1)) line++;
  return line;
}

export { valKey };
