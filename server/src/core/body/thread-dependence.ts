/**
 * Thread-index dependence: which values in a kernel (and the `__device__`
 * functions it calls, in the same file) vary across the threads of a block,
 * and how (see symbolic-values.ts for the values, lane-evaluation.ts and
 * dependence-kind.ts for what they say about the lanes of a warp).
 *
 * The walk records every branch whose condition depends on a thread index as
 * a `BranchSite`, with the syntax nodes of its paths for the cost model.
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { Kernel, Span } from '../types';
import { SyntaxViews, type NodeView } from '../syntax/syntax-view';
import {
  applyUnary,
  binary,
  constant,
  fixedSym,
  freeSym,
  isFixedValue,
  isThreadDependent,
  opaqueSym,
  symFacts,
  symKey,
  ZERO,
  type DependenceKind,
  type LoopInfo,
  type Sym,
  type ThreadValue,
  type ValueOrigin,
} from './symbolic-values';
import { dependenceKind } from './dependence-kind';
import { oneLineOfCode } from '../text/one-line';

export * from './symbolic-values';
export * from './lane-evaluation';
export * from './dependence-kind';

export type BranchConstruct =
  'if' | 'else-if' | 'ternary' | 'switch' | 'short-circuit' | 'loop' | 'return' | 'break' | 'continue';

export interface PathNodes {
  label: string;
  /** The syntax the path executes (empty for an empty else). */
  nodes: SyntaxNode[];
  /** For a switch case: the case values (null for `default`). */
  caseValues?: number[] | null;
}

export interface BranchSite {
  kernel: string;
  construct: BranchConstruct;
  /** The statement or expression that branches. */
  node: SyntaxNode;
  conditionNode: SyntaxNode;
  condition: ThreadValue;
  paths: PathNodes[];
  /**
   * Thread-dependent conditions that hold wherever the branch runs (the enclosing `if`s and loops,
   * an early `return` above it), innermost last: lanes for which one is false are not there to split.
   */
  guards: Sym[];
}

export interface KernelDependence {
  kernel: string;
  /** The body's syntax node. */
  body: SyntaxNode;
  /** Variables at the end of the body (locals of the kernel), with their values. */
  variables: Map<string, ThreadValue>;
  sites: BranchSite[];
  /** threadIdx.y or .z appears in the kernel or its callees. */
  usesMultiDimensionalBlock: boolean;
}

export interface DependenceOptions {
  /** Resolves identifiers that name compile-time constants (`#define R 3`). */
  lookup?: (name: string) => number | null;
  /** `collectFunctions` of the tree (or `lazyFunctions`), when the caller has it already. */
  functions?: FunctionTable;
  /** `findKernelDefinitions` of the tree for (at least) these kernels, when the caller has it already. */
  definitions?: ReadonlyMap<Kernel, SyntaxNode>;
  /** Views of the tree's nodes, when the caller reads the same nodes after the walk (the cost of each branch's paths); else each kernel's own. */
  views?: SyntaxViews;
}

type Env = Map<string, ThreadValue>;

interface GroupInfo {
  kind: 'block' | 'tile' | 'coalesced' | 'grid' | 'other';
  size: number | null;
}

interface WalkContext {
  kernel: string;
  lookup: (name: string) => number | null;
  functions: FunctionTable;
  sites: BranchSite[];
  callStack: string[];
  groups: Map<string, GroupInfo>;
  returns: ThreadValue[] | null;
  multiDimensional: boolean;
  /** Skip recording sites (a first pass over a loop body). */
  silent: number;
  /** The thread-dependent conditions in force where the walk is (see BranchSite.guards). */
  guards: Sym[];
  /** `__shared__` scalars in scope: one value for the whole block after a barrier. */
  shared: Set<string>;
  /** Local arrays in scope (a thread's own registers or local memory): the env holds the join of what was stored in them. */
  arrays: Set<string>;
  /** References bound to memory (`int& slot = shared[warp];`): a store through one leaves what is read from it as the load was. */
  memoryRefs: Set<string>;
  /** Lambdas bound to locals (`auto load = [&](int k) { ... };`): a call walks the body with the arguments bound. */
  lambdas: Map<string, NodeView>;
  /** Loops' assignments by syntax node id (see `loopSyntax`). */
  loops: Map<number, LoopSyntax>;
  /** The syntax is read through views: the walk reads most nodes several times (see syntax-view.ts). */
  views: SyntaxViews;
}

const LOOP_TYPES: ReadonlySet<string> = new Set(['for_statement', 'while_statement', 'do_statement', 'for_range_loop']);

/** Dependence facts for each kernel with a body, from the document's syntax tree. */
export function analyzeThreadDependence(
  tree: Tree,
  kernels: readonly Kernel[],
  options: DependenceOptions = {},
): KernelDependence[] {
  const functions = options.functions ?? collectFunctions(tree.rootNode);
  const definitions = options.definitions ?? findKernelDefinitions(tree.rootNode, kernels);
  const results: KernelDependence[] = [];
  for (const kernel of kernels) {
    if (!kernel.isDefinition || !kernel.bodySpan) continue;
    const views = options.views ?? new SyntaxViews(tree);
    const definition = views.viewOrNull(definitions.get(kernel));
    const body = definition?.childForFieldName('body');
    if (!definition || !body) continue;
    const ctx: WalkContext = {
      kernel: kernel.name,
      lookup: options.lookup ?? (() => null),
      functions,
      sites: [],
      callStack: [kernel.name],
      groups: new Map(),
      returns: null,
      multiDimensional: false,
      silent: 0,
      guards: [],
      shared: new Set(),
      arrays: new Set(),
      memoryRefs: new Set(),
      lambdas: new Map(),
      loops: new Map(),
      views,
    };
    const env: Env = new Map();
    for (const name of templateValueParameters(definition)) env.set(name, uniformValue(fixedSym(name)));
    for (const name of parameterNames(definition)) env.set(name, { sym: freeSym(name), origin: null });
    walkStatement(body, env, ctx);
    results.push({
      kernel: kernel.name,
      body: body.node,
      variables: env,
      sites: dedupeSites(ctx.sites),
      usesMultiDimensionalBlock: ctx.multiDimensional,
    });
  }
  return results;
}

/** Evaluate one expression in a fresh environment (for tests and quick checks): names bound by `bindings`, the rest uniform. */
export function evaluateExpressionNode(node: SyntaxNode, bindings: Map<string, ThreadValue> = new Map()): ThreadValue {
  const views = new SyntaxViews(node.tree);
  const ctx: WalkContext = {
    kernel: '',
    lookup: () => null,
    functions: collectFunctions(node.tree.rootNode),
    sites: [],
    callStack: [],
    groups: new Map(),
    returns: null,
    multiDimensional: false,
    silent: 1,
    guards: [],
    shared: new Set(),
    arrays: new Set(),
    memoryRefs: new Set(),
    lambdas: new Map(),
    loops: new Map(),
    views,
  };
  return evalExpr(views.view(node), new Map(bindings), ctx);
}

function dedupeSites(sites: BranchSite[]): BranchSite[] {
  // A device function called twice records its branches twice; keep one per node and construct (the last, which saw more context).
  const byKey = new Map<string, BranchSite>();
  for (const s of sites) byKey.set(`${s.node.startIndex}:${s.node.endIndex}:${s.construct}`, s);
  return [...byKey.values()].sort((a, b) => a.node.startIndex - b.node.startIndex);
}

/** Function definitions by name: what the walks look up when a kernel calls a function. */
export type FunctionTable = Pick<ReadonlyMap<string, SyntaxNode>, 'get'>;

/**
 * collectFunctions, run on the first lookup of a name that `mayDefine` allows (a superset of the
 * file's function names, read from its text): most calls are to built-ins (`__syncthreads`).
 */
