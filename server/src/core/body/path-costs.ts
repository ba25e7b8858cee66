/**
 * The length of a code path, estimated from its syntax: about one issued
 * instruction per operator, load, store, comparison or call, more for math
 * library calls, the callee's body for a `__device__` function of the same
 * file. Loops with a constant trip count multiply their body; others count it
 * once and say so. An estimate, labelled as such wherever it is shown: the PTX
 * of the compiled file, when there is one, replaces it (see ptx-line-costs.ts).
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { FunctionTable } from './syntax-functions';
import { SyntaxViews, type NodeView } from '../syntax/syntax-view';

export interface CostEstimate {
  /** Estimated issue slots for one warp to run the path once. */
  cost: number;
  /** Statements in the path (for the predication guess). */
  statements: number;
  /** The path holds a loop, a barrier, an atomic or a call that is not a cheap intrinsic: the compiler will branch, not predicate. */
  complex: boolean;
  /**
   * The path holds a loop (in it or in a function it calls) over memory other lanes can reach: work
   * its lanes repeat, which idle lanes could share. A loop that only fills the thread's own array
   * (a message's text) is not.
   */
  loops: boolean;
  /** The path runs a loop of any kind (in it or in a function it calls): a count of it is one round at best. */
  repeats: boolean;
  /** What the estimate assumed, one sentence each. */
  notes: string[];
}

export interface CostContext {
  /** Functions defined in the file, by name, whose bodies are counted at their calls. */
  functions: FunctionTable;
  lookup?: (name: string) => number | null;
  /** Whether a nested branch splits warps: its paths then add up instead of the longest counting. */
  nestedDivergent?: (node: SyntaxNode) => boolean;
  /** Views of the tree's nodes, when the caller has read them already (see syntax-view.ts). */
  views?: SyntaxViews;
}

const MATH_CALL =
  /^(exp|exp2|exp10|log|log2|log10|pow|sin|cos|tan|sincos|asin|acos|atan|atan2|sinh|cosh|tanh|sqrt|rsqrt|cbrt|erf|erfc|lgamma|tgamma|fmod|remainder|hypot|norm|normcdf)f?$|^__(exp|log|sin|cos|tan|pow|fdividef|frcp_r[nzdu]|fsqrt_r[nzdu])f?$/;
const CHEAP_CALL =
  /^(min|max|fminf?|fmaxf?|abs|fabsf?|floorf?|ceilf?|truncf?|roundf?|rintf?|__fmaf?_r[nzdu]|fmaf?|__mul24|__umul24|__popc|__popcll|__clz|__ffs|__brev|__ldg|__float2int_r[nzdu]|__int2float_r[nzdu]|static_cast|reinterpret_cast|make_float[234]|make_int[234]|__shfl(_up|_down|_xor)?(_sync)?|__ballot_sync|__any_sync|__all_sync|__activemask|__funnelshift_[lr]c?)$/;
const BARRIER =
  /^(__syncthreads|__syncwarp|__threadfence(_block|_system)?|sync|__syncthreads_(count|and|or)|barrier_sync)$/;
const ATOMIC = /^atomic/;

export function estimateCost(nodes: readonly SyntaxNode[], ctx: CostContext): CostEstimate {
  const acc = emptyEstimate([]);
  if (nodes.length === 0) return acc;
  const views = ctx.views ?? new SyntaxViews(nodes[0].tree);
  const withViews = { ...ctx, views };
  for (const n of nodes) statementCost(views.view(n), withViews, acc, []);
  return acc;
}

/** What the walk reads: the views it reads the syntax through. */
type ViewContext = CostContext & { views: SyntaxViews };

