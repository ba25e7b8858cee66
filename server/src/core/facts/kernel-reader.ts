/**
 * The kernels of a file, as its unit declares them: every `__global__` function of the outline
 * (the specifier written or reached through a macro), with its attributes read from the tokens of
 * its header after macro expansion (`__launch_bounds__` with up to three arguments, `__maxnreg__`,
 * `__cluster_dims__`), their values computed in the kernel's scope, and its static `__shared__`
 * arrays sized from their element type and extents.
 */
import type { Dim3, Kernel, LaunchBounds, SharedDeclaration, Span, TemplateParam } from '../types';
import { forEachExpr, type Expr, type Range } from '../ir/expr';
import { copyEnv, Evaluator, type Env } from '../values/evaluate';
import { spanOf, type SourceText } from '../text/source-text';
import { tokenize, spell } from '../preprocess/tokens';
import { expandTokens, ExpansionLimit, toExpand, type XToken } from '../preprocess/macro-expansion';
import { sizeofType } from '../text/const-eval';
import { single, top, type Val } from '../values/domain';
import { type FunctionScope, type ProgramFunction, type TemplateBinding, type UnitProgram } from '../program/program';
import type { OutlineFunction } from '../program/outline';

export interface KernelReadInput {
  program: UnitProgram;
  path: string;
  /** The file's text as written (spans, comments). */
  source: SourceText;
  /** The unit's view of the file (attributes intact). */
  view: string;
}

const ATTRIBUTE_NAMES: ReadonlySet<string> = new Set(['__launch_bounds__', '__maxnreg__', '__cluster_dims__']);

export function readKernels(input: KernelReadInput): Kernel[] {
  return readKernelsOf(input).map((k) => k.kernel);
}

/** The kernels with the outline functions they are read from. */
export function readKernelsOf(input: KernelReadInput): Array<{ fn: OutlineFunction; kernel: Kernel }> {
  const read = kernelReader(input);
  return input.program
    .outline(input.path)
    .functions.filter((fn) => fn.global)
    .map((fn) => ({ fn, kernel: read(fn) }));
}

/** Reads the kernel of one `__global__` function of the file's outline (the file's blocks found when first needed). */
export function kernelReader({ program, path, source, view }: KernelReadInput): (fn: OutlineFunction) => Kernel {
  let externC: Array<[number, number]> | undefined;
  return (fn) => {
    const pf: ProgramFunction = { file: path, fn };
    const scope = kernelScope(pf);
    // The grammar reads no attribute written before the first specifier (`__launch_bounds__(64)
    // __global__ void k`): the parse view blanks it just before the header, which it still belongs to.
    const start = specifiersStart(program.file(path)?.view ?? view, fn.headerAt[0]);
    // A kernel's attributes stand before its name; one inside the parameter list is not the kernel's.
    const attributes = readAttributes(program, path, view, [start, fn.nameAt[0]]);
    // Arguments as written, their macros expanded where the kernel is (a bound a macro supplies is spelled out already).
    const evaluate = (text: string, at: Range): number | null => {
      const v = program.evaluateSpelled(path, text, at, scope, fn.headerAt[0]);
      return v ? single(v) : null;
    };
    const bounds = attributes.get('__launch_bounds__');
    const launchBounds: LaunchBounds | null = bounds
      ? {
          text: bounds.text,
          args: bounds.args.map((a) => a.text),
          maxThreadsPerBlock: bounds.args[0] ? evaluate(bounds.args[0].text, bounds.at) : null,
          minBlocksPerMultiprocessor: bounds.args[1] ? evaluate(bounds.args[1].text, bounds.at) : null,
          maxBlocksPerCluster: bounds.args[2] ? evaluate(bounds.args[2].text, bounds.at) : null,
          span: spanOf(source, bounds.at[0], bounds.at[1]),
        }
      : null;
    const maxnregAttr = attributes.get('__maxnreg__');
    const clusterAttr = attributes.get('__cluster_dims__');
    const cluster = clusterAttr?.args.map((a) => evaluate(a.text, clusterAttr.at)) ?? null;
    const shared = fn.bodyAt ? sharedDeclarations(program, pf, scope, source) : [];
    const staticShared = shared.filter((d) => !d.isExtern);
    return {
      name: fn.name,
      qualifiedName: fn.qualified,
      namespaces: fn.scope.filter((s) => s !== fn.className),
      templateParams: fn.templateParams,
      parameters: fn.params.map((p) => p.text),
      launchBounds,
      maxnreg: maxnregAttr?.args[0] ? evaluate(maxnregAttr.args[0].text, maxnregAttr.at) : null,
      clusterDims:
        cluster && cluster.length >= 1 && cluster.length <= 3 && cluster.every((v) => v !== null)
          ? ({ x: cluster[0], y: cluster[1] ?? 1, z: cluster[2] ?? 1 } as Dim3)
          : null,
      externC:
        /\bextern\s*"C"/.test(view.slice(fn.headerAt[0], fn.headerAt[1])) ||
        /\bextern\s*"C"\s*$/.test(view.slice(Math.max(0, start - 40), start)) ||
        within((externC ??= externCBlocks(program.file(path)?.view ?? '')), fn.at[0]),
      isDefinition: fn.bodyAt !== null,
      span: spanOf(source, fn.at[0], fn.at[1]),
      nameSpan: spanOf(source, fn.nameAt[0], fn.nameAt[1]),
      headerSpan: spanOf(source, fn.headerAt[0], fn.headerAt[1]),
      bodySpan: fn.bodyAt ? spanOf(source, fn.bodyAt[0], fn.bodyAt[1]) : null,
      sharedDeclarations: shared,
      staticSharedBytes: staticShared.every((d) => d.bytes !== null)
        ? staticShared.reduce((sum, d) => sum + (d.bytes ?? 0), 0)
        : null,
      leadingComment: leadingComment(source, fn.at[0]),
      headerMacros: headerMacros(program, path, view, [start, fn.nameAt[0]], fn.headerAt[0]),
    };
  };
}