export function lazyFunctions(root: SyntaxNode, mayDefine: (name: string) => boolean = () => true): FunctionTable {
  let table: Map<string, SyntaxNode> | null = null;
  return {
    get: (name) =>
      mayDefine(name.startsWith('.') ? name.slice(1).replace(/#\d+$/, '') : name)
        ? (table ??= collectFunctions(root)).get(name)
        : undefined,
  };
}

/**
 * The file's function definitions by name; member functions of its structs and classes (an agent's
 * `Evaluate`, a selector's `add`) under `.name`, which calls through an object look up first.
 */
export function collectFunctions(root: SyntaxNode): Map<string, SyntaxNode> {
  const map = new Map<string, SyntaxNode>();
  forEachFunctionDefinition(root, (definition, member) => {
    const name = functionName(definition);
    if (!name) return;
    if (!member) {
      if (!map.has(name)) map.set(name, definition);
      return;
    }
    let key = `.${name}`;
    for (let k = 2; map.has(key) && k <= 4; k++) key = `.${name}#${k}`;
    if (!map.has(key)) map.set(key, definition);
  });
  return map;
}

/** A name written as a call: `name(`, `name<...>(`. */
const CALL_LIKE = /([A-Za-z_]\w*)\s*(?:<[^;{}()<>]*(?:<[^;{}()<>]*>[^;{}()<>]*)*>)?\s*\(/g;

const SCOPES: ReadonlySet<string> = new Set([
  'template_declaration',
  'namespace_definition',
  'declaration_list',
  'linkage_specification',
  'preproc_if',
  'preproc_ifdef',
  'preproc_else',
  'preproc_elif',
]);
const CLASSES: ReadonlySet<string> = new Set(['struct_specifier', 'class_specifier', 'union_specifier']);

/** Every function definition at file scope, in namespaces, templates and class bodies (`member`: in a class). */
function forEachFunctionDefinition(
  root: SyntaxNode,
  visitDefinition: (definition: SyntaxNode, member: boolean) => void,
): void {
  const visit = (node: SyntaxNode, member: boolean) => {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === 'function_definition') visitDefinition(child, member);
      else if (SCOPES.has(child.type)) visit(child, member);
      else if (
        CLASSES.has(child.type) ||
        (child.type === 'declaration' && child.namedChildren.some((c) => !!c && CLASSES.has(c.type)))
      ) {
        const specifier = CLASSES.has(child.type)
          ? child
          : child.namedChildren.find((c) => !!c && CLASSES.has(c.type))!;
        const body = specifier.childForFieldName('body');
        if (body) visit(body, true);
      }
    }
  };
  visit(root, false);
}

/**
 * The `__device__` functions (and device lambdas in host code) of a file that nothing in it calls:
 * helpers of a header without a kernel, members called from other files. Their branches are
 * analysed with their parameters unknown.
 */
export function uncalledDeviceFunctions(root: SyntaxNode, masked: string): Array<{ name: string; node: SyntaxNode }> {
  const found: Array<{ name: string; node: SyntaxNode }> = [];
  // How often each name is written as a call (or a definition), in one pass over the text.
  const calls = new Map<string, number>();
  const count = (text: string, into: Map<string, number>) => {
    for (const m of text.matchAll(CALL_LIKE)) into.set(m[1], (into.get(m[1]) ?? 0) + 1);
  };
  let counted = false;
  forEachFunctionDefinition(root, (definition) => {
    const body = definition.childForFieldName('body');
    if (!body) return;
    const head = masked.slice(definition.startIndex, body.startIndex);
    if (!/\b__device__\b/.test(head) || /\b__global__\b/.test(head)) return;
    const name = functionName(definition);
    if (!name || /^operator\b/.test(name)) return;
    if (!counted) {
      count(masked, calls);
      counted = true;
    }
    const own = new Map<string, number>();
    count(masked.slice(definition.startIndex, definition.endIndex), own);
    if ((calls.get(name) ?? 0) > (own.get(name) ?? 0)) return;
    found.push({ name, node: definition });
  });
  // `[=] __device__ (int i) { ... }` passed to a host-side launcher.
  for (const m of masked.matchAll(/\]\s*(?:\([^()]*\)\s*)?(?:mutable\s*)?__device__\b/g)) {
    let node: SyntaxNode | null = root.descendantForIndex(m.index);
    while (node && node.type !== 'lambda_expression') node = node.parent;
    if (node && !found.some((f) => f.node.id === node!.id)) found.push({ name: 'lambda', node });
  }
  return found;
}

function functionName(definition: SyntaxNode): string | null {
  let d: SyntaxNode | null = definition.childForFieldName('declarator');
  while (d && d.type !== 'function_declarator') d = d.childForFieldName('declarator');
  const name = d?.childForFieldName('declarator');
  if (!name) return null;
  const text = name.text;
  return text.slice(text.lastIndexOf(':') + 1);
}

/**
 * The definition of each kernel with a body: the first function definition,
 * depth first through the nodes that span its body's line, whose body starts
 * where the kernel's does. One walk serves all kernels, descending only into
 * nodes that span some kernel's line.
 */
/**
 * The definition node of each kernel: from the node at its body's first character up to the
 * function definition whose body starts there (no walk over the file's other definitions).
 */
export function findKernelDefinitions(root: SyntaxNode, kernels: readonly Kernel[]): Map<Kernel, SyntaxNode> {
  const found = new Map<Kernel, SyntaxNode>();
  for (const k of kernels) {
    if (!k.isDefinition || !k.bodySpan) continue;
    const { line: row, character: column } = k.bodySpan.start;
    for (let node: SyntaxNode | null = root.descendantForPosition({ row, column }); node; node = node.parent) {
      if (node.type !== 'function_definition') continue;
      const body = node.childForFieldName('body');
      if (body && body.startPosition.row === row && body.startPosition.column === column) {
        found.set(k, node);
        break;
      }
    }
  }
  return found;
}

function parameterNames(definition: NodeView): string[] {
  let d: NodeView | null = definition.childForFieldName('declarator');
  while (d && d.type !== 'function_declarator' && d.type !== 'abstract_function_declarator')
    d = d.childForFieldName('declarator');
  const params = d?.childForFieldName('parameters');
  if (!params) return [];
  return params.namedChildren
    .filter((p) => p.type.includes('parameter_declaration'))
    .map((p) => declaratorName(p.childForFieldName('declarator')) ?? '');
}

/**
 * The value parameters of the template a function definition belongs to (`N` in
 * `template <typename T, int N>`): fixed by the compiler, one value per instantiation.
 */
function templateValueParameters(definition: NodeView): string[] {
  const template = definition.parent?.type === 'template_declaration' ? definition.parent : null;
  const list =
    template?.childForFieldName('parameters') ??
    template?.namedChildren.find((c) => c.type === 'template_parameter_list') ??
    null;
  if (!list) return [];
  const names: string[] = [];
  for (const p of list.namedChildren) {
    if (
      p.type !== 'parameter_declaration' &&
      p.type !== 'optional_parameter_declaration' &&
      p.type !== 'variadic_parameter_declaration'
    )
      continue;
    const name = declaratorName(
      p.childForFieldName('declarator') ??
        p.namedChildren.find((c) => c.type === 'identifier' || c.type.endsWith('declarator')) ??
        null,
    );
    if (name) names.push(name);
  }
  return names;
}

function declaratorName(node: NodeView | null): string | null {
  let d = node;
  while (d) {
    if (d.type === 'identifier' || d.type === 'field_identifier') return d.text;
    d =
      d.childForFieldName('declarator') ??
      d.namedChildren.find((c) => c.type === 'identifier' || c.type.endsWith('declarator')) ??
      null;
  }
  return null;
}

export function spanOfNode(node: Pick<SyntaxNode, 'startPosition' | 'endPosition'>): Span {
  const { startPosition: start, endPosition: end } = node;
  return { start: { line: start.row, character: start.column }, end: { line: end.row, character: end.column } };
}

function originOf(node: NodeView): ValueOrigin {
  return { text: oneLineOfCode(node.text), span: spanOfNode(node) };
}

function uniformValue(sym: Sym): ThreadValue {
  return { sym, origin: null };
}

/** The statement that holds `node` (for the origin of a variable's value). */
function enclosingStatement(node: NodeView): NodeView {
  let n: NodeView = node;
  while (n.parent && !n.type.endsWith('statement') && n.type !== 'declaration' && n.type !== 'for_statement')
    n = n.parent;
  return n.type === 'for_statement' || n.type === 'compound_statement' ? node : n;
}

function firstOrigin(...values: ThreadValue[]): ValueOrigin | null {
  for (const v of values) if (v.origin && isThreadDependent(v.sym)) return v.origin;
  return null;
}

/** Walks a statement; for `if (c) return;` (break, continue) it gives `!c`, what holds after it. */
function walkStatement(node: NodeView, env: Env, ctx: WalkContext): Sym | null {
  switch (node.type) {
    case 'compound_statement':
    case 'translation_unit':
    case 'preproc_if':
    case 'preproc_ifdef':
    case 'preproc_else':
    case 'preproc_elif':
    case 'labeled_statement': {
      // After `if (c) return;` (or break, continue) the rest of the block runs where `c` is false.
      const depth = ctx.guards.length;
      for (const child of node.namedChildren) {
        if (!child) continue;
        const exitGuard = walkStatement(child, env, ctx);
        if (exitGuard && isThreadDependent(exitGuard)) ctx.guards.push(exitGuard);
      }
      ctx.guards.length = depth;
      return null;
    }
    case 'declaration':
      walkDeclaration(node, env, ctx);
      return null;
    case 'expression_statement':
      for (const child of node.namedChildren) if (child) evalExpr(child, env, ctx);
      return null;
    case 'if_statement':
      return walkIf(node, env, ctx, 'if');
    case 'for_statement':
    case 'while_statement':
    case 'do_statement':
    case 'for_range_loop':
      walkLoop(node, env, ctx);
      return null;
    case 'switch_statement':
      walkSwitch(node, env, ctx);
      return null;
    case 'return_statement': {
      const value = node.namedChildren[0];
      if (value) {
        const v = evalExpr(value, env, ctx);
        ctx.returns?.push(v);
      }
      return null;
    }
    default:
      if (node.type.endsWith('_expression')) evalExpr(node, env, ctx);
      return null;
  }
}

