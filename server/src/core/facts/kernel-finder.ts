/**
 * Every `__global__` function in a file: name, namespaces, template
 * parameters, attributes (`__launch_bounds__`, `__maxnreg__`,
 * `__cluster_dims__`) and static shared memory.
 *
 * The header is read from the masked text rather than the syntax tree:
 * tree-sitter-cuda breaks on 3-argument `__launch_bounds__`, `__maxnreg__`,
 * `__cluster_dims__` and `__align__`, and a kernel must be found whole even
 * then.
 */
import type { Dim3, Kernel, LaunchBounds, SharedDeclaration, TemplateParam } from '../types';
import {
  isIdentCharAt,
  isSpaceAt,
  matchingClose,
  spanOf,
  splitTopLevel,
  trimRange,
  type SourceText,
} from '../text/source-text';
import { findScopes, scopesAt } from '../text/scopes';
import { findDirectiveRanges, inRanges } from '../text/preprocessor-lines';
import { evaluateInteger, sizeofType, type Lookup } from '../text/const-eval';

/** Attributes written as `name(args)` that may stand among a kernel's specifiers. */
const ATTRIBUTES_WITH_ARGS: ReadonlySet<string> = new Set([
  '__launch_bounds__',
  '__maxnreg__',
  '__cluster_dims__',
  '__align__',
  '__attribute__',
  '__declspec',
  'alignas',
  '__nv_register_params__',
]);

export interface KernelFinderOptions {
  /** Resolves identifiers in attribute and array-size expressions (macros, constants). */
  lookup?: Lookup;
}

export function findKernels(source: SourceText, options: KernelFinderOptions = {}): Kernel[] {
  const lookup = options.lookup ?? (() => null);
  const masked = source.masked;
  const directives = findDirectiveRanges(source);
  const scopes = findScopes(source);
  const kernels: Kernel[] = [];
  const re = /\b__global__\b/g;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    if (inRanges(directives, m.index)) continue; // `#define KERNEL __global__`
    const read = readKernel(source, m.index, { lookup, scopes, directives });
    if (read) {
      kernels.push(read.kernel);
      re.lastIndex = Math.max(re.lastIndex, read.end);
    }
  }
  return kernels;
}

interface ReadContext {
  lookup: Lookup;
  scopes: ReturnType<typeof findScopes>;
  directives: ReadonlyArray<[number, number]>;
}

/** The kernel whose `__global__` is at `globalAt`, and the offset its declaration or definition ends at. */
function readKernel(source: SourceText, globalAt: number, ctx: ReadContext): { kernel: Kernel; end: number } | null {
  const masked = source.masked;
  const headerStart = findHeaderStart(source, globalAt, ctx.directives);
  const head = readDeclarator(masked, globalAt + '__global__'.length);
  if (!head) return null;
  const { nameStart, nameEnd, scopePrefix, paramsOpen } = head;
  const paramsClose = matchingClose(masked, paramsOpen);
  if (paramsClose < 0) return null;

  // Definition or declaration: the first `{` or `;` after the parameters (skipping trailers like `const`, `noexcept`).
  let i = paramsClose + 1;
  while (i < masked.length && masked[i] !== '{' && masked[i] !== ';' && masked[i] !== '}') i++;
  const isDefinition = masked[i] === '{';
  const bodyClose = isDefinition ? matchingClose(masked, i) : -1;
  const end = isDefinition ? (bodyClose < 0 ? masked.length : bodyClose + 1) : Math.min(masked.length, i + 1);

  const name = masked.slice(nameStart, nameEnd);
  const enclosing = scopesAt(ctx.scopes, globalAt);
  const namespaces = enclosing.filter((s) => s.kind === 'namespace').map((s) => s.name);
  const qualified = [...namespaces, ...(scopePrefix ? [scopePrefix] : []), name].join('::');
  const externC =
    enclosing.some((s) => s.kind === 'externC') || /\bextern\s*"C"/.test(source.text.slice(headerStart, paramsOpen));

  const templateParams = readTemplateParams(source, headerStart, globalAt);
  const templateNames = new Set((templateParams ?? []).map((p) => p.name));
  const lookup: Lookup = (id) => (templateNames.has(id) ? null : ctx.lookup(id));

  const attributes = readAttributes(source, headerStart, paramsOpen);
  const launchBounds = attributes.launchBounds ? makeLaunchBounds(source, attributes.launchBounds, lookup) : null;
  const maxnreg = attributes.maxnreg ? evaluateInteger(attributes.maxnreg.args[0] ?? '', lookup) : null;
  const clusterDims = attributes.clusterDims ? makeDim3(attributes.clusterDims.args, lookup) : null;

  const shared = isDefinition && bodyClose > 0 ? findSharedDeclarations(source, i + 1, bodyClose, lookup) : [];
  const staticShared = shared.filter((d) => !d.isExtern);
  const staticSharedBytes = staticShared.every((d) => d.bytes !== null)
    ? staticShared.reduce((sum, d) => sum + (d.bytes ?? 0), 0)
    : null;

  const kernel: Kernel = {
    name,
    qualifiedName: qualified,
    namespaces,
    templateParams,
    parameters: readParameters(source, paramsOpen, paramsClose),
    launchBounds,
    maxnreg,
    clusterDims,
    externC,
    isDefinition,
    span: spanOf(source, headerStart, end),
    nameSpan: spanOf(source, nameStart, nameEnd),
    headerSpan: spanOf(source, headerStart, paramsClose + 1),
    bodySpan: isDefinition ? spanOf(source, i, end) : null,
    sharedDeclarations: shared,
    staticSharedBytes,
    leadingComment: readLeadingComment(source, headerStart),
  };
  return { kernel, end };
}