function statementCost(node: NodeView, ctx: ViewContext, acc: CostEstimate, stack: string[]): void {
  switch (node.type) {
    case 'comment':
    case 'preproc_call':
      return;
    case 'compound_statement':
    case 'preproc_if':
    case 'preproc_ifdef':
    case 'preproc_else':
    case 'labeled_statement':
      for (const c of node.namedChildren) statementCost(c, ctx, acc, stack);
      return;
    case 'expression_statement':
      acc.statements++;
      acc.cost += Math.max(1, expressionCost(node.namedChildren[0] ?? null, ctx, acc, stack));
      return;
    case 'declaration':
      for (const d of node.childrenForFieldName('declarator')) {
        if (d?.type === 'init_declarator') {
          acc.statements++;
          acc.cost += expressionCost(d.childForFieldName('value'), ctx, acc, stack);
        }
      }
      return;
    case 'return_statement':
    case 'break_statement':
    case 'continue_statement':
    case 'goto_statement':
      acc.statements++;
      acc.cost += 1 + expressionCost(node.namedChildren[0] ?? null, ctx, acc, stack);
      return;
    case 'if_statement': {
      acc.statements++;
      acc.complex = true;
      const cond = node.childForFieldName('condition');
      const consequence = node.childForFieldName('consequence');
      const alternative = node.childForFieldName('alternative');
      const a = sub(consequence ? [consequence] : [], ctx, acc, stack);
      const b = sub(alternative ? alternative.namedChildren : [], ctx, acc, stack);
      const both = ctx.nestedDivergent?.(node.node) ? a + b : Math.max(a, b);
      acc.cost += 1 + expressionCost(cond, ctx, acc, stack) + both;
      return;
    }
    case 'switch_statement': {
      acc.statements++;
      acc.complex = true;
      const body = node.childForFieldName('body');
      const cases = (body?.namedChildren ?? []).filter((c) => c.type === 'case_statement');
      const costs = cases.map((c) =>
        sub(
          c.namedChildren.filter((s) => s.id !== c.childForFieldName('value')?.id),
          ctx,
          acc,
          stack,
        ),
      );
      const total = ctx.nestedDivergent?.(node.node) ? costs.reduce((s, x) => s + x, 0) : Math.max(0, ...costs);
      acc.cost += 2 + expressionCost(node.childForFieldName('condition'), ctx, acc, stack) + total;
      return;
    }
    case 'for_statement':
    case 'while_statement':
    case 'do_statement':
    case 'for_range_loop': {
      acc.statements++;
      acc.complex = true;
      acc.loops ||= sharesWork(node);
      acc.repeats = true;
      const body = node.childForFieldName('body');
      const perIteration =
        sub(body ? [body] : [], ctx, acc, stack) +
        1 +
        expressionCost(node.childForFieldName('condition'), ctx, acc, stack) +
        expressionCost(node.childForFieldName('update'), ctx, acc, stack);
      const trips = tripCount(node, ctx);
      if (trips !== null) acc.cost += perIteration * trips;
      else {
        acc.cost += perIteration;
        // Named by its header, not its line: notes must stay true when the kernel moves (kernel-analysis-cache.ts).
        const header = (body ? node.text.slice(0, body.startIndex - node.startIndex) : node.text.split('\n')[0])
          .replace(/\s+/g, ' ')
          .trim();
        acc.notes.push(
          `the loop \`${header.length > 60 ? `${header.slice(0, 57)}...` : header}\` is counted once (its trip count is not a constant)`,
        );
      }
      return;
    }
    default:
      if (node.type.endsWith('_expression')) {
        acc.statements++;
        acc.cost += Math.max(1, expressionCost(node, ctx, acc, stack));
      } else {
        for (const c of node.namedChildren) statementCost(c, ctx, acc, stack);
      }
  }
}

/**
 * Whether a loop reads or writes memory beyond the thread's own arrays (a parameter's, a global's,
 * a `__shared__` array, through a pointer) or calls a function that may: work the other lanes of
 * its warp could take a share of. A call to `printf` is the thread's own output.
 */