function walkDeclaration(node: NodeView, env: Env, ctx: WalkContext): void {
  const shared = node.namedChildren.some((c) => c.type === 'type_qualifier' && c.text === '__shared__');
  for (const d of node.childrenForFieldName('declarator')) {
    if (d.type === 'array_declarator') {
      // A thread's own array: its elements are the values stored in it (a shared array is read through loads).
      const name = declaratorName(d);
      if (name && !shared) {
        ctx.arrays.add(name);
        env.set(name, uniformValue(freeSym(name)));
      }
      continue;
    }
    if (shared && d.type === 'identifier') {
      ctx.shared.add(d.text);
      env.set(d.text, uniformValue(freeSym(d.text)));
      continue;
    }
    if (d.type === 'init_declarator') {
      const name = declaratorName(d.childForFieldName('declarator'));
      const valueNode = d.childForFieldName('value');
      if (!name || !valueNode) continue;
      const group = groupOf(valueNode, ctx);
      if (group) ctx.groups.set(name, group);
      if (valueNode.type === 'lambda_expression') ctx.lambdas.set(name, valueNode);
      const init =
        valueNode.type === 'initializer_list' || valueNode.type === 'argument_list'
          ? valueNode.namedChildren[0]
          : valueNode;
      const v = init ? evalExpr(init, env, ctx) : uniformValue(freeSym(name));
      env.set(name, bindOrigin(v, node));
      if (
        d.childForFieldName('declarator')?.type === 'reference_declarator' &&
        init &&
        (init.type === 'subscript_expression' || (init.type === 'pointer_expression' && init.child(0)?.type === '*'))
      )
        ctx.memoryRefs.add(name);
    } else {
      const name = declaratorName(d);
      if (name) env.set(name, uniformValue(freeSym(name)));
    }
  }
}

/** A variable defined from a thread-dependent value points at its definition. */
function bindOrigin(v: ThreadValue, statement: NodeView): ThreadValue {
  return isThreadDependent(v.sym) ? { sym: v.sym, origin: originOf(statement) } : v;
}

function condExpr(node: NodeView | null): NodeView | null {
  if (!node) return null;
  if (node.type === 'condition_clause' || node.type === 'parenthesized_expression') {
    const inner =
      node.childForFieldName('value') ?? node.namedChildren.filter((c) => c.type !== 'comment').pop() ?? null;
    return inner ?? node;
  }
  return node;
}

/** A branch site as the walk finds it, its syntax as views. */
interface SiteViews {
  construct: BranchConstruct;
  node: NodeView;
  conditionNode: NodeView;
  condition: ThreadValue;
  paths: Array<Omit<PathNodes, 'nodes'> & { nodes: NodeView[] }>;
}

function record(ctx: WalkContext, site: SiteViews): void {
  if (ctx.silent > 0) return;
  if (!isThreadDependent(site.condition.sym)) return;
  const { construct, node, conditionNode, condition, paths } = site;
  const guards = ctx.guards.slice(-MAX_GUARDS);
  ctx.sites.push({
    kernel: ctx.kernel,
    construct,
    node: node.node,
    conditionNode: conditionNode.node,
    condition,
    paths: paths.map((p) => ({ ...p, nodes: p.nodes.map((n) => n.node) })),
    guards,
  });
}

/** The innermost enclosing conditions a branch's verdict takes into account. */
const MAX_GUARDS = 3;

/** Walk `f` with `guard` in force (when it depends on the thread index). */
function guarded<T>(ctx: WalkContext, guard: Sym | null, f: () => T): T {
  if (!guard || !isThreadDependent(guard)) return f();
  ctx.guards.push(guard);
  try {
    return f();
  } finally {
    ctx.guards.pop();
  }
}

function negation(sym: Sym): Sym {
  return sym.op === 'unary' && sym.operator === '!' ? sym.arg : { op: 'unary', operator: '!', arg: sym };
}

function walkIf(node: NodeView, env: Env, ctx: WalkContext, construct: 'if' | 'else-if'): Sym | null {
  const conditionNode = condExpr(node.childForFieldName('condition'));
  const consequence = node.childForFieldName('consequence');
  const alternativeClause = node.childForFieldName('alternative');
  const alternative =
    alternativeClause?.type === 'else_clause'
      ? (alternativeClause.namedChildren.find((c) => c.type !== 'comment') ?? null)
      : alternativeClause;
  if (!conditionNode || !consequence) return null;
  const condition = evalExpr(conditionNode, env, ctx);
  const jump = alternative ? null : earlyExit(consequence);
  if (jump) {
    record(ctx, {
      construct: jump.type === 'return_statement' ? 'return' : jump.type === 'break_statement' ? 'break' : 'continue',
      node,
      conditionNode,
      condition,
      // the path that keeps running first: `laneActivity` describes it
      paths: [
        {
          label: jump.type === 'return_statement' ? 'rest of the function' : 'rest of the loop body',
          nodes: followingStatements(node, jump.type !== 'return_statement'),
        },
        {
          label: jump.type === 'return_statement' ? 'return' : jump.type === 'break_statement' ? 'break' : 'continue',
          nodes: [consequence],
        },
      ],
    });
  } else {
    record(ctx, {
      construct,
      node,
      conditionNode,
      condition,
      paths: [
        { label: 'then', nodes: [consequence] },
        { label: 'else', nodes: alternative ? [alternative] : [] },
      ],
    });
  }
  const thenEnv = new Map(env);
  guarded(ctx, condition.sym, () => walkStatement(consequence, thenEnv, ctx));
  const elseEnv = new Map(env);
  if (alternative) {
    guarded(ctx, negation(condition.sym), () => {
      if (alternative.type === 'if_statement') walkIf(alternative, elseEnv, ctx, 'else-if');
      else walkStatement(alternative, elseEnv, ctx);
    });
  }
  mergeInto(env, [thenEnv, elseEnv], condition, ctx);
  return jump ? negation(condition.sym) : null;
}

/** `return;`, `break;` or `continue;`, alone or alone in braces. */
function earlyExit(node: NodeView): NodeView | null {
  if (node.type === 'return_statement' || node.type === 'break_statement' || node.type === 'continue_statement')
    return node;
  if (node.type === 'compound_statement') {
    const statements = node.namedChildren.filter((c) => c.type !== 'comment');
    if (statements.length === 1 && statements[0]) return earlyExit(statements[0]);
  }
  return null;
}

/** The statements after `node` up to the end of the function (or of the loop body, for break/continue). */
function followingStatements(node: NodeView, stopAtLoop: boolean): NodeView[] {
  const out: NodeView[] = [];
  let n: NodeView = node;
  while (n.parent) {
    for (let s = n.nextNamedSibling; s; s = s.nextNamedSibling) if (s.type !== 'comment') out.push(s);
    const parent: NodeView = n.parent;
    if (parent.type === 'function_definition') break;
    if (stopAtLoop && LOOP_TYPES.has(parent.type)) break;
    n = parent;
  }
  return out;
}

/**
 * Join the environments of the paths of a branch. Under a lane-varying
 * condition a variable assigned differently on the paths becomes lane-varying
 * (control dependence); under a warp-uniform one, at least warp-uniform.
 */
function mergeInto(env: Env, branches: Env[], condition: ThreadValue, ctx?: WalkContext): void {
  const names = new Set<string>();
  for (const b of branches) for (const k of b.keys()) names.add(k);
  const condKind = isThreadDependent(condition.sym) ? dependenceKind(condition.sym) : 'uniform';
  for (const name of names) {
    const values = branches.map((b) => b.get(name) ?? env.get(name)).filter((v): v is ThreadValue => !!v);
    if (values.length === 0) continue;
    const same = values.every((v) => symKey(v.sym) === symKey(values[0].sym));
    if (same) {
      if (env.has(name) || branches.every((b) => b.has(name))) env.set(name, values[0]);
      continue;
    }
    if (!env.has(name)) continue; // declared inside one path only
    // The two paths of an `if` on a condition that is not per-lane data (a bounds guard's
    // `count++`): each lane holds its own path's value, which is computed lane by lane.
    if (
      ctx &&
      branches.length === 2 &&
      values.length === 2 &&
      condKind !== 'uniform' &&
      !ctx.shared.has(name) &&
      !symFacts(condition.sym).opaqueLane &&
      symSize(condition.sym) + symSize(values[0].sym) + symSize(values[1].sym) <= MAX_SELECT_SIZE
    ) {
      env.set(name, {
        sym: { op: 'select', cond: condition.sym, then: values[0].sym, else: values[1].sym },
        origin: firstOrigin(...values) ?? condition.origin,
      });
      continue;
    }
    env.set(name, joinValues(name, values, condKind === 'uniform' ? null : condition, condKind));
  }
}

/** A joined value is kept as a `select` of its paths' values up to this size (nodes), else summarized by its kind. */
const MAX_SELECT_SIZE = 48;

