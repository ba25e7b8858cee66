/**
 * Every kernel launch in a file: `k<<<grid, block, smem, stream>>>(...)` with
 * plain, qualified and templated names, `cudaLaunchKernel`,
 * `cudaLaunchCooperativeKernel` and `cudaLaunchKernelEx` with a
 * `cudaLaunchConfig_t` filled in nearby. Launches inside `#define` bodies are
 * reported with `inMacro` and no values.
 */
import type { Dim3, Launch, LaunchVia, ResolvedValue, SmemOptIn } from '../types';
import {
  isIdentCharAt,
  isSpaceAt,
  isWordCode,
  lastComponent,
  makeSourceText,
  matchingClose,
  offsetAt,
  positionAt,
  spanOf,
  splitTopLevel,
  type SourceText,
} from '../text/source-text';
import { expandUse, findMacroUses, launchingMacros, type MacroDefinition } from '../text/macros';
import {
  findWrapperCalls,
  kernelIn,
  kernelNameIn,
  relevantArguments,
  resolveWrapperCall,
  wrapperAt,
  wrappersByName,
  wrappersKey,
  type CallScope,
  type KernelBinding,
  type WrapperDefinition,
  type WrapperRef,
  type WrapperStep,
} from './launch-wrappers';
import { findDirectiveRanges, inRanges } from '../text/preprocessor-lines';
import { findInactiveRanges, isInactive } from '../text/preprocessor-branches';
import { blockCandidates } from './block-candidates';
import { memoByObject } from '../incremental/kept-tables';
import { findScopes } from '../text/scopes';
import {
  collectConstants,
  explainNames,
  isReassigned,
  makeLookup,
  partialDim3,
  resolveDim3,
  scopeKeyAt,
  tableAt,
  type ConstantTable,
} from '../text/constant-table';
import { evaluateInteger, type Lookup } from '../text/const-eval';

export interface LaunchFinderOptions {
  /** Constants of the whole file (computed once by the caller). */
  fileConstants?: ConstantTable;
  /** Constants found elsewhere in the workspace (included headers). */
  fallback?: Lookup;
  /** Says where the fallback found a name (`BLOCK = 256 (#define, config.h:3)`), for notes. */
  describe?: (name: string) => string | null;
  /** Function-like macros in view (the file's, then its includes'): a use of one that launches is read as the launches it expands to. */
  macros?: ReadonlyMap<string, MacroDefinition>;
  /** Tables read after the file's, before the fallback: at a macro's use, the use's function's and file's constants. */
  scopeTables?: readonly ConstantTable[];
  /** Launch wrappers in view (the file's, its includes', the workspace's), by name: their calls are launches too. */
  wrappers?: ReadonlyMap<string, readonly WrapperRef[]>;
}

/** The launches of a text, and the wrappers its functions are (see launch-wrappers.ts). */
export interface LaunchFacts {
  launches: Launch[];
  wrappers: WrapperDefinition[];
}

const LAUNCH_APIS: Record<
  string,
  { via: LaunchVia; func: number; grid: number; block: number; smem: number; stream: number }
> = {
  cudaLaunchKernel: { via: 'cudaLaunchKernel', func: 0, grid: 1, block: 2, smem: 4, stream: 5 },
  cudaLaunchCooperativeKernel: { via: 'cudaLaunchCooperativeKernel', func: 0, grid: 1, block: 2, smem: 4, stream: 5 },
};

export function findLaunches(source: SourceText, options: LaunchFinderOptions = {}): Launch[] {
  return findLaunchFacts(source, options).launches;
}

/**
 * The launches of a whole text: those written in it (macro uses included), and the calls of the
 * wrappers in view and of those its own functions are, each read where it is written.
 */
export function findLaunchFacts(source: SourceText, options: LaunchFinderOptions = {}): LaunchFacts {
  const fileConstants = options.fileConstants ?? collectConstants(source);
  const direct = findDirectLaunches(source, { ...options, fileConstants });
  const outer = options.wrappers ?? NO_WRAPPERS;
  let derived: WrapperDefinition[] = [];
  let calls: LaunchFacts = { launches: [], wrappers: [] };
  // A function that calls a wrapper with its own parameters is a wrapper too: a few rounds, until no new one is found.
  for (let round = 0, key = ''; round < 4; round++) {
    const own = [...direct.wrappers, ...derived];
    if (own.length === 0 && outer.size === 0) break;
    calls = findCallLaunches(source, {
      ...options,
      fileConstants,
      wrappers: withOwnWrappers(outer, own, fileConstants, options.fallback),
    });
    const next = wrappersKey(calls.wrappers);
    if (next === key) break;
    key = next;
    derived = calls.wrappers;
  }
  return {
    launches: sortLaunches([...direct.launches, ...calls.launches]),
    wrappers: [...direct.wrappers, ...derived],
  };
}

/** `outer` with `own` (definitions of this text, read with its constants) added. */
export function withOwnWrappers(
  outer: ReadonlyMap<string, readonly WrapperRef[]>,
  own: readonly WrapperDefinition[],
  fileConstants: ConstantTable,
  fallback: Lookup | undefined,
): ReadonlyMap<string, readonly WrapperRef[]> {
  if (own.length === 0) return outer;
  const merged = new Map<string, WrapperRef[]>([...outer].map(([k, v]) => [k, [...v]]));
  // The text's own definitions of a name hide the workspace's (an included header's are the same ones, indexed).
  for (const name of new Set(own.map((d) => d.name))) merged.delete(name);
  return wrappersByName(own, [fileConstants], makeLookup([fileConstants], fallback), merged);
}

