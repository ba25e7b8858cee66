/**
 * The text the grammar parses: the unit's view of a file (view.ts) with what tree-sitter-cuda
 * cannot read blanked, same length and lines, so that one gap in the grammar costs nothing around
 * it. What is blanked is read elsewhere, from the view itself:
 *
 * - CUDA attributes the grammar reads wrongly or not at all (`__launch_bounds__` with three
 *   arguments, `__maxnreg__`, `__cluster_dims__`, `__align__`, `__nv_register_params__`,
 *   `__attribute__((...))`): the kernel reader reads them from the tokens;
 * - an execution space on a lambda (`[=] __device__ (int i) {...}`, an extended lambda);
 * - `_Pragma("unroll")`, and a `#pragma unroll` line where a statement without braces is expected
 *   (`else` or a loop's header, then the pragma, then the loop): the grammar reads a directive as
 *   a statement of its own, so the loop would leave the branch or loop it belongs to;
 * - a macro use that expands to declaration specifiers and attributes only, to pragma operators, or
 *   to nothing (`#define HOST_DEVICE __host__ __device__`, `#define CUDART_CB`, `#define UNROLL
 *   _Pragma("unroll")`): the grammar would read its name as a type, or as an expression that takes
 *   the loop after it apart. The outline reads the specifiers through the macro. One the view (the build
 *   with no further flags) defines as nothing is blanked whatever other builds define it as.
 */
import type { MacroScope } from './unit';
import { blank } from './view';
import { isIdentPart, isIdentStart, writesAny } from './tokens';
import type { MacroDef } from './macro-expansion';