/** Nodes in a value, counted up to a little over MAX_SELECT_SIZE. */
function symSize(sym: Sym, budget = MAX_SELECT_SIZE + 1): number {
  switch (sym.op) {
    case 'binary': {
      const left = symSize(sym.left, budget - 1);
      return left >= budget - 1 ? budget : 1 + left + symSize(sym.right, budget - 1 - left);
    }
    case 'unary':
      return 1 + symSize(sym.arg, budget - 1);
    case 'select': {
      const c = symSize(sym.cond, budget - 1);
      const t = c >= budget - 1 ? 0 : symSize(sym.then, budget - 1 - c);
      return Math.min(budget, 1 + c + t + (c + t >= budget - 1 ? 0 : symSize(sym.else, budget - 1 - c - t)));
    }
    default:
      return 1;
  }
}

/** What a thread's array holds after a store: the value stored, joined with what it held. */
function storeInto(name: string, held: ThreadValue | undefined, stored: ThreadValue): ThreadValue {
  if (!held || !isThreadDependent(held.sym))
    return isThreadDependent(stored.sym)
      ? {
          sym: opaqueSym(dependenceKind(stored.sym) === 'warpUniform' ? 'warpUniform' : 'laneVarying', name),
          origin: stored.origin,
        }
      : (held ?? stored);
  if (!isThreadDependent(stored.sym)) return held;
  return joinValues(name, [held, stored], null, 'uniform');
}

function joinValues(
  name: string,
  values: ThreadValue[],
  condition: ThreadValue | null,
  condKind: DependenceKind,
): ThreadValue {
  const kinds = values.map((v) => dependenceKind(v.sym));
  const origin = firstOrigin(...values) ?? condition?.origin ?? null;
  const laneish =
    kinds.some((k) => k === 'laneVarying' || k === 'globalIndex') ||
    condKind === 'laneVarying' ||
    condKind === 'globalIndex';
  if (laneish) return { sym: opaqueSym('laneVarying', name), origin };
  if (kinds.some((k) => k === 'warpUniform') || condKind === 'warpUniform')
    return { sym: opaqueSym('warpUniform', name), origin };
  return uniformValue(freeSym(name));
}

// --- loops -----------------------------------------------------------------

function walkLoop(node: NodeView, env: Env, ctx: WalkContext): void {
  const body = node.childForFieldName('body');
  if (node.type === 'for_statement') {
    const init = node.childForFieldName('initializer');
    if (init) {
      if (init.type === 'declaration') walkDeclaration(init, env, ctx);
      else evalExpr(init, env, ctx);
    }
  }
  if (node.type === 'for_range_loop') {
    const right = node.childForFieldName('right');
    if (right) evalExpr(right, env, ctx);
  }
  const conditionNode = condExpr(node.childForFieldName('condition'));
  const update = node.childForFieldName('update');
  const syntax = loopSyntax(node, body, update, conditionNode, ctx);
  const assigned = syntax.assigned;
  const before = new Map(env);
  const sitesBefore = ctx.sites.length;

  // Loop-head values: counters and additive offsets keep their shape; anything else is joined over a first pass.
  const head = new Map(env);
  const updates = new Map<string, LoopInfo['update']>();
  for (const name of assigned) updates.set(name, additiveOrScalingUpdate(syntax.assignments.get(name) ?? [], env, ctx));
  const counters = new Map<string, Extract<Sym, { op: 'free' }>>();
  const shaped = new Set<string>();
  for (const name of assigned) {
    const prior = env.get(name);
    const u = updates.get(name);
    if (!prior || !u) continue;
    if (!isThreadDependent(prior.sym)) {
      const sym = freeSym(name, { role: 'counter', init: prior.sym, cond: null, update: u }) as Extract<
        Sym,
        { op: 'free' }
      >;
      counters.set(name, sym);
      head.set(name, uniformValue(sym));
      shaped.add(name);
    } else if (u.operator === '+' || u.operator === '-') {
      const offset = freeSym(`${name} offset`, {
        role: 'offset',
        init: ZERO,
        cond: null,
        update: { operator: '+', amount: u.amount },
      });
      head.set(name, { sym: binary(u.operator, prior.sym, offset), origin: prior.origin });
      shaped.add(name);
    }
  }
  const unshaped = [...assigned].filter((n) => env.has(n) && !shaped.has(n));
  if (unshaped.length > 0) {
    const probe = new Map(head);
    ctx.silent++;
    if (body) walkStatement(body, probe, ctx);
    if (update) evalExpr(update, probe, ctx);
    ctx.silent--;
    for (const name of unshaped) {
      const a = head.get(name)!;
      const b = probe.get(name);
      if (b && symKey(a.sym) !== symKey(b.sym)) head.set(name, joinValues(name, [a, b], null, 'uniform'));
    }
  }
  for (const [k, v] of head) env.set(k, v);

  let condition: ThreadValue | null = null;
  if (conditionNode) {
    condition = evalExpr(conditionNode, env, ctx);
    for (const sym of counters.values()) {
      if (sym.loop && !isThreadDependent(condition.sym)) sym.loop.cond = condition.sym;
    }
    record(ctx, {
      construct: 'loop',
      node,
      conditionNode,
      condition,
      paths: [
        { label: 'one more iteration', nodes: [body, update].filter((n): n is NodeView => !!n) },
        { label: 'leave the loop', nodes: [] },
      ],
    });
  }
  guarded(ctx, condition?.sym ?? null, () => {
    if (body) walkStatement(body, env, ctx);
    if (update) evalExpr(update, env, ctx);
  });

  // After the loop: what changed in it is joined with what it was before. When the lanes of a
  // warp leave together (a uniform or warp-uniform condition, no thread-dependent exit inside), a
  // counter or an index stepped by a uniform amount keeps its shape: `i` after
  // `for (; i < roundDown(n, 32); i += 32)` is still the lane's own index, some steps on.
  const condKind = condition && isThreadDependent(condition.sym) ? dependenceKind(condition.sym) : 'uniform';
  const together = (condKind === 'uniform' || condKind === 'warpUniform') && !hasThreadDependentExit(ctx, sitesBefore);
  for (const name of assigned) {
    const a = before.get(name);
    const b = env.get(name);
    if (!a || !b) continue;
    if (together && shaped.has(name)) {
      env.set(name, head.get(name)!);
      continue;
    }
    env.set(name, joinValues(name, [a, b], condKind === 'uniform' ? null : condition, condKind));
  }
}

/** A `break` or `return` on a thread-dependent condition among the sites recorded since `from` (a loop's own). */
function hasThreadDependentExit(ctx: WalkContext, from: number): boolean {
  for (let i = from; i < ctx.sites.length; i++)
    if (ctx.sites[i].construct === 'break' || ctx.sites[i].construct === 'return') return true;
  return ctx.silent > 0;
}

/** One assignment to a variable in a loop: `name++`, `name op= amount`, `name = name op amount`, or another kind (`other`). */
type LoopAssignment = { operator: NonNullable<LoopInfo['update']>['operator']; amount: NodeView | 'one' } | 'other';

interface LoopSyntax {
  /** The names assigned anywhere in the body, update or condition. */
  assigned: Set<string>;
  /** Each name's assignments in the body and update, in order. */
  assignments: Map<string, LoopAssignment[]>;
}

/**
 * The assignments of a loop, read from its syntax once per analysis: a loop
 * is walked again for each pass of the loops around it and each call of its
 * function, and reading the syntax tree is what costs.
 */
function loopSyntax(
  node: NodeView,
  body: NodeView | null,
  update: NodeView | null,
  condition: NodeView | null,
  ctx: WalkContext,
): LoopSyntax {
  let syntax = ctx.loops.get(node.id);
  if (!syntax) {
    syntax = { assigned: new Set(), assignments: new Map() };
    for (const n of [body, update]) if (n) collectAssignments(n, syntax);
    if (condition) collectAssignments(condition, { assigned: syntax.assigned, assignments: new Map() });
    ctx.loops.set(node.id, syntax);
  }
  return syntax;
}

function recordAssignment(into: LoopSyntax, name: string, a: LoopAssignment): void {
  into.assigned.add(name);
  const list = into.assignments.get(name);
  if (list) list.push(a);
  else into.assignments.set(name, [a]);
}

function collectAssignments(n: NodeView, into: LoopSyntax): void {
  if (n.type === 'update_expression') {
    const arg = n.childForFieldName('argument');
    if (arg?.type === 'identifier')
      recordAssignment(into, arg.text, { operator: n.text.includes('++') ? '+' : '-', amount: 'one' });
  } else if (n.type === 'assignment_expression') {
    const left = n.childForFieldName('left');
    const right = n.childForFieldName('right');
    if (left?.type === 'identifier') {
      const name = left.text;
      if (!right) into.assigned.add(name);
      else {
        const op = n.childForFieldName('operator')?.type ?? '=';
        let operator = op === '=' ? null : op.slice(0, -1);
        let amount: NodeView | null = right;
        if (!operator && right.type === 'binary_expression' && right.childForFieldName('left')?.text === name) {
          operator = right.childForFieldName('operator')?.type ?? null;
          amount = right.childForFieldName('right');
        }
        recordAssignment(
          into,
          name,
          operator && ['+', '-', '*', '/', '<<', '>>'].includes(operator) && amount
            ? { operator: operator as NonNullable<LoopInfo['update']>['operator'], amount }
            : 'other',
        );
      }
    }
  }
  const children = n.namedChildren;
  for (let k = 0; k < children.length; k++) collectAssignments(children[k], into);
}