function sharesWork(loop: NodeView): boolean {
  // The function's own arrays are looked for only once a subscript asks (most loops decide before).
  let own: Set<string> | null = null;
  const stack: SyntaxNode[] = [loop.node];
  for (let n = stack.pop(); n; n = stack.pop()) {
    switch (n.type) {
      case 'subscript_expression': {
        const base = rootName(n.childForFieldName('argument'));
        own ??= privateArrays(loop.node);
        if (base === null || !own.has(base)) return true;
        break;
      }
      case 'pointer_expression':
        if (n.child(0)?.type === '*') return true;
        break;
      case 'field_expression':
        if (n.child(1)?.type === '->') return true;
        break;
      case 'call_expression': {
        const callee = n.childForFieldName('function')?.text ?? '';
        if (!CHEAP_CALL.test(callee) && !MATH_CALL.test(callee) && callee !== 'printf') return true;
        break;
      }
    }
    for (const c of n.namedChildren) if (c) stack.push(c);
  }
  return false;
}

/** The arrays the function around `node` declares for each thread (not `__shared__`, not `extern`). */
function privateArrays(node: SyntaxNode): Set<string> {
  let fn: SyntaxNode | null = node;
  while (fn && fn.type !== 'function_definition' && fn.type !== 'lambda_expression') fn = fn.parent;
  const names = new Set<string>();
  const stack: SyntaxNode[] = fn ? [fn] : [];
  for (let n = stack.pop(); n; n = stack.pop()) {
    if (n.type === 'declaration' && !/\b(__shared__|extern|static)\b/.test(n.text.split('[')[0])) {
      for (const d of n.childrenForFieldName('declarator')) {
        let a: SyntaxNode | null = d;
        if (a?.type === 'init_declarator') a = a.childForFieldName('declarator');
        if (a?.type !== 'array_declarator') continue;
        const name = a.childForFieldName('declarator');
        if (name?.type === 'identifier') names.add(name.text);
      }
    }
    for (const c of n.namedChildren) if (c) stack.push(c);
  }
  return names;
}

/** The variable an lvalue starts from (`buf` of `buf[i][j]`), or null for anything else. */
function rootName(node: SyntaxNode | null): string | null {
  let n = node;
  while (n && (n.type === 'subscript_expression' || n.type === 'parenthesized_expression'))
    n = n.type === 'subscript_expression' ? n.childForFieldName('argument') : n.namedChild(0);
  return n?.type === 'identifier' ? n.text : null;
}

/** Nothing counted yet; `notes` are shared with the estimate it is part of. */
function emptyEstimate(notes: string[]): CostEstimate {
  return { cost: 0, statements: 0, complex: false, loops: false, repeats: false, notes };
}

function sub(nodes: readonly NodeView[], ctx: ViewContext, acc: CostEstimate, stack: string[]): number {
  const inner = emptyEstimate(acc.notes);
  for (const n of nodes) statementCost(n, ctx, inner, stack);
  acc.statements += inner.statements;
  acc.complex ||= inner.complex;
  acc.loops ||= inner.loops;
  acc.repeats ||= inner.repeats;
  return inner.cost;
}

function expressionCost(node: NodeView | null, ctx: ViewContext, acc: CostEstimate, stack: string[]): number {
  if (!node) return 0;
  switch (node.type) {
    case 'identifier':
    case 'number_literal':
    case 'true':
    case 'false':
    case 'char_literal':
    case 'string_literal':
    case 'qualified_identifier':
    case 'sizeof_expression':
    case 'type_descriptor':
    case 'comment':
      return 0;
    case 'parenthesized_expression':
    case 'cast_expression':
    case 'argument_list':
    case 'subscript_argument_list':
    case 'initializer_list':
    case 'comma_expression':
      return childrenCost(node, ctx, acc, stack);
    case 'field_expression':
      return (node.text.includes('->') ? 1 : 0) + expressionCost(node.childForFieldName('argument'), ctx, acc, stack);
    case 'call_expression':
      return callCost(node, ctx, acc, stack);
    case 'conditional_expression':
      return 1 + childrenCost(node, ctx, acc, stack);
    default:
      // binary, unary, update, assignment, subscript (a load or a store), pointer dereference: one each
      return 1 + childrenCost(node, ctx, acc, stack);
  }
}

function childrenCost(node: NodeView, ctx: ViewContext, acc: CostEstimate, stack: string[]): number {
  let sum = 0;
  for (const c of node.namedChildren) sum += expressionCost(c, ctx, acc, stack);
  return sum;
}