/** The launches written in the text (chevrons, launch APIs, macro uses), and the wrappers they make of their functions. */
export function findDirectLaunches(source: SourceText, options: LaunchFinderOptions = {}): LaunchFacts {
  const context = makeContext(source, options);
  const launches = [
    ...findChevronLaunches(context),
    ...findApiLaunches(context),
    ...findLaunchKernelEx(context),
    ...findMacroLaunches(context, 'direct'),
  ];
  const wrappers: WrapperDefinition[] = [];
  for (const p of context.parametric) {
    const def = wrapperAt(source, p.at, p.step, [p.step.kernel, p.step.block, p.step.smem]);
    if (def) wrappers.push(def);
  }
  return { launches: live(source, launches), wrappers };
}

/**
 * The launches the calls of `options.wrappers` in the text make (in macro uses too), and the
 * wrappers the calls that pass their own function's parameters on make of that function.
 */
export function findCallLaunches(source: SourceText, options: LaunchFinderOptions): LaunchFacts {
  const context = makeContext(source, options);
  const found = findWrapperLaunches(context);
  const fromMacros = findMacroLaunches(context, 'calls');
  return {
    launches: live(source, [...found.launches, ...fromMacros]),
    wrappers: [...found.wrappers, ...context.derived],
  };
}

/** Not the launches in `#if` branches that are certainly off (`#if 0`): they never run. */
function live(source: SourceText, launches: Launch[]): Launch[] {
  const off = findInactiveRanges(source).certain;
  return sortLaunches(off.length ? launches.filter((l) => !isInactive(off, offsetAt(source, l.span.start))) : launches);
}

function sortLaunches(launches: Launch[]): Launch[] {
  return launches.sort(
    (a, b) => a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character,
  );
}

const NO_WRAPPERS: ReadonlyMap<string, readonly WrapperRef[]> = new Map();

interface LaunchContext {
  source: SourceText;
  layout: FileLayout;
  fileConstants: ConstantTable;
  fallback: Lookup;
  describe: (name: string) => string | null;
  /** The constants in view inside each function body (key: its `{`, and the declarations in view), or at file scope (key -1), made once. */
  constantScopes: Map<string, ConstantScope>;
  /** Each function body's own constants (key: its `{`). */
  functionTables: Map<number, ConstantTable>;
  macros: ReadonlyMap<string, MacroDefinition>;
  scopeTables: readonly ConstantTable[];
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>;
  /** Launches whose kernel, block or shared memory may name their function's parameters: wrapper candidates. */
  parametric: Array<{ at: number; step: WrapperStep & { kind: 'launch' } }>;
  /** Wrappers that wrapper calls in macro expansions made of the use's function. */
  derived: WrapperDefinition[];
}

interface ConstantScope {
  /** Innermost first: the function's, then the file's. */
  tables: ConstantTable[];
  lookup: Lookup;
  /** Launch texts read here, with what they resolve to and their notes: a function's launches repeat their `grid` and `block`. */
  dim3s: Map<string, Dim3 | null>;
  notes: Map<string, string | null>;
}

function dim3In(scope: ConstantScope, text: string): Dim3 | null {
  let value = scope.dim3s.get(text);
  if (value === undefined) {
    value = resolveDim3(text, scope.tables, scope.lookup);
    scope.dim3s.set(text, value);
  }
  return value;
}

function explainIn(ctx: LaunchContext, scope: ConstantScope, text: string): string | null {
  let note = scope.notes.get(text);
  if (note === undefined) {
    note = explainNames(text, scope.tables, scope.lookup, ctx.describe);
    scope.notes.set(text, note);
  }
  return note;
}

function makeContext(source: SourceText, options: LaunchFinderOptions): LaunchContext {
  const fileConstants = options.fileConstants ?? collectConstants(source);
  return {
    source,
    layout: fileLayout(source),
    fileConstants,
    fallback: options.fallback ?? (() => null),
    describe: options.describe ?? (() => null),
    constantScopes: new Map(),
    functionTables: new Map(),
    macros: options.macros ?? fileConstants.macros ?? NO_MACROS,
    scopeTables: options.scopeTables ?? [],
    wrappers: options.wrappers ?? NO_WRAPPERS,
    parametric: [],
    derived: [],
  };
}

/** Where the directives and function bodies of a file are: found once per text, for launches and opt-ins both. */
interface FileLayout {
  directives: ReadonlyArray<[number, number]>;
  /** Outermost brace blocks that are not namespaces or extern "C": [open, close], sorted. */
  outerBlocks: Array<[number, number]>;
  /** Function bodies read so far, by the offset of their `{`. */
  bodies: Map<number, FunctionBody>;
}

/** The layout of a text, read once per text: the launches of every function body in it share it. */
const fileLayout = memoByObject('launch-finder layouts', (source: SourceText): FileLayout => {
  const scopeOpens = new Set(findScopes(source).map((s) => s.open));
  return {
    directives: findDirectiveRanges(source),
    outerBlocks: findOuterBlocks(source.masked, scopeOpens),
    bodies: new Map(),
  };
});

