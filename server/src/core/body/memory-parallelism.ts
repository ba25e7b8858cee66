/**
 * Memory-level parallelism of a kernel, `p` in the latency model: how many
 * independent global loads one thread has in flight before it first has to
 * wait for one of them.
 *
 * The estimate follows what nvcc does with straight-line code: within one
 * basic block, loads whose addresses do not depend on a loaded value are
 * issued before the first instruction that uses a loaded value. So the walk
 * goes through the kernel body in program order, counts independent loads,
 * and stops at the first block boundary (a branch, a loop that is not
 * unrolled, `__syncthreads()`, a global store that may alias) reached after a
 * use, or at the first load whose address needs a loaded value. Loops with a
 * constant trip count that nvcc unrolls (`#pragma unroll`, `_Pragma("unroll")`,
 * or a small trip count) count each load once per iteration. Every step is
 * kept as a sentence for the hover.
 */
import type { SyntaxNode, Tree } from '../syntax/cuda-parser';
import { SyntaxViews, type NodeView } from '../syntax/syntax-view';
import type { GlobalLoad, Kernel, MemoryParallelism, Span } from '../types';
import { offsetAt, withinLines, type SourceText } from '../text/source-text';
import { evaluateInteger, type Lookup } from '../text/const-eval';
import { estimateCost } from './path-costs';

export interface MemoryParallelismOptions {
  /** Resolves names in loop bounds (file constants, macros). */
  lookup?: Lookup;
  /** Loops with a constant trip count up to this are assumed unrolled without a pragma. Default 8. */
  implicitUnrollLimit?: number;
}

const LOAD_INTRINSICS: ReadonlySet<string> = new Set(['__ldg', '__ldca', '__ldcg', '__ldcs', '__ldlu', '__ldcv']);
const BARRIERS =
  /^(__syncthreads\w*|__syncwarp|__threadfence\w*|atomic\w+|__nanosleep|cooperative_groups::\w+|grid\.sync|block\.sync|\w+\.sync|__pipeline_wait_prior|cuda::memcpy_async)$/;

/** Where and why counting stops: thrown out of the walk. Not an Error: most walks end in one, and an Error records the stack. */
class Stop {
  constructor(
    readonly node: NodeView,
    readonly reason: string,
  ) {}
}

interface WalkState {
  globals: Set<string>;
  taint: Set<string>;
  loads: GlobalLoad[];
  useSeen: NodeView | null;
  reasoning: string[];
  restrict: boolean;
  lookup: Lookup;
  unrollLimit: number;
  source: SourceText;
  /** The loop (not unrolled) whose body the walk is in, and the first one a counted load was in. */
  loop: NodeView | null;
  loopOfLoads: NodeView | null;
}