function callCost(node: NodeView, ctx: ViewContext, acc: CostEstimate, stack: string[]): number {
  const fn = node.childForFieldName('function');
  const args = expressionCost(node.childForFieldName('arguments'), ctx, acc, stack);
  const raw =
    fn?.type === 'field_expression'
      ? (fn.childForFieldName('field')?.text ?? '')
      : (fn?.text ?? '').replace(/<.*$/s, '');
  const name = raw.slice(raw.lastIndexOf(':') + 1);
  if (BARRIER.test(name)) {
    acc.complex = true;
    return 1 + args;
  }
  if (ATOMIC.test(name)) {
    acc.complex = true;
    return 2 + args;
  }
  if (CHEAP_CALL.test(name)) return 1 + args;
  if (MATH_CALL.test(name)) return 4 + args;
  const definition = ctx.views.viewOrNull(ctx.functions.get(name));
  if (definition && !stack.includes(name) && stack.length < 6) {
    const body = definition.childForFieldName('body');
    const inner = emptyEstimate(acc.notes);
    if (body) statementCost(body, ctx, inner, [...stack, name]);
    acc.complex ||= inner.complex || inner.statements > 2;
    acc.loops ||= inner.loops;
    acc.repeats ||= inner.repeats;
    return inner.cost + args;
  }
  acc.complex = true;
  return 2 + args;
}

/** `for (int k = 0; k < 4; ++k)`: the trip count when init, bound and step are constants. */
export function constantTripCount(node: SyntaxNode, ctx: Pick<CostContext, 'lookup'>): number | null {
  return tripCount(new SyntaxViews(node.tree).view(node), ctx);
}

function tripCount(node: NodeView, ctx: Pick<CostContext, 'lookup'>): number | null {
  if (node.type !== 'for_statement') return null;
  const init = node.childForFieldName('initializer');
  const cond = node.childForFieldName('condition');
  const update = node.childForFieldName('update');
  if (!init || !cond || !update) return null;
  const decl =
    init.type === 'declaration'
      ? init.childrenForFieldName('declarator').find((d) => d?.type === 'init_declarator')
      : init.type === 'assignment_expression'
        ? init
        : null;
  if (!decl) return null;
  const name = (decl.type === 'init_declarator' ? decl.childForFieldName('declarator') : decl.childForFieldName('left'))
    ?.text;
  const start = integer(
    decl.type === 'init_declarator' ? decl.childForFieldName('value') : decl.childForFieldName('right'),
    ctx,
  );
  if (!name || start === null || cond.type !== 'binary_expression' || cond.childForFieldName('left')?.text !== name)
    return null;
  const bound = integer(cond.childForFieldName('right'), ctx);
  const op = cond.childForFieldName('operator')?.type;
  let step: number | null = null;
  if (update.type === 'update_expression' && update.childForFieldName('argument')?.text === name)
    step = update.text.includes('++') ? 1 : -1;
  else if (update.type === 'assignment_expression' && update.childForFieldName('left')?.text === name) {
    const amount = integer(update.childForFieldName('right'), ctx);
    const aop = update.childForFieldName('operator')?.type;
    if (amount !== null && aop === '+=') step = amount;
    else if (amount !== null && aop === '-=') step = -amount;
  }
  if (bound === null || !step || !op) return null;
  let trips = 0;
  for (let v = start; trips <= 4096; v += step) {
    const ok =
      op === '<'
        ? v < bound
        : op === '<='
          ? v <= bound
          : op === '>'
            ? v > bound
            : op === '>='
              ? v >= bound
              : op === '!='
                ? v !== bound
                : false;
    if (!ok) return trips;
    trips++;
  }
  return null;
}

function integer(node: NodeView | null, ctx: Pick<CostContext, 'lookup'>): number | null {
  if (!node) return null;
  if (node.type === 'number_literal') {
    const n = Number(node.text.replace(/[uUlL]+$/, ''));
    return Number.isInteger(n) ? n : null;
  }
  if (node.type === 'identifier') return ctx.lookup?.(node.text) ?? null;
  if (node.type === 'parenthesized_expression') return integer(node.namedChildren[0] ?? null, ctx);
  return null;
}