/** One forward pass: the `{...}` blocks directly inside the file or a namespace / extern "C" block. */
function findOuterBlocks(masked: string, scopeOpens: ReadonlySet<number>): Array<[number, number]> {
  const blocks: Array<[number, number]> = [];
  // For each open brace: whether it opens a namespace or extern "C" block.
  const openScopes: boolean[] = [];
  let nonScopeDepth = 0;
  const brace = /[{}]/g;
  for (let m = brace.exec(masked); m; m = brace.exec(masked)) {
    const i = m.index;
    if (masked.charCodeAt(i) === OPEN_BRACE) {
      const scope = scopeOpens.has(i);
      if (!scope && nonScopeDepth === 0) blocks.push([i, masked.length]);
      if (!scope) nonScopeDepth++;
      openScopes.push(scope);
    } else if (openScopes.length > 0) {
      if (!openScopes.pop()) {
        nonScopeDepth--;
        if (nonScopeDepth === 0) blocks[blocks.length - 1][1] = i;
      }
    }
  }
  return blocks;
}

const OPEN_BRACE = 123;

function findChevronLaunches(ctx: LaunchContext): Launch[] {
  const { source } = ctx;
  const masked = source.masked;
  const launches: Launch[] = [];
  const re = /<<<|<<\s+</g;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    if (masked[m.index - 1] === '<') continue;
    const configStart = m.index + m[0].length;
    const configEnd = findChevronClose(masked, configStart);
    if (!configEnd) continue;
    const name = readCalleeBackward(masked, m.index);
    if (!name) continue;
    const args = splitTopLevel(masked, configStart, configEnd.at).map(([a, b]) => source.text.slice(a, b));
    const callOpen = skipSpace(masked, configEnd.at + configEnd.length);
    const callClose = masked[callOpen] === '(' ? matchingClose(masked, callOpen) : -1;
    const end = callClose >= 0 ? callClose + 1 : configEnd.at + configEnd.length;
    launches.push(
      makeLaunch(
        ctx,
        'chevrons',
        name,
        { grid: args[0], block: args[1], smem: args[2], stream: args[3] },
        name.start,
        end,
      ),
    );
    re.lastIndex = configEnd.at + configEnd.length;
  }
  return launches;
}

/** The `>>>` (or `> >>`, `>> >`) closing a launch configuration, at bracket depth 0. */
function findChevronClose(masked: string, from: number): { at: number; length: number } | null {
  let depth = 0;
  for (let i = from; i < masked.length; i++) {
    const c = masked[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (--depth < 0) return null;
    } else if (c === ';') return null;
    else if (c === '>' && depth === 0) {
      const close = /^>\s*>\s*>/.exec(masked.slice(i, i + 16));
      if (close) return { at: i, length: close[0].length };
    }
  }
  return null;
}

interface CalleeName {
  /** `ns::k` */
  name: string;
  templateArgs: string[] | null;
  start: number;
  nameEnd: number;
}