export function estimateMemoryParallelism(
  kernel: Kernel,
  tree: Tree,
  source: SourceText,
  options: MemoryParallelismOptions = {},
): MemoryParallelism {
  const templateNames = new Set((kernel.templateParams ?? []).map((p) => p.name));
  const outer = options.lookup ?? (() => null);
  const state: WalkState = {
    globals: new Set(),
    taint: new Set(),
    loads: [],
    useSeen: null,
    reasoning: [],
    restrict: false,
    lookup: (id) => (templateNames.has(id) ? null : outer(id)),
    unrollLimit: options.implicitUnrollLimit ?? 8,
    source,
    loop: null,
    loopOfLoads: null,
  };
  let body: NodeView | null = null;
  const result = (stop: MemoryParallelism['stop']): MemoryParallelism => {
    const p = state.loads.filter((l) => l.counted).reduce((sum, l) => sum + l.multiplicity, 0);
    const reasoning = [...state.reasoning];
    reasoning.push(
      p === 0
        ? 'No global load is visible in the body: p = 0 (the latency model does not apply).'
        : `p = ${p}: ${p} independent global load${p === 1 ? '' : 's'} in flight before the first use of a loaded value.`,
    );
    const work = p > 0 && body ? workOf(state.loopOfLoads, body, state.lookup) : null;
    if (work)
      reasoning.push(
        `About ${work.instructions}${work.atLeast ? ' or more' : ''} instructions per ${work.loop ? `iteration of the loop at line ${work.loop.line}` : 'run of the body'} between the loads' waits (estimated from the syntax).`,
      );
    // Tree positions may end after a CRLF line's `\r` (a comment's node takes it in): kept on the line.
    const loads = state.loads.map((l) => ({ ...l, span: withinLines(source, l.span) }));
    const stopped = stop && { ...stop, span: withinLines(source, stop.span) };
    return { kernel: kernel.name, p, loads, stop: stopped, reasoning, source: 'source', work };
  };
  if (!kernel.bodySpan) {
    state.reasoning.push(`${kernel.name} is declared here without a body.`);
    return result(null);
  }
  const pointerParams = kernel.parameters.filter((p) => /\*|\[\s*\]/.test(p) && !/__shared__/.test(p));
  for (const param of pointerParams) {
    const name = /([A-Za-z_]\w*)\s*(?:\[\s*\])?\s*$/.exec(param.replace(/=.*$/, ''))?.[1];
    if (name) state.globals.add(name);
  }
  state.restrict =
    pointerParams.length > 0 &&
    pointerParams.every((p) => /__restrict__|\brestrict\b/.test(p) || /\bconst\b[^*]*\*/.test(p));
  state.reasoning.push(
    pointerParams.length
      ? `Global pointers: ${[...state.globals].join(', ')}${state.restrict ? ' (all `__restrict__` or read-only, so stores do not hold loads back)' : ''}.`
      : 'No pointer parameters: no global loads to count.',
  );
  const found = findBody(tree, offsetAt(source, kernel.bodySpan.start), offsetAt(source, kernel.bodySpan.end));
  // Read through views: the walk reads a loop's body more than once (see syntax-view.ts).
  body = found && new SyntaxViews(tree).view(found);
  if (!body) {
    state.reasoning.push('The parser could not read the body, so no loads were counted.');
    return result(null);
  }
  if (body.node.hasError)
    state.reasoning.push('Part of the body did not parse (a gap in tree-sitter-cuda); loads there may be missed.');
  try {
    walkStatement(body, state, 1);
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    state.reasoning.push(`Counting stops at line ${e.node.startPosition.row + 1}: ${e.reason}.`);
    return result({ span: nodeSpan(e.node), reason: e.reason });
  }
  return result(null);
}

function findBody(tree: Tree, start: number, end: number): SyntaxNode | null {
  let node: SyntaxNode | null = tree.rootNode.descendantForIndex(start, start);
  while (
    node &&
    !(
      node.startIndex === start &&
      node.endIndex >= end - 1 &&
      (node.type === 'compound_statement' || node.type === 'ERROR')
    )
  ) {
    if (node.startIndex < start) return containing(tree, start, end);
    node = node.parent;
  }
  return node ?? containing(tree, start, end);
}

/** The smallest node holding [start, end): the body when the grammar broke around it. */
function containing(tree: Tree, start: number, end: number): SyntaxNode | null {
  return tree.rootNode.descendantForIndex(start, Math.max(start, end - 1));
}

/** A block boundary: loads after it cannot be issued before a use above it. */
function boundary(state: WalkState, at: NodeView, what: string): void {
  if (state.useSeen)
    throw new Stop(at, `${what} after the first use of a loaded value (line ${state.useSeen.startPosition.row + 1})`);
}

function walkStatement(node: NodeView, state: WalkState, multiplicity: number): void {
  // Each property of a syntax node is a call into wasm: read once.
  const type = node.type;
  switch (type) {
    case 'compound_statement':
    case 'translation_unit':
    case 'ERROR':
    case 'preproc_if':
    case 'preproc_ifdef':
    case 'preproc_else':
    case 'preproc_elif':
    case 'labeled_statement':
      for (const child of node.namedChildren) if (child) walkStatement(child, state, multiplicity);
      return;
    case 'comment':
    case 'preproc_call':
    case 'preproc_def':
    case 'preproc_function_def':
    case 'empty_statement':
    case 'type_definition':
    case 'static_assert_declaration':
    case 'using_declaration':
    case 'alias_declaration':
      return;
    case 'declaration':
      walkDeclaration(node, state, multiplicity);
      return;
    case 'expression_statement':
      for (const child of node.namedChildren) if (child) walkExpressionStatement(child, state, multiplicity);
      return;
    case 'return_statement':
    case 'break_statement':
    case 'continue_statement':
    case 'goto_statement':
      for (const child of node.namedChildren) if (child) scanExpression(child, state, multiplicity);
      throw new Stop(node, `\`${type.replace('_statement', '')}\` leaves the straight-line code`);
    case 'if_statement':
      walkIf(node, state, multiplicity);
      return;
    case 'for_statement':
    case 'for_range_loop':
    case 'while_statement':
    case 'do_statement':
      walkLoop(node, state, multiplicity);
      return;
    case 'switch_statement':
      boundary(state, node, 'a switch');
      throw new Stop(node, 'a switch: its cases are not followed');
    default:
      if (type.endsWith('_expression') || type === 'identifier') {
        walkExpressionStatement(node, state, multiplicity);
        return;
      }
      for (const child of node.namedChildren) if (child) walkStatement(child, state, multiplicity);
  }
}