/** The macros the header's names may be where the kernel is declared (see Kernel.headerMacros). */
function headerMacros(
  program: UnitProgram,
  path: string,
  view: string,
  header: Range,
  at: number,
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  const scope = program.unit.macrosAt(path, at);
  for (const t of tokenize(view, header[0], header[1])) {
    if (t.kind !== 'ident' || t.text in out) continue;
    const state = scope.state(t.text);
    const defs = state.options.filter((o) => o !== null);
    if (defs.length === 0 && !state.open) continue;
    const [only] = defs;
    out[t.text] = defs.length === 1 && state.options.length === 1 && !state.open && only.body ? spell(only.body) : null;
  }
  return out;
}

/** Where the blanks the parse view has just before `at` begin (what it left out of the declaration there). */
function specifiersStart(parsed: string, at: number): number {
  let k = at;
  while (k > 0 && /\s/.test(parsed[k - 1])) k--;
  return k;
}

/** The scope a kernel's attributes and sizes are read in: its template parameters unknown. */
export function kernelScope(pf: ProgramFunction, args?: ReadonlyArray<TemplateBinding | undefined>): FunctionScope {
  const bindings = new Map<string, TemplateBinding>();
  (pf.fn.templateParams ?? []).forEach((p: TemplateParam, k) => {
    const given = args?.[k];
    bindings.set(
      p.name,
      given ?? (p.kind === 'type' ? { k: 'type-arg', type: p.name } : top(`\`${p.name}\` is a template parameter`)),
    );
  });
  return { file: pf.file, scope: pf.fn.scope, bindings };
}

interface Attribute {
  text: string;
  args: Array<{ text: string }>;
  at: Range;
}

/** The CUDA attributes in a kernel's header, read from its tokens after macro expansion. */
function readAttributes(program: UnitProgram, path: string, view: string, header: Range): Map<string, Attribute> {
  const out = new Map<string, Attribute>();
  const written = toExpand(tokenize(view, header[0], header[1]));
  // As written first (their text and arguments are the source's); then those a macro in the header supplies.
  findAttributes(written, out, (within) => view.slice(within[0].start, within[within.length - 1].end));
  let expanded: XToken[];
  try {
    expanded = expandTokens(written, (name) => {
      const s = program.unit.macrosAt(path, header[0]).state(name);
      const defs = s.options.filter((o) => o !== null);
      return defs.length === 1 && s.options.length === 1 ? defs[0] : null;
    });
  } catch (e) {
    if (e instanceof ExpansionLimit) return out;
    throw e;
  }
  const supplied = new Map<string, Attribute>();
  findAttributes(expanded, supplied, (within) => spell(within));
  for (const [name, a] of supplied) if (!out.has(name)) out.set(name, a);
  return out;
}

function findAttributes(
  tokens: readonly XToken[],
  out: Map<string, Attribute>,
  textOf: (within: XToken[]) => string,
): void {
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (!ATTRIBUTE_NAMES.has(t.text) || tokens[k + 1]?.text !== '(') continue;
    let depth = 0;
    let j = k + 1;
    const args: XToken[][] = [[]];
    for (; j < tokens.length; j++) {
      const x = tokens[j].text;
      if (x === '(' && depth++ === 0) continue;
      if (x === ')' && --depth === 0) break;
      if (x === ',' && depth === 1) {
        args.push([]);
        continue;
      }
      args[args.length - 1].push(tokens[j]);
    }
    if (j >= tokens.length) continue;
    const within = tokens.slice(k, j + 1);
    const at: Range = [Math.min(...within.map((x) => x.start)), Math.max(...within.map((x) => x.end))];
    out.set(t.text, {
      text: textOf(within).replace(/\s+/g, ' ').trim(),
      args: args.filter((a) => a.length > 0).map((a) => ({ text: spell(a) })),
      at,
    });
    k = j;
  }
}