/** Parameter texts; lines of `#if`/`#else`/`#endif` splitting the list are dropped (both branches' parameters stay). */
function readParameters(source: SourceText, open: number, close: number): string[] {
  const parameters: string[] = [];
  for (const [a, b] of splitTopLevel(source.masked, open + 1, close)) {
    const text = source.text.slice(a, b);
    // Most parameters sit on one line with single spaces: already what the general case gives.
    const p = isPlainParameter(text)
      ? text
      : text
          .split('\n')
          .filter((line) => !/^\s*#/.test(line))
          .join(' ')
          .replace(/\s+/g, ' ')
          .trim();
    if (p.length > 0) parameters.push(p);
  }
  return parameters;
}

/** No line break, no blank but single spaces between words, none at either end, no leading `#`. */
function isPlainParameter(text: string): boolean {
  if (text.charCodeAt(0) === 35 /* # */) return false;
  for (let i = 0; i < text.length; i++) {
    if (
      isSpaceAt(text, i) &&
      (text.charCodeAt(i) !== 32 || i === 0 || i === text.length - 1 || text.charCodeAt(i + 1) === 32)
    )
      return false;
  }
  return true;
}

/** Where the declaration that holds `__global__` begins: after the previous `;`, `{`, `}` or directive line. */
function findHeaderStart(source: SourceText, globalAt: number, directives: ReadonlyArray<[number, number]>): number {
  const masked = source.masked;
  let depth = 0;
  let i = globalAt - 1;
  for (; i >= 0; i--) {
    const c = masked[i];
    if (c === ')') depth++;
    else if (c === '(') depth--;
    else if (depth === 0 && (c === ';' || c === '{' || c === '}')) break;
    if (c === '\n' && inRanges(directives, i - 1) && !inRanges(directives, i + 1)) break;
    if (c === '\n' && i > 0 && inRanges(directives, i - 1)) break;
  }
  let start = i + 1;
  while (start < globalAt && isSpaceAt(masked, start)) start++;
  return start;
}

interface Declarator {
  nameStart: number;
  nameEnd: number;
  /** `ns` in `__global__ void ns::k(...)`. */
  scopePrefix: string;
  paramsOpen: number;
}

/** Read forward from after `__global__` to the parameter list, skipping types, qualifiers and attributes. */
function readDeclarator(masked: string, from: number): Declarator | null {
  let i = from;
  let lastName: { start: number; end: number; scope: string } | null = null;
  let pendingScope = '';
  const limit = Math.min(masked.length, from + 4000);
  while (i < limit) {
    const c = masked[i];
    if (isSpaceAt(masked, i) || c === '*' || c === '&') {
      i++;
      continue;
    }
    if (c === '[' && masked[i + 1] === '[') {
      const close = masked.indexOf(']]', i + 2);
      if (close < 0) return null;
      i = close + 2;
      continue;
    }
    if (isIdentCharAt(masked, i)) {
      let j = i;
      while (j < limit && isIdentCharAt(masked, j)) j++;
      let k = j;
      while (k < limit && isSpaceAt(masked, k)) k++;
      if (masked[k] === '(' && ATTRIBUTES_WITH_ARGS.has(masked.slice(i, j))) {
        const close = matchingClose(masked, k);
        if (close < 0) return null;
        i = close + 1;
        continue;
      }
      if (masked.startsWith('::', k)) {
        const word = masked.slice(i, j);
        pendingScope = pendingScope ? `${pendingScope}::${word}` : word;
        i = k + 2;
        continue;
      }
      lastName = { start: i, end: j, scope: pendingScope };
      pendingScope = '';
      i = j;
      continue;
    }
    if (c === ':' && masked[i + 1] === ':') {
      i += 2; // leading `::name`
      continue;
    }
    if (c === '<' && lastName) {
      const close = matchingAngle(masked, i, limit);
      if (close < 0) return null;
      i = close + 1;
      continue;
    }
    if (c === '(' && lastName) {
      return { nameStart: lastName.start, nameEnd: lastName.end, scopePrefix: lastName.scope, paramsOpen: i };
    }
    return null; // `;`, `{`, `=`, `,`: not a function declarator
  }
  return null;
}

function matchingAngle(masked: string, open: number, limit: number): number {
  let depth = 0;
  for (let i = open; i < limit; i++) {
    const c = masked[i];
    if (c === '<') depth++;
    else if (c === '>') {
      depth--;
      if (depth === 0) return i;
    } else if (c === ';' || c === '{' || c === '}') return -1;
  }
  return -1;
}

function readTemplateParams(source: SourceText, headerStart: number, globalAt: number): TemplateParam[] | null {
  const masked = source.masked;
  const re = /\btemplate\s*</g;
  re.lastIndex = headerStart;
  // Searched in the header only (a `template <` starting there ends before `__global__`), not to the end of the text.
  const m = re.exec(masked.slice(0, globalAt));
  if (!m) return null;
  const open = m.index + m[0].length - 1;
  const close = matchingAngle(masked, open, globalAt);
  if (close < 0) return null;
  const params: TemplateParam[] = [];
  for (const [a, b] of splitTopLevel(masked, open + 1, close)) {
    if (b <= a) continue;
    const text = source.text.slice(a, b);
    const [decl, ...rest] = text.split('=');
    const defaultText = rest.length ? rest.join('=').trim() : null;
    const words = decl.trim().match(/[A-Za-z_]\w*/g) ?? [];
    const name = words[words.length - 1] ?? '';
    const kind = /^\s*(typename|class)\b/.test(decl) || /^\s*template\b/.test(decl) ? 'type' : 'value';
    params.push({ name: words.length > 1 || kind === 'value' ? name : '', kind, defaultText });
  }
  return params;
}

interface AttributeText {
  name: string;
  args: string[];
  text: string;
  start: number;
  end: number;
}

function readAttributes(
  source: SourceText,
  from: number,
  to: number,
): { launchBounds?: AttributeText; maxnreg?: AttributeText; clusterDims?: AttributeText } {
  const masked = source.masked;
  const found: Record<string, AttributeText> = {};
  const re = /\b(__launch_bounds__|__maxnreg__|__cluster_dims__)\s*\(/g;
  re.lastIndex = from;
  // An attribute starting before `to` (the parameters' `(`) ends at `to + 1` at the latest: search no further.
  const header = masked.slice(0, to + 1);
  for (let m = re.exec(header); m && m.index < to; m = re.exec(header)) {
    const open = m.index + m[0].length - 1;
    const close = matchingClose(masked, open, to + 1);
    if (close < 0) continue;
    found[m[1]] = {
      name: m[1],
      args: splitTopLevel(masked, open + 1, close)
        .filter(([a, b]) => b > a)
        .map(([a, b]) => source.text.slice(a, b).trim()),
      text: source.text.slice(m.index, close + 1),
      start: m.index,
      end: close + 1,
    };
  }
  return { launchBounds: found.__launch_bounds__, maxnreg: found.__maxnreg__, clusterDims: found.__cluster_dims__ };
}

function makeLaunchBounds(source: SourceText, attr: AttributeText, lookup: Lookup): LaunchBounds {
  const value = (k: number) => (attr.args[k] === undefined ? null : evaluateInteger(attr.args[k], lookup));
  return {
    text: attr.text,
    args: attr.args,
    maxThreadsPerBlock: value(0),
    minBlocksPerMultiprocessor: value(1),
    maxBlocksPerCluster: value(2),
    span: spanOf(source, attr.start, attr.end),
  };
}

function makeDim3(args: string[], lookup: Lookup): Dim3 | null {
  const values = args.map((a) => evaluateInteger(a, lookup));
  if (values.length === 0 || values.length > 3 || values.some((v) => v === null)) return null;
  const [x, y = 1, z = 1] = values as number[];
  return { x, y, z };
}

/** `__shared__` declarations in a body; sizes where the element type and extents are known. */
function findSharedDeclarations(source: SourceText, from: number, to: number, lookup: Lookup): SharedDeclaration[] {
  const masked = source.masked;
  const result: SharedDeclaration[] = [];
  const re = /\b__shared__\b/g;
  re.lastIndex = from;
  const body = masked.slice(0, to); // not past the body's `}`
  for (let m = re.exec(body); m; m = re.exec(body)) {
    let start = m.index;
    while (start > from && !';{}'.includes(masked[start - 1])) start--;
    const end = masked.indexOf(';', m.index);
    if (end < 0 || end > to) continue;
    const [a, b] = trimRange(masked, start, end);
    const text = masked.slice(a, b);
    result.push(...readSharedDeclaration(source, text, a, b, lookup));
    re.lastIndex = end;
  }
  return result;
}

function readSharedDeclaration(
  source: SourceText,
  text: string,
  start: number,
  end: number,
  lookup: Lookup,
): SharedDeclaration[] {
  // The patterns run only where their words are: most declarations are `__shared__ T name[N]`.
  const isExtern = text.includes('extern') && /\bextern\b/.test(text);
  const mayAlign = text.includes('align');
  const alignMatch = mayAlign ? /__align__\s*\(\s*(\d+)\s*\)|alignas\s*\(\s*(\d+)\s*\)/.exec(text) : null;
  const unattributed =
    mayAlign || text.includes('__attribute__')
      ? text.replace(/__align__\s*\([^)]*\)|alignas\s*\([^)]*\)|__attribute__\s*\(\([^)]*\)\)/g, ' ')
      : text;
  const cleaned = withoutSpecifiers(unattributed);
  // type then declarators: `float a[32][33], b[4]` or `T tile[BS]`
  const firstDeclarator =
    /^((?:const\s+)?(?:unsigned\s+|signed\s+)?(?:long\s+long|[A-Za-z_][\w:]*(?:\s*<[^;]*>)?)(?:\s*\*)?)\s+(.*)$/s.exec(
      cleaned,
    );
  if (!firstDeclarator)
    return [{ name: '', bytes: null, isExtern, text: source.text.slice(start, end), span: spanOf(source, start, end) }];
  const type = firstDeclarator[1].trim();
  const elementSize = sizeofType(type);
  const out: SharedDeclaration[] = [];
  // The same for every declarator of the declaration.
  const written = source.text.slice(start, end).replace(/\s+/g, ' ');
  const span = spanOf(source, start, end);
  for (const declarator of firstDeclarator[2].split(/,(?![^[]*\])/)) {
    const d = /^\s*(\*?)\s*([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)/.exec(declarator);
    if (!d) continue;
    const extents: string[] = [];
    const extent = /\[([^\]]*)\]/g;
    for (let x = extent.exec(d[3]); x; x = extent.exec(d[3])) extents.push(x[1].trim());
    let bytes: number | null = d[1] ? 8 : elementSize;
    for (const extent of extents) {
      if (bytes === null) break;
      if (extent === '') {
        bytes = isExtern ? 0 : null;
        break;
      }
      const n = evaluateInteger(extent, lookup);
      bytes = n === null || n < 0 ? null : bytes * n;
    }
    if (isExtern) bytes = 0;
    const align = alignMatch ? Number(alignMatch[1] ?? alignMatch[2]) : 0;
    if (bytes !== null && align > 0) bytes = Math.ceil(bytes / align) * align;
    out.push({ name: d[2], bytes, isExtern, text: written, span });
  }
  return out;
}