/** Read `ns::k<float, 256>` backwards from the offset of `<<<`. */
function readCalleeBackward(masked: string, before: number): CalleeName | null {
  let i = before - 1;
  while (i >= 0 && isBlankOrContinuation(masked, i)) i--;
  let templateArgs: string[] | null = null;
  let nameEnd = i + 1;
  if (masked[i] === '>') {
    let depth = 0;
    let j = i;
    for (; j >= 0; j--) {
      if (masked[j] === '>') depth++;
      else if (masked[j] === '<') {
        if (--depth === 0) break;
      } else if (masked[j] === ';' || masked[j] === '{' || masked[j] === '}') return null;
    }
    if (j < 0) return null;
    templateArgs = splitTopLevel(masked, j + 1, i).map(([a, b]) =>
      masked
        .slice(a, b)
        .replace(/\\\r?\n/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    i = j - 1;
    while (i >= 0 && isBlankOrContinuation(masked, i)) i--;
    nameEnd = i + 1;
  }
  if (masked[i] === ')') {
    // `(*fp)<<<...>>>`
    const open = matchingOpen(masked, i);
    if (open < 0) return null;
    const inner = masked.slice(open + 1, i).replace(/[\s*&]/g, '');
    if (!/^[A-Za-z_][\w:]*$/.test(inner)) return null;
    return { name: inner, templateArgs, start: open, nameEnd: i + 1 };
  }
  let start = i + 1;
  while (start > 0 && (isIdentCharAt(masked, start - 1) || (masked[start - 1] === ':' && masked[start - 2] === ':'))) {
    start -= masked[start - 1] === ':' ? 2 : 1;
  }
  const name = masked.slice(start, nameEnd).replace(/\s+/g, '');
  if (!/^(::)?[A-Za-z_][\w]*(::[A-Za-z_]\w*)*$/.test(name)) return null;
  return { name: name.replace(/^::/, ''), templateArgs, start, nameEnd };
}

/** A blank, or the `\\` of a macro body's line continuation (a launch's name and its `<<<` on two lines of a `#define`). */
function isBlankOrContinuation(masked: string, i: number): boolean {
  return isSpaceAt(masked, i) || (masked.charCodeAt(i) === 92 && /^\\\r?\n/.test(masked.slice(i, i + 3)));
}

function matchingOpen(masked: string, close: number): number {
  let depth = 0;
  for (let i = close; i >= 0; i--) {
    if (masked[i] === ')') depth++;
    else if (masked[i] === '(' && --depth === 0) return i;
  }
  return -1;
}

function skipSpace(masked: string, i: number): number {
  while (i < masked.length && isSpaceAt(masked, i)) i++;
  return i;
}

/**
 * `cudaLaunchKernel((void*)k, grid, block, args, smem, stream)`, the cooperative form, and the
 * driver API's `cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, args, extra)`.
 */
function findApiLaunches(ctx: LaunchContext): Launch[] {
  const { source } = ctx;
  const masked = source.masked;
  const launches: Launch[] = [];
  const re = /\b(cudaLaunchKernel|cudaLaunchCooperativeKernel|cuLaunchKernel)\s*(<[^;()]*>)?\s*\(/g;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const open = m.index + m[0].length - 1;
    const close = matchingClose(masked, open);
    if (close < 0) continue;
    if (isDeclaration(masked, m.index)) continue;
    const args = splitTopLevel(masked, open + 1, close).map(([a, b]) => source.text.slice(a, b));
    if (m[1] === 'cuLaunchKernel') {
      // A CUfunction: the name of the variable that holds it.
      const callee = kernelFromFunctionArgument(args[0] ?? '', m.index);
      if (!callee || args.length < 9) continue;
      const dims = (from: number) =>
        `{${args
          .slice(from, from + 3)
          .map((a) => a.trim())
          .join(', ')}}`;
      launches.push(
        makeLaunch(
          ctx,
          'cuLaunchKernel',
          callee,
          { grid: dims(1), block: dims(4), smem: args[7], stream: args[8] },
          m.index,
          close + 1,
        ),
      );
      continue;
    }
    const api = LAUNCH_APIS[m[1]];
    const callee = kernelFromFunctionArgument(args[api.func] ?? '', m.index);
    if (!callee) continue;
    launches.push(
      makeLaunch(
        ctx,
        api.via,
        callee,
        { grid: args[api.grid], block: args[api.block], smem: args[api.smem], stream: args[api.stream] },
        m.index,
        close + 1,
      ),
    );
  }
  return launches;
}

const NO_MACROS: ReadonlyMap<string, MacroDefinition> = new Map();

/** The macros among those in view whose uses expand to a launch: worked out once per table of macros. */
const launchingMacrosOf = memoByObject('launching macros', (macros: ReadonlyMap<string, MacroDefinition>) =>
  launchingMacros(macros, mayLaunch),
);

/** A macro body that may hold a launch (a chevron, a launch API). */
function mayLaunch(body: string): boolean {
  return body.includes('<<') || /\bcu(?:da)?Launch/.test(body);
}

/**
 * The launches macro uses expand to: each use of a macro whose body (or a macro it uses) launches,
 * expanded with its arguments and read as code written at the use, with the constants in view
 * there. Each launch is reported at the use (a use that launches twice gives two launches there).
 */
function findMacroLaunches(ctx: LaunchContext, mode: 'direct' | 'calls'): Launch[] {
  if (ctx.macros.size === 0 || (mode === 'calls' && ctx.wrappers.size === 0)) return [];
  const launching = mode === 'direct' ? launchingMacrosOf(ctx.macros) : callingMacros(ctx.macros, ctx.wrappers);
  if (launching.size === 0) return [];
  const out: Launch[] = [];
  for (const use of findMacroUses(ctx.source, launching)) {
    const expanded = expandUse(launching.get(use.name)!, use.args, ctx.macros);
    if (!expanded) continue;
    const body = enclosingFunctionBody(ctx, use.start);
    const scope = constantScope(ctx, body, use.start);
    // Statements (a use in a function body) are read as a block of their own: their declarations are locals.
    const inner = makeSourceText(body ? `{\n${expanded}\n}` : expanded);
    const span = spanOf(ctx.source, use.start, use.end);
    const nameSpan = spanOf(ctx.source, use.start, use.nameEnd);
    const options: LaunchFinderOptions = {
      fallback: ctx.fallback,
      describe: ctx.describe,
      scopeTables: scope.tables,
      macros: NO_MACROS,
      wrappers: ctx.wrappers,
    };
    const found =
      mode === 'direct' ? findDirectLaunches(inner, options).launches : findCallLaunches(inner, options).launches;
    for (const launch of found) {
      if (launch.inMacro) continue;
      out.push({
        ...launch,
        span,
        nameSpan,
        through: launch.through ?? { kind: 'macro', name: use.name },
        enclosingFunction: body?.name ?? launch.enclosingFunction,
      });
    }
  }
  return out;
}

/** The macros whose expansion may call one of `wrappers`. */
function callingMacros(
  macros: ReadonlyMap<string, MacroDefinition>,
  wrappers: ReadonlyMap<string, readonly WrapperRef[]>,
): Map<string, MacroDefinition> {
  const names = [...wrappers.keys()];
  return launchingMacros(macros, (body) => names.some((n) => body.includes(n)));
}

/** The calls of wrappers in the text, each read as the launches it makes, reported at the call. */
function findWrapperLaunches(ctx: LaunchContext): LaunchFacts {
  const out: LaunchFacts = { launches: [], wrappers: [] };
  if (ctx.wrappers.size === 0) return out;
  const { source } = ctx;
  for (const call of findWrapperCalls(source, ctx.wrappers)) {
    const body = enclosingFunctionBody(ctx, call.start);
    const scope = constantScope(ctx, body, call.start);
    const callScope: CallScope = {
      tables: scope.tables,
      lookup: scope.lookup,
      line: positionAt(source, call.start).line,
      kernelOf: (text) => kernelArgument(ctx, text, call.start, body, scope.lookup),
    };
    const span = spanOf(source, call.start, call.end);
    const nameSpan = spanOf(source, call.start, call.nameEnd);
    for (const r of resolveWrapperCall(call, ctx.wrappers, callScope)) {
      // A call of a wrapper that calls the launching one, telling nothing that one's call does not (the kernel a name there, nothing known), is no launch of its own.
      if (
        r.nested &&
        r.kernel.name === r.writtenKernel &&
        r.block.value === null &&
        r.dynamicSmem.value === null &&
        r.kernel.templateArgs === null
      )
        continue;
      out.launches.push({
        via: r.via,
        kernelName: r.kernel.name,
        baseName: lastComponent(r.kernel.name),
        templateArgs: r.kernel.templateArgs,
        span,
        nameSpan,
        grid: r.grid,
        block: r.block,
        dynamicSmem: r.dynamicSmem,
        stream: r.stream,
        inMacro: false,
        enclosingFunction: body?.name ?? null,
        calledThrough: r.kernel.calledThrough,
        templateArgValues: r.kernel.templateArgValues,
        through: { kind: 'wrapper', name: call.written },
      });
    }
    // A call that passes its own function's parameters on to what the wrapper launches with: that function is a wrapper too.
    const relevant = relevantArguments(call, ctx.wrappers);
    if (relevant.length) {
      const def = wrapperAt(
        source,
        call.start,
        {
          kind: 'call',
          callee: call.written,
          templateArgs: call.templateArgs,
          ctorArgs: call.ctorArgs,
          args: call.args,
        },
        relevant,
      );
      if (def) out.wrappers.push(def);
    }
  }
  return out;
}

/** A call's argument naming a kernel: `k<T, 128>`, `&k`, or a local that holds one (`auto kernel = k<256>;`). */
function kernelArgument(
  ctx: LaunchContext,
  text: string,
  at: number,
  body: FunctionBody | null,
  lookup: Lookup,
): KernelBinding | null {
  const written = kernelIn(text, lookup);
  if (!written || written.templateArgs || written.name.includes('::')) return written;
  const target = resolveFunctionPointer(ctx, written.name, at, body);
  if (!target) return written;
  return {
    name: target.name,
    templateArgs: target.templateArgs,
    templateArgValues: target.templateArgs ? target.templateArgs.map((a) => evaluateInteger(a, lookup)) : null,
    calledThrough: written.name,
  };
}

/** `cudaLaunchKernelEx(&config, kernel, args...)` with `config.blockDim = ...` assigned nearby. */
function findLaunchKernelEx(ctx: LaunchContext): Launch[] {
  const { source } = ctx;
  const masked = source.masked;
  const launches: Launch[] = [];
  const re = /\bcudaLaunchKernelEx(?:C)?\s*\(/g;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const open = m.index + m[0].length - 1;
    const close = matchingClose(masked, open);
    if (close < 0 || isDeclaration(masked, m.index)) continue;
    const args = splitTopLevel(masked, open + 1, close).map(([a, b]) => source.text.slice(a, b));
    const configName = /^&?\s*([A-Za-z_]\w*)$/.exec((args[0] ?? '').trim())?.[1];
    const callee = kernelFromFunctionArgument(args[1] ?? '', m.index);
    if (!callee) continue;
    const fields = configName ? readConfigFields(ctx, configName, m.index) : {};
    launches.push(makeLaunch(ctx, 'cudaLaunchKernelEx', callee, fields, m.index, close + 1));
  }
  return launches;
}

function readConfigFields(
  ctx: LaunchContext,
  configName: string,
  before: number,
): { grid?: string; block?: string; smem?: string; stream?: string } {
  const masked = ctx.source.masked;
  const body = enclosingFunctionBody(ctx, before);
  const from = body ? body.open : 0;
  const region = masked.slice(from, before);
  const last = (field: string) => {
    const re = new RegExp(String.raw`\b${configName}\s*(?:\.|->)\s*${field}\s*=\s*([^;]+);`, 'g');
    let value: string | undefined;
    for (let m = re.exec(region); m; m = re.exec(region))
      value = ctx.source.text.slice(
        from + m.index + m[0].indexOf(m[1]),
        from + m.index + m[0].indexOf(m[1]) + m[1].length,
      );
    return value;
  };
  const fields = {
    grid: last('gridDim'),
    block: last('blockDim'),
    smem: last('dynamicSmemBytes'),
    stream: last('stream'),
  };
  const aggregate = new RegExp(String.raw`\bcudaLaunchConfig_t\s+${configName}\s*=?\s*\{([^;]*)\}\s*;`).exec(region);
  if (aggregate) {
    const start = from + aggregate.index + aggregate[0].indexOf('{') + 1;
    const parts = splitTopLevel(masked, start, start + aggregate[1].length).map(([a, b]) =>
      ctx.source.text.slice(a, b),
    );
    if (parts.length && !parts[0].trim().startsWith('.')) {
      fields.grid ??= parts[0];
      fields.block ??= parts[1];
      fields.smem ??= parts[2];
      fields.stream ??= parts[3];
    } else {
      for (const p of parts) {
        const d = /^\s*\.(\w+)\s*=\s*(.*)$/s.exec(p);
        if (!d) continue;
        if (d[1] === 'gridDim') fields.grid ??= d[2];
        if (d[1] === 'blockDim') fields.block ??= d[2];
        if (d[1] === 'dynamicSmemBytes') fields.smem ??= d[2];
        if (d[1] === 'stream') fields.stream ??= d[2];
      }
    }
  }
  return fields;
}

function isDeclaration(masked: string, at: number): boolean {
  // `cudaError_t cudaLaunchKernel(const void* func, ...)` in a header
  const before = masked.slice(Math.max(0, at - 80), at);
  return /\b(cudaError_t|CUresult|extern|__host__)\s*(\w+\s+)*$/.test(before);
}

/** The kernel named by a launch API's function argument: `(void*)k`, `reinterpret_cast<const void*>(&ns::k<T>)`, `k`. */
function kernelFromFunctionArgument(text: string, at: number): CalleeName | null {
  const named = kernelNameIn(text);
  return named && { ...named, start: at, nameEnd: at };
}

interface ConfigTexts {
  grid?: string;
  block?: string;
  smem?: string;
  stream?: string;
}

function makeLaunch(
  ctx: LaunchContext,
  via: LaunchVia,
  written: CalleeName,
  config: ConfigTexts,
  start: number,
  end: number,
): Launch {
  const { source } = ctx;
  const inMacro = inRanges(ctx.layout.directives, start);
  const body = inMacro ? null : enclosingFunctionBody(ctx, start);
  const pointerTarget = inMacro || written.templateArgs ? null : resolveFunctionPointer(ctx, written.name, start, body);
  const callee = pointerTarget ?? written;
  const scope = constantScope(ctx, body, start);
  const { lookup } = scope;
  const explain = (text: string) => explainIn(ctx, scope, text);
  const unresolved = (text: string | undefined, why: string) => ({ text: (text ?? '').trim(), value: null, note: why });
  const dim = (text: string | undefined): ResolvedValue<Dim3> => {
    if (text === undefined) return unresolved(text, 'not given');
    if (inMacro) return unresolved(text, 'in a macro body: the arguments are known only where the macro is used');
    const value = dim3In(scope, text);
    const note = explain(text);
    if (value) return { text: text.trim(), value, note };
    // Partly known: say what is known, never a number (`32 × ? × 1`), and why the rest is not.
    const known = partialDim3(text, scope.tables, lookup);
    const definition = /^\s*[A-Za-z_]\w*\s*$/.test(text)
      ? scope.tables.find((t) => t.dim3s.has(text.trim()))?.dim3s.get(text.trim())
      : undefined;
    const why =
      note ??
      (definition && definition.args.length ? explain(definition.args.join(', ')) : null) ??
      'not a compile-time constant here';
    return { text: text.trim(), value: null, note: why, ...(known ? { known } : {}) };
  };
  let dynamicSmem: ResolvedValue<number>;
  if (config.smem === undefined || config.smem.trim() === '')
    dynamicSmem = { text: '0', value: inMacro ? null : 0, note: 'not given (0)' };
  else if (inMacro)
    dynamicSmem = unresolved(config.smem, 'in a macro body: the arguments are known only where the macro is used');
  else {
    const value = evaluateInteger(config.smem.trim(), lookup);
    const note = explain(config.smem);
    dynamicSmem = {
      text: config.smem.trim(),
      value,
      note: value === null ? (note ?? 'not a compile-time constant here') : note,
    };
  }
  const nameStart = via === 'chevrons' ? written.start : start;
  const nameEnd = via === 'chevrons' ? written.nameEnd : start + via.length;
  const block = dim(config.block);
  const candidates =
    block.value === null && !inMacro && config.block !== undefined
      ? blockCandidates(config.block, scope.tables, lookup, source.masked, start)
      : null;
  // What a call could set: a block or shared memory not known here, or a kernel that is a parameter.
  if (
    !inMacro &&
    body &&
    (block.value === null ||
      dynamicSmem.value === null ||
      (!callee.name.includes('::') && (body.name === null || body.parameters.includes(callee.name))))
  ) {
    ctx.parametric.push({
      at: start,
      step: {
        kind: 'launch',
        via,
        kernel: callee.name,
        templateArgs: callee.templateArgs,
        grid: config.grid,
        block: config.block,
        smem: config.smem,
        stream: config.stream,
      },
    });
  }
  return {
    via,
    kernelName: callee.name,
    baseName: lastComponent(callee.name),
    templateArgs: callee.templateArgs,
    span: spanOf(source, start, end),
    nameSpan: spanOf(source, nameStart, nameEnd),
    grid: dim(config.grid),
    block,
    dynamicSmem,
    stream: config.stream?.trim() || null,
    inMacro,
    enclosingFunction: body?.name ?? null,
    calledThrough: pointerTarget ? written.name : null,
    templateArgValues:
      callee.templateArgs && !inMacro ? callee.templateArgs.map((a) => evaluateInteger(a, lookup)) : null,
    ...(candidates ? { candidates } : {}),
  };
}

/**
 * `fp` in `fp<<<...>>>` when it is a function pointer with one visible target:
 * `auto fp = k;`, `void (*fp)(float*) = &k;`, `decltype(&k) fp = k<float>;`.
 * Null when there is no such declaration, or when `fp` is assigned again.
 */
function resolveFunctionPointer(
  ctx: LaunchContext,
  name: string,
  at: number,
  body: FunctionBody | null,
): CalleeName | null {
  if (!/^[A-Za-z_]\w*$/.test(name)) return null;
  const masked = ctx.source.masked;
  const from = body ? body.open : 0;
  const to = body ? body.close : masked.length;
  const region = masked.slice(from, at);
  if (!mayBeDeclaredIn(region, name)) return null;
  const decl = new RegExp(
    String.raw`(?:^|[;{}])[^;{}=]*?[\s*(]${name}\s*\)?\s*(?:\([^;{}=]*\))?\s*=\s*&?\s*((?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)\s*(<[^;{}()]*>)?\s*;`,
    'g',
  );
  const found: RegExpExecArray[] = [];
  for (let m = decl.exec(region); m; m = decl.exec(region)) found.push(m);
  if (found.length !== 1) return null;
  const m = found[0];
  if (!/\bauto\b|\(\s*\*|\bdecltype\b|\*/.test(m[0].slice(0, m[0].indexOf('=')))) {
    // a typedef'd pointer type (`kernel_t fp = k;`) is fine too, but not `fp = k;` alone
    if (
      !/[A-Za-z_]\w*\s+[A-Za-z_]/.test(
        m[0]
          .slice(0, m[0].indexOf('='))
          .replace(/^[;{}]/, '')
          .trim(),
      )
    )
      return null;
  }
  const declEnd = from + m.index + m[0].length;
  if (isReassigned(masked.slice(0, to), name, declEnd, to)) return null;
  const targetArgs = m[2]
    ? splitTopLevel(m[2], 1, m[2].length - 1).map(([a, b]) => m[2].slice(a, b).replace(/\s+/g, ' '))
    : null;
  return { name: m[1].replace(/\s+/g, '').replace(/^::/, ''), templateArgs: targetArgs, start: at, nameEnd: at };
}

/**
 * Whether `name` stands somewhere in `region` followed by what a declarator
 * continues with (`=`, `)`, `(`): most launches name a kernel that the code
 * before them never declares, and this spares them the declaration pattern.
 */
function mayBeDeclaredIn(region: string, name: string): boolean {
  for (let i = region.indexOf(name); i >= 0; i = region.indexOf(name, i + 1)) {
    const next = region[skipSpace(region, i + name.length)];
    if (next === '=' || next === ')' || next === '(') return true;
  }
  return false;
}

/**
 * The constants code at `at` in `body` (null: at file scope) can use, and a lookup over them: one
 * scope per function, and one per set of declarations in view where the function declares a name
 * in several blocks.
 */
function constantScope(ctx: LaunchContext, body: FunctionBody | null, at: number): ConstantScope {
  let functionTable: ConstantTable | undefined;
  let key = body ? `${body.open}` : '-1';
  if (body) {
    functionTable = ctx.functionTables.get(body.open);
    if (!functionTable) {
      functionTable = functionConstants(ctx, body);
      ctx.functionTables.set(body.open, functionTable);
    }
    if (functionTable.scoped) key += `@${scopeKeyAt(functionTable, at)}`;
  }
  let scope = ctx.constantScopes.get(key);
  if (!scope) {
    const tables = functionTable
      ? [tableAt(functionTable, at), ctx.fileConstants, ...ctx.scopeTables]
      : [ctx.fileConstants, ...ctx.scopeTables];
    scope = { tables, lookup: makeLookup(tables, ctx.fallback), dim3s: new Map(), notes: new Map() };
    ctx.constantScopes.set(key, scope);
  }
  return scope;
}

function functionConstants(ctx: LaunchContext, body: FunctionBody): ConstantTable {
  const why = (name: string) =>
    `\`${name}\` is a parameter of \`${body.name ?? 'the enclosing function'}\`, known only at run time`;
  const table = collectConstants(ctx.source, body.open, body.close, {
    localsMustBeConst: false,
    parameters: body.parameters,
    parameterNote: why,
  });
  const shadowed = (table.shadowed ??= new Map());
  for (const name of body.parameters) {
    table.constants.delete(name);
    table.dim3s.delete(name);
    shadowed.set(name, why(name));
  }
  // A template parameter hides any constant of that name elsewhere: its value is the instantiation's.
  for (const param of body.templateParameters) {
    table.constants.delete(param);
    table.dim3s.delete(param);
    shadowed.set(
      param,
      `\`${param}\` is a template parameter of \`${body.name ?? 'the enclosing template'}\`, known only per instantiation`,
    );
  }
  return table;
}

interface FunctionBody {
  name: string | null;
  open: number;
  close: number;
  /** Names of the function's parameters (they shadow outer constants). */
  parameters: string[];
  /** Names of the template parameters of the function (or of the class template whose body it is). */
  templateParameters: string[];
}

/** The outermost brace block around `offset` that is not a namespace or extern "C" block: the function body. */
function enclosingFunctionBody(ctx: LaunchContext, offset: number): FunctionBody | null {
  const masked = ctx.source.masked;
  const blocks = ctx.layout.outerBlocks;
  let lo = 0;
  let hi = blocks.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (blocks[mid][0] >= offset) hi = mid - 1;
    else if (blocks[mid][1] < offset) lo = mid + 1;
    else {
      found = mid;
      break;
    }
  }
  if (found < 0) return null;
  // The block's end is its `}` (what matchingClose finds: both pair every brace), or the end of the text.
  const [candidate, close] = blocks[found];
  const cached = ctx.layout.bodies.get(candidate);
  if (cached) return cached;
  let j = candidate - 1;
  while (j >= 0 && (isSpaceAt(masked, j) || isWordCode(masked.charCodeAt(j)))) j--;
  let name: string | null = null;
  const parameters: string[] = [];
  if (masked[j] === ')') {
    const open = matchingOpen(masked, j);
    const before = masked.slice(Math.max(0, open - 200), open);
    name = trailingName(before, true);
    for (const [a, b] of splitTopLevel(masked, open + 1, j)) {
      const declarator = masked
        .slice(a, b)
        .replace(/=.*$/s, '')
        .replace(/\[[^\]]*\]/g, '')
        .trim();
      const param = trailingName(declarator, false);
      if (param && param !== 'void' && /[\s*&]/.test(declarator)) parameters.push(param);
    }
  }
  const body = {
    name,
    open: candidate,
    close,
    parameters,
    templateParameters: templateParametersBefore(masked, masked[j] === ')' ? matchingOpen(masked, j) : candidate),
  };
  ctx.layout.bodies.set(candidate, body);
  return body;
}

/**
 * The names declared by the `template <...>` header of the declaration that reaches `at` (the
 * parameter list's `(` of a function, or the `{` of a class): `template <typename T, int ROWS = 4>`
 * gives `T` and `ROWS`. Empty for a declaration that is not a template.
 */
function templateParametersBefore(masked: string, at: number): string[] {
  if (at <= 0) return [];
  // The declaration starts after the last `;`, `{` or `}` before it (the template header's `<...>` holds none).
  let start = at - 1;
  for (let depth = 0; start >= 0 && at - start < 2000; start--) {
    const c = masked[start];
    if (c === ')' || c === ']') depth++;
    else if (c === '(' || c === '[') depth--;
    else if (depth <= 0 && (c === ';' || c === '{' || c === '}')) break;
  }
  const head = masked.slice(start + 1, at);
  const names: string[] = [];
  const re = /\btemplate\s*</g;
  for (let m = re.exec(head); m; m = re.exec(head)) {
    const open = m.index + m[0].length - 1;
    let depth = 0;
    let close = -1;
    for (let i = open; i < head.length; i++) {
      if (head[i] === '<') depth++;
      else if (head[i] === '>' && --depth === 0) {
        close = i;
        break;
      }
    }
    if (close < 0) break;
    for (const [a, b] of splitTopLevel(head, open + 1, close)) {
      const declarator = head
        .slice(a, b)
        .replace(/=.*$/s, '')
        .replace(/\.\.\./g, ' ')
        .trim();
      const name = trailingName(declarator, false);
      if (name && /[\s*&>]/.test(declarator) && !/^(typename|class|int|unsigned|bool|auto)$/.test(name))
        names.push(name);
    }
    re.lastIndex = close + 1;
  }
  return names;
}

/**
 * The name `text` ends with, before trailing blanks: what `/([A-Za-z_]\w*)\s*$/`
 * captures (with `:` among the word characters when `scoped`), without that
 * pattern's retries at every position of a long text.
 */
function trailingName(text: string, scoped: boolean): string | null {
  let end = text.length;
  while (end > 0 && isSpaceAt(text, end - 1)) end--;
  let start = end;
  while (start > 0 && (isWordCode(text.charCodeAt(start - 1)) || (scoped && text[start - 1] === ':'))) start--;
  while (start < end && !isNameStart(text.charCodeAt(start))) start++;
  return start < end ? text.slice(start, end) : null;
}

function isNameStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95; // A-Z a-z _
}