/** The `__shared__` arrays a kernel declares, sized where the element type and extents are known here. */
function sharedDeclarations(
  program: UnitProgram,
  pf: ProgramFunction,
  scope: FunctionScope,
  source: SourceText,
): SharedDeclaration[] {
  const ir = program.functionIR(pf);
  if (!ir) return [];
  // An extent may name a constant local (`const int n = 32; __shared__ float s[n];`): read where declared.
  const envAt = new Map<number, Env>();
  if (ir.locals.some((l) => l.shared && l.dims?.some((d) => mentionsLocal(d))))
    program.analyzeCall(pf, { args: [], bindings: scope.bindings, self: null }, 0, () => ({
      decl: (local, env) => void envAt.set(local, copyEnv(env)),
    }));
  const out: SharedDeclaration[] = [];
  for (const local of ir.locals) {
    if (!local.shared) continue;
    const written = source.text.slice(local.declAt[0], local.declAt[1]);
    const align = /__align__\s*\(\s*(\d+)\s*\)|alignas\s*\(\s*(\d+)\s*\)/.exec(written);
    let bytes: number | null = /\*/.test(local.type)
      ? 8
      : (sizeofType(local.type.replace(/\b(volatile|static)\b/g, '').trim()) ?? bindingSize(local.type, scope));
    if (local.isExtern) bytes = 0;
    else
      for (const d of local.dims ?? []) {
        if (bytes === null) break;
        const env = envAt.get(local.id);
        const n =
          d.k === 'unknown' && d.text === ''
            ? null
            : env
              ? new Evaluator(ir, program.resolver(scope, 2)).eval(d, copyEnv(env))
              : program.evaluateIn(d, scope);
        const v = n ? single(n) : null;
        bytes = v === null || v < 0 ? null : bytes * v;
      }
    const alignment = align ? Number(align[1] ?? align[2]) : 0;
    if (bytes !== null && alignment > 0) bytes = Math.ceil(bytes / alignment) * alignment;
    out.push({
      name: local.name,
      bytes,
      isExtern: local.isExtern,
      text: written.replace(/\s+/g, ' ').trim(),
      span: spanOf(source, local.declAt[0], local.declAt[1]) as Span,
    });
  }
  return out;
}

function mentionsLocal(e: Expr): boolean {
  let found = false;
  forEachExpr(e, (x) => {
    if (x.k === 'name' && x.local !== null) found = true;
  });
  return found;
}

function bindingSize(type: string, scope: FunctionScope): number | null {
  const b = scope.bindings.get(type.replace(/\bconst\b/g, '').trim());
  return b && b.k === 'type-arg' ? sizeofType(b.type) : null;
}

/**
 * Where the file's `extern "C" {` blocks are, as [open, close] offsets of the view (close: the
 * view's end when unclosed), read in one forward pass: the outline's scopes do not name them. A `}`
 * with nothing open closes nothing.
 */
function externCBlocks(view: string): Array<[number, number]> {
  const blocks: Array<[number, number]> = [];
  const open: Array<{ at: number; externC: boolean }> = [];
  const BRACE = /[{}]/g;
  for (let m = BRACE.exec(view); m; m = BRACE.exec(view)) {
    const k = m.index;
    if (m[0] === '{') open.push({ at: k, externC: /extern\s*"C"\s*$/.test(view.slice(Math.max(0, k - 40), k)) });
    else {
      const b = open.pop();
      if (b?.externC) blocks.push([b.at, k]);
    }
  }
  for (const o of open) if (o.externC) blocks.push([o.at, view.length]);
  return blocks;
}

/** Whether `at` lies inside one of the blocks. */
function within(blocks: ReadonlyArray<[number, number]>, at: number): boolean {
  return blocks.some(([open, close]) => open < at && at <= close);
}

/** The comment lines right above a declaration (annotations such as `// occupancy: regs=64`). */
function leadingComment(source: SourceText, start: number): string | null {
  const { text, lineStarts } = source;
  let line = 0;
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (lineStarts[mid] <= start) {
      line = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const lines: string[] = [];
  while (line > 0) {
    line--;
    const raw = text.slice(lineStarts[line], line + 1 < lineStarts.length ? lineStarts[line + 1] : text.length).trim();
    if (raw.startsWith('//') || raw.startsWith('/*') || raw.startsWith('*') || raw.endsWith('*/')) lines.unshift(raw);
    else if (raw.startsWith('template') || raw.startsWith('#pragma')) continue;
    else break;
  }
  return lines.length ? lines.join('\n') : null;
}

export type { Val };