function walkDeclaration(node: NodeView, state: WalkState, multiplicity: number): void {
  const text = node.text;
  if (/\b__shared__\b/.test(text)) return;
  for (const child of node.namedChildren) {
    if (!child || child.type !== 'init_declarator') continue;
    const declarator = child.childForFieldName('declarator');
    const name = declaredName(declarator);
    const value = child.childForFieldName('value');
    if (!value || !name) continue;
    const scan = scanExpression(value, state, multiplicity);
    if (scan.loads > 0 || scan.usesTaint) state.taint.add(name);
    else if (/\*/.test(declarator?.type === 'pointer_declarator' ? '*' : '') && scan.namesGlobal) {
      state.globals.add(name);
      state.reasoning.push(`\`${name}\` points into global memory (line ${child.startPosition.row + 1}).`);
    } else if (scan.namesGlobal && /\bauto\b/.test(text)) state.globals.add(name);
  }
}

function declaredName(declarator: NodeView | null): string | null {
  let d = declarator;
  while (d && d.type !== 'identifier')
    d = d.childForFieldName('declarator') ?? d.namedChildren.find((c) => c?.type === 'identifier') ?? null;
  return d?.text ?? null;
}

function walkExpressionStatement(node: NodeView, state: WalkState, multiplicity: number): void {
  const type = node.type;
  if (type === 'assignment_expression') {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    const operator = node.childForFieldName('operator')?.text ?? '=';
    const compound = operator !== '=';
    const rightScan = right
      ? scanExpression(right, state, multiplicity)
      : { loads: 0, usesTaint: false, namesGlobal: false };
    if (left && isMemoryAccess(left) && baseNamesGlobal(left, state)) {
      // A store to global memory: `out[i] = v` (and `out[i] += v` reads it first).
      scanAccessIndices(left, state, multiplicity);
      if (compound) recordLoad(left, state, multiplicity);
      if (rightScan.loads > 0 || rightScan.usesTaint || compound) markUse(state, node);
      if (!state.restrict)
        boundary(state, node, `a store to global memory (\`${left.text}\`) that may alias later loads`);
      return;
    }
    if (left?.type === 'identifier') {
      const name = left.text;
      if (compound && state.taint.has(name)) markUse(state, node);
      if (rightScan.loads > 0 || rightScan.usesTaint) {
        if (compound) markUse(state, node); // `sum += a[i]` consumes the load
        state.taint.add(name);
      } else if (!compound) state.taint.delete(name);
      return;
    }
    if (left) scanExpression(left, state, multiplicity, true);
    if (rightScan.loads > 0 || rightScan.usesTaint) markUse(state, node); // a store of a loaded value (shared memory, a struct)
    return;
  }
  if (type === 'call_expression') {
    const fn = node.childForFieldName('function')?.text.replace(/\s+/g, '') ?? '';
    if (BARRIERS.test(fn)) {
      for (const arg of node.childForFieldName('arguments')?.namedChildren ?? [])
        if (arg) scanExpression(arg, state, multiplicity);
      boundary(state, node, `\`${fn}()\``);
      if (/^__syncthreads|sync$/.test(fn))
        state.reasoning.push(
          `\`${fn}()\` at line ${node.startPosition.row + 1}: loads issued before it stay in flight.`,
        );
      return;
    }
  }
  const scan = scanExpression(node, state, multiplicity);
  if (scan.usesTaint) markUse(state, node);
}

function walkIf(node: NodeView, state: WalkState, multiplicity: number): void {
  const condition = node.childForFieldName('condition');
  if (condition) {
    const scan = scanExpression(condition, state, multiplicity);
    if (scan.usesTaint || scan.loads > 0) markUse(state, condition);
  }
  const consequence = node.childForFieldName('consequence');
  const alternative = node.childForFieldName('alternative');
  boundary(state, node, 'a branch');
  if (consequence && leavesEarly(consequence)) {
    // `if (i >= n) return;`: the code that goes on is after the if.
    state.reasoning.push(`The early exit at line ${node.startPosition.row + 1} is skipped; counting goes on after it.`);
    return;
  }
  if (consequence) {
    state.reasoning.push(
      `Following the branch at line ${node.startPosition.row + 1}${alternative ? ' (its then-part only)' : ''}.`,
    );
    walkStatement(consequence, state, multiplicity);
  }
  if (alternative) throw new Stop(node, 'the end of an if/else: the paths differ after it');
  boundary(state, node, 'the end of a branch');
}