/**
 * `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`
 * calls (and the templated C++ form), which let a kernel's launches use more
 * than 48 KB of dynamic shared memory.
 */
export function findSmemOptIns(source: SourceText, options: LaunchFinderOptions = {}): SmemOptIn[] {
  const masked = source.masked;
  const ctx = makeContext(source, options);
  const { directives } = ctx.layout;
  const out: SmemOptIn[] = [];
  const re = /\bcudaFuncSetAttribute\s*(<[^;()]*>)?\s*\(/g;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const open = m.index + m[0].length - 1;
    const close = matchingClose(masked, open);
    if (close < 0 || isDeclaration(masked, m.index)) continue;
    const args = splitTopLevel(masked, open + 1, close).map(([a, b]) => source.text.slice(a, b).trim());
    if (!/\bcudaFuncAttributeMaxDynamicSharedMemorySize\b/.test(args[1] ?? '')) continue;
    const callee = kernelFromFunctionArgument(args[0] ?? '', m.index);
    if (!callee) continue;
    const body = inRanges(directives, m.index) ? null : enclosingFunctionBody(ctx, m.index);
    const { tables, lookup } = constantScope(ctx, body, m.index);
    const value = inRanges(directives, m.index) ? null : evaluateInteger(args[2] ?? '', lookup);
    out.push({
      kernelName: callee.name,
      baseName: lastComponent(callee.name),
      bytes: {
        text: args[2] ?? '',
        value,
        note:
          value === null
            ? (explainNames(args[2] ?? '', tables, lookup, ctx.describe) ?? 'not a compile-time constant here')
            : null,
      },
      span: spanOf(source, m.index, close + 1),
    });
  }
  return out;
}