/**
 * When every assignment to a name in the loop is `name op= uniform` (or
 * `name = name op uniform`, `name++`) with one operator, that update; else null.
 */
function additiveOrScalingUpdate(assignments: LoopAssignment[], env: Env, ctx: WalkContext): LoopInfo['update'] {
  const found: Array<NonNullable<LoopInfo['update']>> = [];
  let other = false;
  for (const a of assignments) {
    if (a === 'other') {
      other = true;
      continue;
    }
    if (a.amount === 'one') {
      found.push({ operator: a.operator, amount: constant(1) });
      continue;
    }
    // An amount read from a variable of the loop body (`n += __popc(flags)`, flags set in the body)
    // is known only there: not a uniform step.
    if (mentionsLocalOf(a.amount, env, ctx)) {
      other = true;
      continue;
    }
    ctx.silent++;
    const amount = evalExpr(a.amount, new Map(env), ctx);
    ctx.silent--;
    if (!isThreadDependent(amount.sym)) found.push({ operator: a.operator, amount: amount.sym });
    else other = true;
  }
  if (other || found.length !== 1) return null;
  return found[0];
}

/** Whether `node` reads a plain name that is neither in `env` nor a known constant (a variable declared later, in a loop body). */
function mentionsLocalOf(node: NodeView, env: Env, ctx: WalkContext): boolean {
  if (node.type === 'identifier')
    return (
      !env.has(node.text) &&
      node.text !== 'warpSize' &&
      ctx.lookup(node.text) === null &&
      !CONSTANT_NAME.test(node.text) &&
      !ctx.functions.get(node.text) &&
      !/^(threadIdx|blockIdx|blockDim|gridDim)$/.test(node.text)
    );
  if (node.type === 'field_expression')
    return (
      mentionsLocalOf(node.childForFieldName('argument') ?? node, env, ctx) &&
      node.childForFieldName('argument') !== null
    );
  if (node.type === 'call_expression')
    return (node.childForFieldName('arguments')?.namedChildren ?? []).some((c) => mentionsLocalOf(c, env, ctx));
  return node.namedChildren.some((c) => mentionsLocalOf(c, env, ctx));
}

// --- switch ----------------------------------------------------------------

function walkSwitch(node: NodeView, env: Env, ctx: WalkContext): void {
  const conditionNode = condExpr(node.childForFieldName('condition'));
  const body = node.childForFieldName('body');
  if (!conditionNode || !body) return;
  const condition = evalExpr(conditionNode, env, ctx);
  const cases = body.namedChildren.filter((c) => c.type === 'case_statement');
  const paths: SiteViews['paths'] = [];
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    const valueNode = c.childForFieldName('value');
    let value: number[] | null = null;
    if (valueNode) {
      ctx.silent++;
      const v = evalExpr(valueNode, new Map(env), ctx);
      ctx.silent--;
      value = v.sym.op === 'const' ? [v.sym.value] : [];
    }
    // the statements this case runs: its own and the following cases' until a break (fall-through)
    const nodes: NodeView[] = [];
    for (let j = i; j < cases.length; j++) {
      const statements = caseStatements(cases[j]);
      nodes.push(...statements);
      if (statements.some((s) => s.type === 'break_statement' || s.type === 'return_statement')) break;
    }
    paths.push({ label: valueNode ? `case ${valueNode.text}` : 'default', nodes, caseValues: value });
  }
  if (!cases.some((c) => !c.childForFieldName('value'))) paths.push({ label: 'no case', nodes: [], caseValues: null });
  record(ctx, { construct: 'switch', node, conditionNode, condition, paths });
  const envs: Env[] = [];
  for (const c of cases) {
    const e = new Map(env);
    for (const s of caseStatements(c)) walkStatement(s, e, ctx);
    envs.push(e);
  }
  envs.push(new Map(env));
  mergeInto(env, envs, condition);
}

function caseStatements(c: NodeView): NodeView[] {
  const value = c.childForFieldName('value');
  return c.namedChildren.filter((s) => s.type !== 'comment' && (!value || s.id !== value.id));
}

// --- expressions -----------------------------------------------------------