function leavesEarly(node: NodeView): boolean {
  const last =
    node.type === 'compound_statement' ? node.namedChildren.filter((c) => c && c.type !== 'comment').pop() : node;
  return !!last && ['return_statement', 'break_statement', 'continue_statement', 'goto_statement'].includes(last.type);
}

function walkLoop(node: NodeView, state: WalkState, multiplicity: number): void {
  const type = node.type;
  const body = node.childForFieldName('body');
  const trips = type === 'for_statement' ? tripCount(node, state.lookup) : null;
  const pragma = unrollPragma(node, state.source);
  let unroll: number | null = null;
  let why = '';
  if (pragma !== null && pragma.factor === 1) unroll = null;
  else if (pragma !== null && trips !== null) {
    unroll = pragma.factor === null ? trips : Math.min(trips, pragma.factor);
    why = `\`${pragma.text}\` with a constant trip count of ${trips}`;
  } else if (pragma !== null && pragma.factor !== null) {
    unroll = pragma.factor;
    why = `\`${pragma.text}\``;
  } else if (pragma === null && trips !== null && trips <= state.unrollLimit) {
    unroll = trips;
    why = `a constant trip count of ${trips} (nvcc unrolls such short loops)`;
  }
  if (type === 'for_statement') {
    for (const field of ['initializer', 'condition']) {
      const part = node.childForFieldName(field);
      if (!part) continue;
      if (part.type === 'declaration') walkDeclaration(part, state, multiplicity);
      else if (scanExpression(part, state, multiplicity).usesTaint) markUse(state, part);
    }
  } else if (type === 'while_statement') {
    const condition = node.childForFieldName('condition');
    if (condition && scanExpression(condition, state, multiplicity).usesTaint) markUse(state, condition);
  }
  if (!body) return;
  if (unroll !== null && unroll > 0 && !hasInnerBoundary(body)) {
    state.reasoning.push(
      `The loop at line ${node.startPosition.row + 1} is unrolled ${unroll}× (${why}): each load in it is issued ${unroll} times.`,
    );
    const before = state.loads.length;
    try {
      walkStatement(body, state, multiplicity * unroll);
    } catch (e) {
      // Stopped inside: only the first iteration's loads were issued before the stop.
      for (const load of state.loads.slice(before)) load.multiplicity = multiplicity;
      throw e;
    }
    return;
  }
  boundary(state, node, 'a loop');
  state.reasoning.push(
    `The loop at line ${node.startPosition.row + 1} is not unrolled${trips === null ? ' (its trip count is not a constant)' : ''}: counting its first iteration.`,
  );
  const outer = state.loop;
  state.loop = node;
  try {
    walkStatement(body, state, multiplicity);
  } finally {
    state.loop = outer;
  }
  if (state.useSeen)
    throw new Stop(node, 'the end of the first iteration: the next one starts after its loads were used');
}

function hasInnerBoundary(body: NodeView): boolean {
  return (
    body.descendantsOfType([
      'if_statement',
      'for_statement',
      'while_statement',
      'do_statement',
      'switch_statement',
      'return_statement',
      'break_statement',
      'continue_statement',
    ]).length > 0 || /\b__syncthreads|\b__syncwarp|\batomic[A-Z]/.test(body.text)
  );
}