/**
 * The declaration without its storage words (`extern`, `static`, `volatile`, `__shared__`,
 * `__device__`), trimmed. Most are `__shared__ T name[N]`: then only that first word goes.
 */
function withoutSpecifiers(text: string): string {
  const rest = text.startsWith('__shared__') && !isIdentCharAt(text, 10) ? text.slice(10) : null;
  if (rest !== null && !/extern|static|volatile|__shared__|__device__/.test(rest)) return rest.trim();
  return text.replace(/\b(extern|static|volatile|__shared__|__device__)\b/g, ' ').trim();
}

/** The comment lines right above the declaration (annotations such as `// occupancy: regs=64`). */
function readLeadingComment(source: SourceText, headerStart: number): string | null {
  const { text, lineStarts } = source;
  let line = lineIndexAt(lineStarts, headerStart);
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

function lineIndexAt(lineStarts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface LaunchBoundsContext {
  /** Template arguments at the launch (`['float', '256']` for `k<float, 256><<<...>>>`), or null. */
  templateArgs?: readonly string[] | null;
  /** Resolves names in the template arguments, where the launch is written. */
  argLookup?: Lookup;
  /** Resolves names in the attribute, where the kernel is written (its file and includes). */
  kernelLookup?: Lookup;
}

/**
 * A kernel's `__launch_bounds__` for one launch: template parameters bound to
 * the launch's template arguments (or their defaults), other names resolved
 * where the kernel lives. A value stays null when anything it needs is unknown.
 */
export function resolveLaunchBounds(kernel: Kernel, context: LaunchBoundsContext = {}): LaunchBounds | null {
  const bounds = kernel.launchBounds;
  if (!bounds) return null;
  const argLookup = context.argLookup ?? (() => null);
  const kernelLookup = context.kernelLookup ?? (() => null);
  if (!kernel.templateParams?.length) {
    // Not a template (most kernels): nothing to bind, every name is the kernel's.
    const plain = (k: number): number | null =>
      bounds.args[k] === undefined ? null : evaluateInteger(bounds.args[k], kernelLookup);
    return {
      ...bounds,
      maxThreadsPerBlock: plain(0),
      minBlocksPerMultiprocessor: plain(1),
      maxBlocksPerCluster: plain(2),
    };
  }
  const substitutions = bindTemplateArguments(
    kernel.templateParams ?? [],
    context.templateArgs ?? null,
    argLookup,
    kernelLookup,
  );
  const templateNames = new Set((kernel.templateParams ?? []).map((p) => p.name).filter((n) => n));
  const lookup: Lookup = (id) => (templateNames.has(id) ? null : kernelLookup(id));
  const value = (k: number): number | null => {
    const arg = bounds.args[k];
    if (arg === undefined) return null;
    return evaluateInteger(substitute(arg, substitutions), lookup);
  };
  return {
    ...bounds,
    maxThreadsPerBlock: value(0),
    minBlocksPerMultiprocessor: value(1),
    maxBlocksPerCluster: value(2),
  };
}

/** Template parameter name -> the text that replaces it: `(256)` for a value, `float` for a type. */
function bindTemplateArguments(
  params: readonly TemplateParam[],
  args: readonly string[] | null,
  argLookup: Lookup,
  kernelLookup: Lookup,
): Map<string, string> {
  const bound = new Map<string, string>();
  if (args && args.length > params.length) return bound;
  params.forEach((param, k) => {
    if (!param.name) return;
    const explicit = args?.[k];
    const text = explicit ?? param.defaultText;
    if (text === null || text === undefined) return;
    if (param.kind === 'type') {
      bound.set(param.name, substitute(text, bound));
      return;
    }
    const lookup: Lookup = explicit !== undefined ? argLookup : kernelLookup;
    const v = evaluateInteger(explicit !== undefined ? text : substitute(text, bound), lookup);
    if (v !== null) bound.set(param.name, `(${v})`);
  });
  return bound;
}

function substitute(text: string, bindings: ReadonlyMap<string, string>): string {
  if (bindings.size === 0) return text;
  return text.replace(/(?<![\w:.])[A-Za-z_]\w*/g, (id) => bindings.get(id) ?? id);
}