const ATOMIC = /^atomic(Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(_block|_system)?$/;
const BLOCK_BARRIER = /^(__syncthreads(_count|_and|_or)?|sync|barrier_sync|__barrier_sync)$/;
const WARP_UNIFORM_INTRINSICS: ReadonlySet<string> = new Set([
  '__ballot_sync',
  '__any_sync',
  '__all_sync',
  '__ballot',
  '__any',
  '__all',
  '__activemask',
  '__reduce_add_sync',
  '__reduce_min_sync',
  '__reduce_max_sync',
  '__reduce_and_sync',
  '__reduce_or_sync',
  '__reduce_xor_sync',
  '__match_all_sync',
  '__syncthreads_count',
  '__syncthreads_and',
  '__syncthreads_or',
]);
const WARP_VOTE_NAME = /^(?:\w*_)?(?:ballot|BALLOT|Ballot)(?:_sync|_SYNC|Sync)?$/;
const SHUFFLE_RELATIVE: ReadonlySet<string> = new Set([
  '__shfl_up_sync',
  '__shfl_down_sync',
  '__shfl_xor_sync',
  '__shfl_up',
  '__shfl_down',
  '__shfl_xor',
]);
/** `idx_t(blockIdx.x)`, `int64_t(n)`: a type named like a typedef used as a function-style cast. */
const FUNCTION_STYLE_CAST = /^(?:\w+_t|int|unsigned|long|short|char|float|double|bool|size_t)$/;
const PASS_THROUGH: ReadonlySet<string> = new Set([
  'static_cast',
  'reinterpret_cast',
  'const_cast',
  '__float2int_rz',
  '__float2int_rn',
  '__ldg',
  'int',
  'unsigned',
]);

function evalExpr(node: NodeView, env: Env, ctx: WalkContext): ThreadValue {
  switch (node.type) {
    case 'number_literal':
      return uniformValue(numberLiteral(node.text));
    case 'true':
      return uniformValue(constant(1));
    case 'false':
    case 'null':
    case 'nullptr':
      return uniformValue(constant(0));
    case 'char_literal':
      return uniformValue(constant(node.text.length === 3 ? node.text.charCodeAt(1) : 0));
    case 'identifier':
      return identifierValue(node, env, ctx);
    case 'qualified_identifier': {
      // `Traits::kTile`, `Config::N`: a static member or an enumerator, fixed at compile time.
      const v = ctx.lookup(node.text) ?? ctx.lookup(node.text.slice(node.text.lastIndexOf(':') + 1));
      return uniformValue(v !== null ? constant(v) : fixedSym(node.text));
    }
    case 'field_expression':
      return fieldValue(node, env, ctx);
    case 'parenthesized_expression': {
      const inner = node.namedChildren.find((c) => c.type !== 'comment');
      return inner ? evalExpr(inner, env, ctx) : uniformValue(freeSym(node.text));
    }
    case 'cast_expression': {
      const value = node.childForFieldName('value');
      return value ? evalExpr(value, env, ctx) : uniformValue(freeSym(node.text));
    }
    case 'binary_expression':
      return binaryValue(node, env, ctx);
    case 'unary_expression': {
      const arg = node.childForFieldName('argument');
      const operator = node.childForFieldName('operator')?.type ?? node.child(0)?.type ?? '+';
      if (!arg) return uniformValue(freeSym(node.text));
      const v = evalExpr(arg, env, ctx);
      return {
        sym: v.sym.op === 'const' ? constant(applyUnary(operator, v.sym.value)) : { op: 'unary', operator, arg: v.sym },
        origin: v.origin,
      };
    }
    case 'update_expression': {
      const arg = node.childForFieldName('argument');
      if (!arg) return uniformValue(freeSym(node.text));
      const old = evalExpr(arg, env, ctx);
      if (arg.type === 'identifier' && env.has(arg.text)) {
        const next = binary(node.text.includes('++') ? '+' : '-', old.sym, constant(1));
        env.set(arg.text, { sym: next, origin: old.origin });
      }
      return old;
    }
    case 'assignment_expression':
      return assignmentValue(node, env, ctx);
    case 'conditional_expression':
      return conditionalValue(node, env, ctx);
    case 'call_expression':
      return callValue(node, env, ctx);
    case 'subscript_expression': {
      const array = node.childForFieldName('argument');
      const indices = node.childForFieldName('indices');
      if (array) evalExpr(array, env, ctx);
      const index = indices?.namedChildren.find((c) => c.type !== 'comment');
      const iv = index ? evalExpr(index, env, ctx) : uniformValue(ZERO);
      const av = array ? evalExpr(array, env, ctx) : uniformValue(ZERO);
      return loadValue(node, [iv, av]);
    }
    case 'pointer_expression': {
      const arg = node.childForFieldName('argument');
      const v = arg ? evalExpr(arg, env, ctx) : uniformValue(ZERO);
      const operator = node.child(0)?.type;
      return operator === '*' ? loadValue(node, [v]) : v;
    }
    case 'comma_expression': {
      const left = node.childForFieldName('left');
      const right = node.childForFieldName('right');
      if (left) evalExpr(left, env, ctx);
      return right ? evalExpr(right, env, ctx) : uniformValue(freeSym(node.text));
    }
    case 'sizeof_expression':
    case 'alignof_expression':
      return uniformValue(fixedSym(node.text));
    case 'gnu_asm_expression':
      asmValue(node, env, ctx);
      return uniformValue(freeSym('asm'));
    case 'lambda_expression': {
      // Its branches, with what it captures as it is here and its parameters unknown (a call of it
      // through a local walks it again with the arguments).
      const body = node.childForFieldName('body');
      if (body) {
        const inner = new Map(env);
        for (const p of parameterNames(node)) if (p) inner.set(p, uniformValue(freeSym(p)));
        const saved = ctx.returns;
        ctx.returns = [];
        walkStatement(body, inner, ctx);
        ctx.returns = saved;
      }
      return uniformValue(freeSym('lambda'));
    }
    default: {
      // Unknown syntax: as lane-varying as anything it mentions.
      const parts: ThreadValue[] = [];
      for (const c of node.namedChildren) if (c && c.type !== 'comment') parts.push(evalExpr(c, env, ctx));
      return joinParts(node, parts);
    }
  }
}

function joinParts(node: NodeView, parts: ThreadValue[]): ThreadValue {
  const dependent = parts.filter((p) => isThreadDependent(p.sym));
  if (dependent.length === 0) return uniformValue(freeSym(node.text));
  const kinds = dependent.map((p) => dependenceKind(p.sym));
  const kind = kinds.every((k) => k === 'warpUniform') ? 'warpUniform' : 'laneVarying';
  return { sym: opaqueSym(kind, node.text), origin: firstOrigin(...dependent) };
}

/** A load: lane-varying when its address is, warp-uniform when its address is, else a uniform unknown. */
function loadValue(node: NodeView, addressParts: ThreadValue[]): ThreadValue {
  const dependent = addressParts.filter((p) => isThreadDependent(p.sym));
  if (dependent.length === 0) return uniformValue(freeSym(node.text));
  const kind = dependent.every((p) => dependenceKind(p.sym) === 'warpUniform') ? 'warpUniform' : 'laneVarying';
  return { sym: opaqueSym(kind, node.text), origin: originOf(node) };
}

function numberLiteral(text: string): Sym {
  const t = text
    .replace(/'/g, '')
    .replace(/(?<![xX][0-9a-fA-F]*)[uUlLfF]+$/, '')
    .replace(/[uUlL]+$/, '');
  const n = /^0[xX]/.test(t)
    ? parseInt(t, 16)
    : /^0[bB]/.test(t)
      ? parseInt(t.slice(2), 2)
      : /^0[0-7]+$/.test(t)
        ? parseInt(t, 8)
        : Number(t);
  return Number.isFinite(n) ? constant(n) : freeSym(text);
}

function identifierValue(node: NodeView, env: Env, ctx: WalkContext): ThreadValue {
  const name = node.text;
  const bound = env.get(name);
  if (bound) return bound;
  if (name === 'warpSize') return uniformValue(constant(32));
  const c = ctx.lookup(name);
  if (c !== null) return uniformValue(constant(c));
  // A name declared nowhere in view: a macro or constant of another file (`TILE_SIZE`, `kWarpSize`)
  // is fixed at compile time; anything else (a global variable) is data.
  const fresh = uniformValue(CONSTANT_NAME.test(name) ? fixedSym(name) : freeSym(name));
  env.set(name, fresh);
  return fresh;
}

/** How constants and macros are named: `TILE_SIZE`, `kWarpSize`. */
const CONSTANT_NAME = /^(?:[A-Z][A-Z0-9_]*[A-Z0-9]|k[A-Z]\w*)$/;

const BUILTIN_VECTORS: ReadonlySet<string> = new Set(['threadIdx', 'blockIdx', 'blockDim', 'gridDim']);

function fieldValue(node: NodeView, env: Env, ctx: WalkContext): ThreadValue {
  const argument = node.childForFieldName('argument');
  const field = node.childForFieldName('field')?.text ?? '';
  if (argument && BUILTIN_VECTORS.has(argument.text) && (field === 'x' || field === 'y' || field === 'z')) {
    const op = argument.text as 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim';
    if (op === 'threadIdx' && field !== 'x') ctx.multiDimensional = true;
    return { sym: { op, dim: field }, origin: op === 'threadIdx' ? originOf(node) : null };
  }
  // block.thread_index().x, grid.block_index().x
  if (argument?.type === 'call_expression' && (field === 'x' || field === 'y' || field === 'z')) {
    const callee = argument.childForFieldName('function');
    const method =
      callee?.type === 'field_expression' ? callee.childForFieldName('field')?.text : callee?.text.replace(/^.*::/, '');
    if (method === 'thread_index') {
      if (field !== 'x') ctx.multiDimensional = true;
      return { sym: { op: 'threadIdx', dim: field }, origin: originOf(node) };
    }
    if (method === 'group_index' || method === 'block_index') return uniformValue({ op: 'blockIdx', dim: field });
    if (method === 'group_dim' || method === 'dim_threads') return uniformValue({ op: 'blockDim', dim: field });
  }
  if (!argument) return uniformValue(freeSym(node.text));
  const base = evalExpr(argument, env, ctx);
  if (!isThreadDependent(base.sym)) return uniformValue(freeSym(node.text));
  return {
    sym: opaqueSym(dependenceKind(base.sym) === 'warpUniform' ? 'warpUniform' : 'laneVarying', node.text),
    origin: base.origin,
  };
}

function binaryValue(node: NodeView, env: Env, ctx: WalkContext): ThreadValue {
  const leftNode = node.childForFieldName('left');
  const rightNode = node.childForFieldName('right');
  const operator = node.childForFieldName('operator')?.type ?? '';
  if (!leftNode || !rightNode) return uniformValue(freeSym(node.text));
  const left = evalExpr(leftNode, env, ctx);
  const right = evalExpr(rightNode, env, ctx);
  if ((operator === '&&' || operator === '||') && hasSideEffectsOrLoads(rightNode)) {
    record(ctx, {
      construct: 'short-circuit',
      node,
      conditionNode: leftNode,
      condition: left,
      paths: [
        { label: 'evaluate the right operand', nodes: [rightNode] },
        { label: 'skip it', nodes: [] },
      ],
    });
  }
  return { sym: binary(operator, left.sym, right.sym), origin: firstOrigin(left, right) };
}

function hasSideEffectsOrLoads(node: NodeView): boolean {
  if (['call_expression', 'subscript_expression', 'assignment_expression', 'update_expression'].includes(node.type))
    return true;
  if (node.type === 'pointer_expression' && node.child(0)?.type === '*') return true;
  if (node.type === 'field_expression' && node.text.includes('->')) return true;
  return node.namedChildren.some(hasSideEffectsOrLoads);
}

function assignmentValue(node: NodeView, env: Env, ctx: WalkContext): ThreadValue {
  const left = node.childForFieldName('left');
  const right = node.childForFieldName('right');
  const op = node.childForFieldName('operator')?.type ?? '=';
  if (!left || !right) return uniformValue(freeSym(node.text));
  const rv = evalExpr(right, env, ctx);
  if (left.type !== 'identifier') {
    // a store: evaluate the address for the branches it may hold
    if (left.type !== 'field_expression') evalExpr(left, env, ctx);
    const array = left.type === 'subscript_expression' ? left.childForFieldName('argument') : null;
    if (array?.type === 'identifier' && ctx.arrays.has(array.text)) {
      // An element of a thread's own array: what the array holds now includes this value (at this index).
      const index = left.childForFieldName('indices')?.namedChildren.find((c) => c.type !== 'comment');
      const stored = rv;
      const iv = index ? silently(ctx, () => evalExpr(index, env, ctx)) : uniformValue(ZERO);
      env.set(
        array.text,
        storeInto(
          array.text,
          env.get(array.text),
          isThreadDependent(stored.sym) || !isThreadDependent(iv.sym)
            ? stored
            : {
                sym: opaqueSym(dependenceKind(iv.sym) === 'warpUniform' ? 'warpUniform' : 'laneVarying', left.text),
                origin: iv.origin,
              },
        ),
      );
    }
    return rv;
  }
  const name = left.text;
  // A store through a reference to memory: what the lanes read from it stays what the memory holds.
  if (ctx.memoryRefs.has(name)) return rv;
  let value = rv;
  if (op !== '=') {
    const old = evalExpr(left, env, ctx);
    value = { sym: binary(op.slice(0, -1), old.sym, rv.sym), origin: firstOrigin(rv, old) };
  }
  if (env.has(name) || !ctx.lookup(name)) env.set(name, bindOrigin(value, enclosingStatement(node)));
  return value;
}

function conditionalValue(node: NodeView, env: Env, ctx: WalkContext): ThreadValue {
  const conditionNode = node.childForFieldName('condition');
  const consequence = node.childForFieldName('consequence');
  const alternative = node.childForFieldName('alternative');
  if (!conditionNode || !consequence || !alternative) return uniformValue(freeSym(node.text));
  const condition = evalExpr(conditionNode, env, ctx);
  record(ctx, {
    construct: 'ternary',
    node,
    conditionNode: condExpr(conditionNode) ?? conditionNode,
    condition,
    paths: [
      { label: 'true', nodes: [consequence] },
      { label: 'false', nodes: [alternative] },
    ],
  });
  const a = evalExpr(consequence, env, ctx);
  const b = evalExpr(alternative, env, ctx);
  return { sym: { op: 'select', cond: condition.sym, then: a.sym, else: b.sym }, origin: firstOrigin(condition, a, b) };
}

function calleeName(fn: NodeView | null): { name: string; object: NodeView | null } {
  if (!fn) return { name: '', object: null };
  if (fn.type === 'field_expression')
    return { name: fn.childForFieldName('field')?.text ?? '', object: fn.childForFieldName('argument') };
  if (fn.type === 'template_function') return calleeName(fn.childForFieldName('name'));
  if (fn.type === 'qualified_identifier') {
    const text = fn.text.replace(/<[^<>]*>/g, '');
    return { name: text.slice(text.lastIndexOf(':') + 1), object: null };
  }
  return { name: fn.text, object: null };
}

function groupOf(node: NodeView, ctx: WalkContext): GroupInfo | null {
  if (node.type === 'identifier') return ctx.groups.get(node.text) ?? null;
  if (node.type !== 'call_expression') return null;
  const { name } = calleeName(node.childForFieldName('function'));
  if (name === 'this_thread_block') return { kind: 'block', size: null };
  if (name === 'this_grid') return { kind: 'grid', size: null };
  if (name === 'coalesced_threads') return { kind: 'coalesced', size: null };
  if (name === 'tiled_partition') {
    const template = /tiled_partition\s*<\s*(\d+)\s*>/.exec(node.text);
    const args = node.childForFieldName('arguments')?.namedChildren ?? [];
    const size = template
      ? Number(template[1])
      : args[1]
        ? Number(ctx.lookup(args[1].text) ?? (Number(args[1].text) || NaN))
        : NaN;
    return { kind: 'tile', size: Number.isFinite(size) ? size : null };
  }
  return null;
}

function linearIndexSym(): Sym {
  const x: Sym = { op: 'threadIdx', dim: 'x' };
  const y: Sym = { op: 'threadIdx', dim: 'y' };
  const z: Sym = { op: 'threadIdx', dim: 'z' };
  const dx: Sym = { op: 'blockDim', dim: 'x' };
  const dy: Sym = { op: 'blockDim', dim: 'y' };
  return binary('+', x, binary('*', dx, binary('+', y, binary('*', dy, z))));
}

function callValue(node: NodeView, env: Env, ctx: WalkContext): ThreadValue {
  const fn = node.childForFieldName('function');
  const argNodes = (node.childForFieldName('arguments')?.namedChildren ?? []).filter((a) => a.type !== 'comment');
  const { name, object } = calleeName(fn);
  const args = argNodes.map((a) => evalExpr(a, env, ctx));
  const origin = originOf(node);

  // A barrier: every thread of the block sees the same value in a `__shared__` scalar after it.
  if (
    BLOCK_BARRIER.test(name) &&
    (!object || /^(block|cta|tb)$/i.test(object.text) || groupOf(object, ctx)?.kind === 'block')
  ) {
    for (const s of ctx.shared) if (env.has(s)) env.set(s, uniformValue(freeSym(s)));
  }

  // cooperative groups
  const group = object ? groupOf(object, ctx) : null;
  if (
    group ||
    (object && /^(thread_rank|meta_group_rank|shfl|shfl_down|shfl_up|shfl_xor|any|all|ballot)$/.test(name))
  ) {
    const g = group ?? { kind: 'other', size: null };
    if (name === 'thread_rank') {
      if (g.kind === 'block') return { sym: linearIndexSym(), origin };
      if (g.kind === 'tile' && g.size) return { sym: binary('%', linearIndexSym(), constant(g.size)), origin };
      return { sym: opaqueSym('laneVarying', node.text), origin };
    }
    if (name === 'meta_group_rank' && g.kind === 'tile' && g.size)
      return { sym: binary('/', linearIndexSym(), constant(g.size)), origin };
    if (name === 'size' || name === 'num_threads' || name === 'meta_group_size' || name === 'group_dim')
      return uniformValue(freeSym(node.text));
    if (/^(any|all|ballot)$/.test(name)) return tileCollective(g, args, node, origin);
    if (name === 'shfl')
      return shuffleBroadcast(args[0], args[1], g.kind === 'tile' && g.size ? g.size : 32, node, origin);
    if (/^shfl_(down|up|xor)$/.test(name))
      return isThreadDependent(args[0]?.sym ?? ZERO)
        ? { sym: opaqueSym('laneVarying', node.text), origin }
        : (args[0] ?? uniformValue(ZERO));
  }
  if (name === 'reduce' && argNodes[0]) {
    const g = groupOf(argNodes[0], ctx);
    if (g) return tileCollective(g, args.slice(1), node, origin);
  }

  if (
    (PASS_THROUGH.has(name) ||
      (args.length === 1 && !object && FUNCTION_STYLE_CAST.test(name) && !ctx.functions.get(name))) &&
    args.length >= 1
  )
    return args[0];
  if (name === 'min' || name === 'max' || name === 'umin' || name === 'umax') {
    if (args.length === 2)
      return { sym: binary(name.replace(/^u/, ''), args[0].sym, args[1].sym), origin: firstOrigin(...args) };
  }
  if (ATOMIC.test(name)) return { sym: opaqueSym('laneVarying', node.text), origin };
  // A vote the file cannot see defined (`BALLOT(x)`, a macro set when the kernel is compiled at run
  // time, `warp_ballot(x)`): named for what it is, it gives every lane of the warp the same value.
  if (WARP_UNIFORM_INTRINSICS.has(name) || (WARP_VOTE_NAME.test(name) && !ctx.functions.get(name))) {
    const dependent = args.some((a) => isThreadDependent(a.sym));
    if (name === '__activemask') return { sym: opaqueSym('warpUniform', node.text), origin };
    return dependent
      ? { sym: opaqueSym('warpUniform', node.text), origin: firstOrigin(...args) ?? origin }
      : uniformValue(freeSym(node.text));
  }
  if (name === '__match_any_sync')
    return isThreadDependent(args[1]?.sym ?? ZERO)
      ? { sym: opaqueSym('laneVarying', node.text), origin }
      : uniformValue(freeSym(node.text));
  if (name === '__shfl_sync' || name === '__shfl') {
    const hasMask = name === '__shfl_sync';
    const value = args[hasMask ? 1 : 0];
    const src = args[hasMask ? 2 : 1];
    const widthArg = args[hasMask ? 3 : 2];
    const width = widthArg?.sym.op === 'const' ? widthArg.sym.value : 32;
    return shuffleBroadcast(value, src, width, node, origin);
  }
  if (SHUFFLE_RELATIVE.has(name)) {
    const value = args[name.endsWith('_sync') ? 1 : 0];
    return value && isThreadDependent(value.sym)
      ? { sym: opaqueSym('laneVarying', node.text), origin: value.origin ?? origin }
      : (value ?? uniformValue(ZERO));
  }
  if (name === '__laneid') return { sym: { op: 'laneId' }, origin };

  // a function defined in this file (a member one through an object, a lambda bound to a local):
  // evaluate its body with the arguments bound
  const lambda = !object ? ctx.lambdas.get(name) : undefined;
  const candidates = lambda ? [lambda] : calleeDefinitions(ctx, name, object !== null);
  if (candidates.length > 0 && ctx.callStack.length < 8 && !ctx.callStack.includes(name)) {
    // Members of several classes share a name (`GetElement` of each loader): each is walked, and their results joined.
    const results = candidates
      .map((definition) => walkCallee(definition, node, fn, argNodes, args, name, env, ctx))
      .filter((r): r is ThreadValue => r !== null);
    if (results.length === candidates.length) {
      if (results.every((r) => symKey(r.sym) === symKey(results[0].sym))) return results[0];
      return joinValues(name, results, null, 'uniform');
    }
  }
  // anything else (math functions, unknown callees): as lane-varying as its arguments. A thread's
  // own array passed to it (`BlockLoad(...).Load(ptr, vals)`) comes back holding the thread's data.
  argNodes.forEach((a) => {
    const array = arrayArgument(a);
    if (array && ctx.arrays.has(array) && env.has(array) && !MATH_LIKE.test(name))
      env.set(array, { sym: opaqueSym('laneVarying', array), origin });
  });
  const dependent = args.filter((a) => isThreadDependent(a.sym));
  if (dependent.length === 0) {
    // A function of compile-time values and the launch shape (`divUp(blockDim.x, kWarpSize)`) is fixed with them.
    const fixed =
      args.length > 0 &&
      args.every((a) => isFixedValue(a.sym)) &&
      (!object || isFixedValue(silently(ctx, () => evalExpr(object, env, ctx)).sym));
    return uniformValue(fixed ? fixedSym(node.text) : freeSym(node.text));
  }
  const kind = dependent.every((a) => dependenceKind(a.sym) === 'warpUniform') ? 'warpUniform' : 'laneVarying';
  return { sym: opaqueSym(kind, node.text), origin: firstOrigin(...dependent) };
}

/** Calls that read their arguments and write nothing through them. */
const MATH_LIKE = /^(min|max|abs|fabsf?|sqrtf?|rsqrtf?|expf?|logf?|__ldg|__popc|__shfl\w*|printf|assert)$/;

/** The thread array an argument passes: `vals`, `&vals[0]`, `reinterpret_cast<...>(vals)`. */
function arrayArgument(a: NodeView): string | null {
  if (a.type === 'identifier') return a.text;
  if (a.type === 'pointer_expression' && a.child(0)?.type === '&') {
    const arg = a.childForFieldName('argument');
    if (arg?.type === 'subscript_expression')
      return arg.childForFieldName('argument')?.type === 'identifier' ? arg.childForFieldName('argument')!.text : null;
    return arg?.type === 'identifier' ? arg.text : null;
  }
  if (a.type === 'call_expression' && /_cast$/.test(calleeName(a.childForFieldName('function')).name)) {
    const inner = a.childForFieldName('arguments')?.namedChildren[0];
    return inner ? arrayArgument(inner) : null;
  }
  return null;
}

/** `f()` evaluated without recording the branches it holds (a second look at syntax already walked). */
function silently<T>(ctx: WalkContext, f: () => T): T {
  ctx.silent++;
  try {
    return f();
  } finally {
    ctx.silent--;
  }
}

/** The file's definitions a call may run: a member through an object (each class's, up to four), else the function. */
function calleeDefinitions(ctx: WalkContext, name: string, throughObject: boolean): NodeView[] {
  const out: NodeView[] = [];
  const add = (key: string) => {
    const d = ctx.views.viewOrNull(ctx.functions.get(key));
    if (d) out.push(d);
  };
  if (throughObject) {
    add(`.${name}`);
    for (let k = 2; k <= 4 && out.length === k - 1; k++) add(`.${name}#${k}`);
    if (out.length === 0) add(name);
  } else {
    add(name);
    if (out.length === 0) add(`.${name}`);
  }
  return out;
}

/** Walks a callee's body with the call's arguments bound; its return value (null: the body could not be read). */
function walkCallee(
  definition: NodeView,
  node: NodeView,
  fn: NodeView | null,
  argNodes: NodeView[],
  args: ThreadValue[],
  name: string,
  env: Env,
  ctx: WalkContext,
): ThreadValue | null {
  const params = parameterNames(definition);
  const calleeEnv: Env = new Map();
  // Its template's value parameters: the call's explicit arguments (`reduce<16>(v)`), else fixed unknowns.
  const templateArgs = fn?.type === 'template_function' ? (fn.childForFieldName('arguments')?.namedChildren ?? []) : [];
  templateValueParameters(definition).forEach((p, i) => {
    const a = templateArgs.find((_, k) => k === i) ?? null;
    const v = a && a.type !== 'type_descriptor' ? silently(ctx, () => evalExpr(a, env, ctx)) : null;
    calleeEnv.set(p, v && !isThreadDependent(v.sym) ? v : uniformValue(fixedSym(p)));
  });
  params.forEach((p, i) => {
    if (p) calleeEnv.set(p, args[i] ?? uniformValue(freeSym(p)));
  });
  const body = definition.childForFieldName('body');
  if (body) {
    const saved = ctx.returns;
    const savedGroups = ctx.groups;
    const savedArrays = ctx.arrays;
    const savedShared = ctx.shared;
    const savedRefs = ctx.memoryRefs;
    ctx.returns = [];
    ctx.groups = new Map();
    ctx.arrays = new Set();
    ctx.shared = new Set();
    ctx.memoryRefs = new Set(
      params.filter((p, i) => p && argNodes[i]?.type === 'identifier' && savedRefs.has(argNodes[i].text)),
    );
    // The caller's arrays passed in: what the callee stores in them is what the caller reads after.
    const arrayParams = new Map<string, string>();
    argNodes.forEach((a, i) => {
      const g = groupOf(a, { ...ctx, groups: savedGroups });
      if (g && params[i]) ctx.groups.set(params[i], g);
      const array = arrayArgument(a);
      if (array && savedArrays.has(array) && params[i]) {
        ctx.arrays.add(params[i]);
        arrayParams.set(params[i], array);
      }
    });
    // Unknowns made from here on are the callee's own.
    const firstUnknown = (freeSym('') as Extract<Sym, { op: 'free' }>).id;
    ctx.callStack.push(name);
    walkStatement(body, calleeEnv, ctx);
    ctx.callStack.pop();
    const returns = ctx.returns;
    ctx.returns = saved;
    ctx.groups = savedGroups;
    ctx.arrays = savedArrays;
    ctx.shared = savedShared;
    ctx.memoryRefs = savedRefs;
    for (const [param, array] of arrayParams) {
      const after = calleeEnv.get(param);
      if (after && env.has(array)) env.set(array, after);
    }
    if (returns.length === 0) return uniformValue(freeSym(node.text));
    // A name the file does not define (a macro set when the kernel is compiled at run time, as
    // `return SORT_KEY;`) may stand for any expression of the arguments: as lane-varying as they are.
    const dependentArgs = args.filter((a) => isThreadDependent(a.sym));
    if (
      dependentArgs.length > 0 &&
      returns.some((r) =>
        symFacts(r.sym).frees.some((f) => f.fixed && f.id > firstUnknown && CONSTANT_NAME.test(f.name)),
      )
    ) {
      const kind = dependentArgs.every((a) => dependenceKind(a.sym) === 'warpUniform') ? 'warpUniform' : 'laneVarying';
      return { sym: opaqueSym(kind, node.text), origin: firstOrigin(...dependentArgs) };
    }
    if (returns.every((r) => symKey(r.sym) === symKey(returns[0].sym))) return returns[0];
    return joinValues(name, returns, null, 'uniform');
  }
  return null;
}

function tileCollective(g: GroupInfo, args: ThreadValue[], node: NodeView, origin: ValueOrigin): ThreadValue {
  const dependent = args.some((a) => isThreadDependent(a.sym));
  if (!dependent) return uniformValue(freeSym(node.text));
  const warpWide = g.kind === 'tile' ? g.size !== null && g.size % 32 === 0 : false;
  return {
    sym: opaqueSym(warpWide ? 'warpUniform' : 'laneVarying', node.text),
    origin: firstOrigin(...args) ?? origin,
  };
}

/** `__shfl_sync(mask, v, src)`: lane `src`'s value for the whole warp (or each `width`-lane segment). */
function shuffleBroadcast(
  value: ThreadValue | undefined,
  src: ThreadValue | undefined,
  width: number,
  node: NodeView,
  origin: ValueOrigin,
): ThreadValue {
  if (!value || !isThreadDependent(value.sym)) return value ?? uniformValue(ZERO);
  const srcKind = src ? dependenceKind(src.sym) : 'uniform';
  if ((srcKind === 'uniform' || srcKind === 'warpUniform') && width >= 32)
    return { sym: opaqueSym('warpUniform', node.text), origin: value.origin ?? origin };
  return { sym: opaqueSym('laneVarying', node.text), origin };
}

/** `asm("mov.u32 %0, %%laneid;" : "=r"(lane))`: outputs read from lane-varying special registers. */
function asmValue(node: NodeView, env: Env, ctx: WalkContext): void {
  const template =
    node.childForFieldName('assembly_code')?.text ??
    node.namedChildren.find((c) => c.type === 'string_literal' || c.type === 'concatenated_string')?.text ??
    '';
  const outputs =
    node.childForFieldName('output_operands')?.namedChildren ??
    node.namedChildren.find((c) => c.type === 'gnu_asm_output_operand_list')?.namedChildren ??
    [];
  let sym: Sym | null = null;
  if (/%laneid/.test(template)) sym = { op: 'laneId' };
  else if (/%tid\.x/.test(template)) sym = { op: 'threadIdx', dim: 'x' };
  else if (/%warpid|%smid/.test(template)) sym = opaqueSym('warpUniform', template);
  const inputs =
    node.childForFieldName('input_operands')?.namedChildren ??
    node.namedChildren.find((c) => c.type === 'gnu_asm_input_operand_list')?.namedChildren ??
    [];
  const inputValues = inputs.map((i) => {
    const value = i.childForFieldName('value');
    return value ? evalExpr(value, env, ctx) : uniformValue(ZERO);
  });
  const dependentInput = inputValues.find((v) => isThreadDependent(v.sym));
  for (const o of outputs) {
    const target = o.childForFieldName('value') ?? o.namedChildren.find((c) => c.type === 'identifier') ?? null;
    if (target?.type !== 'identifier') continue;
    const origin = originOf(enclosingStatement(node));
    if (sym && outputs.length === 1) env.set(target.text, { sym, origin });
    else if (sym || dependentInput)
      env.set(target.text, { sym: opaqueSym('laneVarying', target.text), origin: dependentInput?.origin ?? origin });
    else env.set(target.text, uniformValue(freeSym(target.text)));
  }
}