/** `for (int j = A; j < B; j += C)` with constant A, B, C: the number of iterations. */
function tripCount(node: NodeView, lookup: Lookup): number | null {
  const init = node.childForFieldName('initializer')?.text ?? '';
  const cond = node.childForFieldName('condition')?.text ?? '';
  const update = node.childForFieldName('update')?.text ?? '';
  const i =
    /^(?:(?:const\s+)?(?:unsigned\s+)?(?:int|long|short|size_t|unsigned|auto|uint32_t|int32_t)\s+)?([A-Za-z_]\w*)\s*=\s*(.+?);?$/s.exec(
      init.trim(),
    );
  if (!i) return null;
  const v = i[1];
  const start = evaluateInteger(i[2], lookup);
  const c = new RegExp(String.raw`^\s*${v}\s*(<=|<|!=)\s*(.+)$`, 's').exec(cond) ?? null;
  const flipped = c ? null : new RegExp(String.raw`^\s*(.+?)\s*(>=|>)\s*${v}\s*$`, 's').exec(cond);
  const op = c?.[1] ?? (flipped ? (flipped[2] === '>' ? '<' : '<=') : null);
  const end = evaluateInteger((c?.[2] ?? flipped?.[1] ?? '').trim(), lookup);
  let step: number | null = null;
  if (new RegExp(String.raw`^\s*(?:\+\+\s*${v}|${v}\s*\+\+)\s*$`).test(update)) step = 1;
  else {
    const s = new RegExp(String.raw`^\s*${v}\s*\+=\s*(.+)$`, 's').exec(update);
    if (s) step = evaluateInteger(s[1], lookup);
  }
  if (start === null || end === null || step === null || step <= 0 || op === null) return null;
  const last = op === '<=' ? end + 1 : end;
  if (op === '!=' && (end - start) % step !== 0) return null;
  const n = Math.ceil((last - start) / step);
  return n >= 0 && n <= 4096 ? n : null;
}