/** Attributes read from the tokens, not the tree. */
const ATTRIBUTES = /\b(__launch_bounds__|__maxnreg__|__cluster_dims__|__align__|__attribute__|__declspec)\s*\(/g;
const LAMBDA_SPACE = /\]\s*((?:(?:__device__|__host__)\s*)+)(?=[(\s{]|mutable\b)/g;
const PRAGMA_OPERATOR = /\b_Pragma\s*\(/g;
const UNROLL_LINE = /^[ \t]*#[ \t]*pragma[ \t]+(?:nv_)?(?:no)?unroll\b[^\n]*/gm;

/** Tokens a specifier-only macro may expand to. */
const SPECIFIERS: ReadonlySet<string> = new Set([
  '__host__',
  '__device__',
  '__global__',
  '__forceinline__',
  '__noinline__',
  '__inline__',
  'inline',
  'static',
  'constexpr',
  'extern',
  '__launch_bounds__',
  '__maxnreg__',
  '__cluster_dims__',
  '__align__',
  '__attribute__',
  '__declspec',
  '__nv_register_params__',
  '__stdcall',
  '__cdecl',
  // A pragma operator is a directive, as the `_Pragma(...)` the view blanks where it is written.
  '_Pragma',
]);

/**
 * The parse view of `view`; `macroNames` are the names the unit defines anywhere (a quick filter),
 * `scopeAt` its macros at an offset. `specifierNames`, where given, are the names some definition
 * of which may be specifier-only (`unit.macrosWhere(mayBeSpecifierOnly)`): a view that writes none of them
 * is not scanned for their uses.
 */
export function parseView(
  view: string,
  scopeAt: (offset: number) => MacroScope,
  macroNames: Pick<ReadonlySet<string>, 'has'>,
  specifierNames?: ReadonlySet<string>,
): string {
  const spans: Array<[number, number]> = [];
  for (const re of [ATTRIBUTES, PRAGMA_OPERATOR]) {
    re.lastIndex = 0;
    for (let m = re.exec(view); m; m = re.exec(view)) {
      const open = m.index + m[0].length - 1;
      const close = matchingParen(view, open);
      if (close > 0) spans.push([m.index, close + 1]);
    }
  }
  UNROLL_LINE.lastIndex = 0;
  for (let m = UNROLL_LINE.exec(view); m; m = UNROLL_LINE.exec(view))
    if (bracelessBody(view, m.index)) spans.push([m.index, m.index + m[0].length]);
  LAMBDA_SPACE.lastIndex = 0;
  for (let m = LAMBDA_SPACE.exec(view); m; m = LAMBDA_SPACE.exec(view)) {
    const start = m.index + m[0].indexOf(m[1]);
    spans.push([start, start + m[1].length]);
  }
  if (!specifierNames || writesAny(view, specifierNames))
    spans.push(...specifierMacroUses(view, scopeAt, specifierNames ?? macroNames));
  if (spans.length === 0) return view;
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let cursor = 0;
  for (const [a, b] of spans) {
    if (b <= cursor) continue;
    const from = Math.max(a, cursor);
    out += view.slice(cursor, from) + blank(view.slice(from, b));
    cursor = b;
  }
  return out + view.slice(cursor);
}

/**
 * Whether the code before `at` (a line's start) asks for one statement: it ends with a control
 * header's `)`, `else` or `do` (line comments and other directive lines skipped).
 */
function bracelessBody(view: string, at: number): boolean {
  let end = at;
  for (let lines = 0; end > 0 && lines < 16; lines++) {
    const start = view.lastIndexOf('\n', end - 2) + 1;
    const line = view
      .slice(start, end)
      .replace(/\/\/.*$/, '')
      .trim();
    end = start;
    if (line === '' || line.startsWith('#')) continue;
    return /\)$|(?:^|[^\w])(?:else|do)$/.test(line);
  }
  return false;
}

/** Uses of macros whose every definition here expands to specifiers and attributes only (or to nothing). */
function specifierMacroUses(
  view: string,
  scopeAt: (offset: number) => MacroScope,
  names: Pick<ReadonlySet<string>, 'has'>,
): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = view.length;
  for (let i = 0; i < n; i++) {
    const c = view.charCodeAt(i);
    if (!isIdentStart(c) || (i > 0 && isIdentPart(view.charCodeAt(i - 1)))) continue;
    let j = i + 1;
    while (j < n && isIdentPart(view.charCodeAt(j))) j++;
    const name = view.slice(i, j);
    if (names.has(name)) {
      const scope = scopeAt(i);
      const specifierMacro = (macro: string, depth: number): boolean => {
        if (depth > SPECIFIER_DEPTH) return false;
        const options = scope.state(macro).options;
        const defs = options.filter((o): o is MacroDef => o !== null);
        return (
          defs.length > 0 &&
          defs.length === options.length &&
          defs.every((d) => isSpecifierOnly(d, (inner) => specifierMacro(inner, depth + 1)))
        );
      };
      const defs = scope.state(name).options.filter((o): o is MacroDef => o !== null);
      // The grammar parses the build with no further flags: a macro that build defines as nothing
      // (`PERF_BEGIN` outside a timing build) is nothing there, whatever another build makes it.
      const built = scope.view(name);
      const nothing = built !== null && built.body !== null && built.body.length === 0;
      if (nothing || specifierMacro(name, 0)) {
        let end = j;
        if ((nothing ? built : defs[0]).params !== null) {
          let k = j;
          while (k < n && /\s/.test(view[k])) k++;
          if (view[k] === '(') {
            const close = matchingParen(view, k);
            if (close > 0) end = close + 1;
          }
        }
        out.push([i, end]);
      }
    }
    i = j - 1;
  }
  return out;
}

/**
 * Whether a definition may expand to specifiers only once the names in it are read as macros: the
 * unit's first filter (see parseView's `specifierNames`); each use is then checked in its scope.
 */
export function mayBeSpecifierOnly(def: MacroDef): boolean {
  return isSpecifierOnly(def, (name) => !TYPE_WORDS.has(name));
}

/** Names that are a type, never a specifier macro: `#define REAL float` is a type alias. */
const TYPE_WORDS: ReadonlySet<string> = new Set([
  'void',
  'bool',
  'char',
  'short',
  'int',
  'long',
  'float',
  'double',
  'signed',
  'unsigned',
  'auto',
  'size_t',
  'half',
  'dim3',
]);

/**
 * Whether a definition expands to specifiers and attributes only (or to nothing); a name in it
 * counts where `isSpecifierMacro` says it is such a macro itself (`RAFT_HIDDEN __global__ void`).
 */
export function isSpecifierOnly(def: MacroDef, isSpecifierMacro: (name: string) => boolean = () => false): boolean {
  if (def.body === null) return false;
  let depth = 0;
  let previous = '';
  // A kernel's whole head (`#define RAFT_KERNEL static __global__ void`): specifiers, then the
  // `void` every kernel returns, which the declaration then does not write.
  const body = def.body.length > 1 && def.body[def.body.length - 1].text === 'void' ? def.body.slice(0, -1) : def.body;
  for (const t of body) {
    if (t.text === '(') {
      // Parentheses only as an attribute's arguments (`__launch_bounds__(N, 2)`), where anything goes:
      // `#define M (N)` is an expression.
      if (depth === 0 && !ATTRIBUTE_NAMES.has(previous)) return false;
      depth++;
    } else if (t.text === ')') depth--;
    else if (depth === 0 && !SPECIFIERS.has(t.text) && !(IDENTIFIER.test(t.text) && isSpecifierMacro(t.text)))
      return false;
    if (depth === 0) previous = t.text;
  }
  return true;
}

const IDENTIFIER = /^[A-Za-z_]\w*$/;
/** How deep a specifier macro's names are followed (`A` -> `B` -> `__global__`). */
const SPECIFIER_DEPTH = 4;

/** Specifiers that take arguments in parentheses. */
const ATTRIBUTE_NAMES: ReadonlySet<string> = new Set([
  '__launch_bounds__',
  '__maxnreg__',
  '__cluster_dims__',
  '__align__',
  '__attribute__',
  '__declspec',
  'alignas',
  '_Pragma',
]);

function matchingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length && i < open + 4096; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
    else if (c === ';' || c === '{') return -1;
  }
  return -1;
}