/** `#pragma unroll [N]` or `_Pragma("unroll [N]")` on the lines right above a loop. */
function unrollPragma(node: NodeView, source: SourceText): { text: string; factor: number | null } | null {
  const { text, lineStarts } = source;
  const lineText = (row: number) =>
    text.slice(lineStarts[row], row + 1 < lineStarts.length ? lineStarts[row + 1] : text.length).replace(/\r?\n$/, '');
  const row = node.startPosition.row;
  const sameLine = lineText(row).slice(0, node.startPosition.column);
  const candidates = [sameLine];
  for (let r = row - 1; r >= 0 && r >= row - 8; r--) candidates.push(lineText(r));
  for (const [k, line] of candidates.entries()) {
    const t = line.trim();
    const m = /(?:#\s*pragma\s+(?:nv_)?unroll|_Pragma\s*\(\s*"\s*(?:nv_)?unroll)\s*\(?\s*(\d+)?/.exec(t);
    if (m)
      return {
        text: m[0].startsWith('_Pragma')
          ? `_Pragma("unroll${m[1] ? ' ' + m[1] : ''}")`
          : `#pragma unroll${m[1] ? ' ' + m[1] : ''}`,
        factor: m[1] ? Number(m[1]) : null,
      };
    if (t === '' || t.startsWith('//') || t.startsWith('#')) continue;
    if (k === 0) continue;
    return null;
  }
  return null;
}

interface Scan {
  loads: number;
  usesTaint: boolean;
  namesGlobal: boolean;
}

/** Count the loads in an expression (recording them) and note reads of loaded values. */
function scanExpression(node: NodeView, state: WalkState, multiplicity: number, isStoreTarget = false): Scan {
  const scan: Scan = { loads: 0, usesTaint: false, namesGlobal: false };
  const visit = (n: NodeView, addressOnly: boolean) => {
    const type = n.type;
    switch (type) {
      case 'identifier': {
        const name = n.text;
        if (state.taint.has(name)) scan.usesTaint = true;
        if (state.globals.has(name)) scan.namesGlobal = true;
        return;
      }
      case 'subscript_expression':
      case 'pointer_expression': {
        if (type === 'pointer_expression' && n.child(0)?.text === '&') {
          for (const c of n.namedChildren) if (c) visit(c, true);
          return;
        }
        if (baseNamesGlobal(n, state) && !addressOnly && !(isStoreTarget && n === node)) {
          const dependent = indexUsesTaint(n, state);
          if (dependent) throw new Stop(n, `the load \`${n.text}\` needs a loaded value for its address`);
          recordLoad(n, state, multiplicity);
          scan.loads++;
          scanAccessIndices(n, state, multiplicity);
          return;
        }
        break;
      }
      case 'call_expression': {
        const fn = n.childForFieldName('function')?.text.replace(/\s+/g, '') ?? '';
        if (LOAD_INTRINSICS.has(fn)) {
          const dependent = (n.childForFieldName('arguments')?.namedChildren ?? []).some(
            (a) => a && mentionsTaint(a, state),
          );
          if (dependent) throw new Stop(n, `the load \`${n.text}\` needs a loaded value for its address`);
          recordLoad(n, state, multiplicity);
          scan.loads++;
          return;
        }
        break;
      }
      case 'sizeof_expression':
        return;
    }
    for (const c of n.namedChildren) if (c) visit(c, addressOnly);
  };
  visit(node, false);
  return scan;
}

function isMemoryAccess(node: NodeView): boolean {
  let n: NodeView | null = node;
  while (n && n.type === 'field_expression') n = n.childForFieldName('argument');
  return !!n && (n.type === 'subscript_expression' || (n.type === 'pointer_expression' && n.child(0)?.text === '*'));
}

/** Does the accessed address start from a global pointer (`a[i]`, `(a + k)[i]`, `reinterpret_cast<const float4*>(a)[i]`, `*(a + i)`)? */
function baseNamesGlobal(node: NodeView, state: WalkState): boolean {
  let n: NodeView | null = node;
  while (n && n.type === 'field_expression') n = n.childForFieldName('argument');
  if (!n) return false;
  const base = n.childForFieldName('argument');
  if (!base) return false;
  const baseType = base.type;
  if (baseType === 'identifier') return state.globals.has(base.text);
  if (baseType === 'subscript_expression') return false; // a[i][j]: a local or shared 2-D array
  return [...base.text.matchAll(/[A-Za-z_]\w*/g)].some((m) => state.globals.has(m[0]));
}

function indexUsesTaint(node: NodeView, state: WalkState): boolean {
  if (node.type === 'subscript_expression') {
    const indices = node.childForFieldName('indices') ?? node.childForFieldName('index');
    const base = node.childForFieldName('argument');
    return (
      (!!indices && mentionsTaint(indices, state)) ||
      (!!base && base.type !== 'identifier' && mentionsTaint(base, state))
    );
  }
  const arg = node.childForFieldName('argument');
  return !!arg && mentionsTaint(arg, state);
}

function scanAccessIndices(node: NodeView, state: WalkState, multiplicity: number): void {
  let n: NodeView | null = node;
  while (n && n.type === 'field_expression') n = n.childForFieldName('argument');
  const indices =
    n?.type === 'subscript_expression' ? (n.childForFieldName('indices') ?? n.childForFieldName('index')) : null;
  if (indices) for (const c of indices.namedChildren) if (c) scanExpression(c, state, multiplicity);
}

function mentionsTaint(node: NodeView, state: WalkState): boolean {
  if (state.taint.size === 0) return false; // no subtree walk per access (quadratic on nested subscripts)
  if (node.type === 'identifier') return state.taint.has(node.text);
  return node.descendantsOfType('identifier').some((id) => id !== null && state.taint.has(id.text));
}

function recordLoad(node: NodeView, state: WalkState, multiplicity: number): void {
  state.loopOfLoads ??= state.loop;
  state.loads.push({ text: node.text.replace(/\s+/g, ' '), span: nodeSpan(node), counted: true, multiplicity });
}

function markUse(state: WalkState, node: NodeView): void {
  if (!state.useSeen && state.loads.length > 0) {
    state.useSeen = node;
    state.reasoning.push(
      `First use of a loaded value at line ${node.startPosition.row + 1} (\`${firstLine(node.text)}\`); loads in the same straight-line block are still issued before it.`,
    );
  } else if (!state.useSeen && state.loads.length === 0) {
    // A use of something tainted without loads: nothing in flight.
  }
}

function firstLine(text: string): string {
  const line = text.split('\n')[0].trim();
  return line.length > 60 ? line.slice(0, 57) + '...' : line;
}

/**
 * The work between the loads' waits, from the syntax: per iteration of the loop the first counted
 * load is in, else per run of the body. A loop without a constant trip count inside is counted
 * once, and the figure is then a lower bound.
 */
function workOf(loop: NodeView | null, body: NodeView, lookup: Lookup): NonNullable<MemoryParallelism['work']> {
  const measured = loop?.childForFieldName('body') ?? body;
  const cost = estimateCost([measured.node], { functions: new Map(), lookup });
  return {
    instructions: Math.max(1, cost.cost + (loop ? 2 : 0)),
    atLeast: cost.notes.length > 0,
    source: 'source',
    loop: loop ? { line: loop.startPosition.row + 1 } : null,
  };
}

function nodeSpan(node: NodeView): Span {
  const { startPosition: start, endPosition: end } = node;
  return {
    start: { line: start.row, character: start.column },
    end: { line: end.row, character: end.column },
  };
}
