/**
 * A branch the uniformity analysis found, placed back in the syntax tree: the statement, its
 * condition and the syntax of each path, which the cost model reads (path-costs.ts). An `if` whose
 * only statement leaves (`return`, `break`, `continue`) is told apart: its paths are the rest of
 * the function (or loop body) and the exit.
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { Range } from '../ir/expr';
import type { Sym, ThreadValue } from '../uniformity/symbolic-values';

export type BranchConstruct =
  'if' | 'else-if' | 'ternary' | 'switch' | 'short-circuit' | 'loop' | 'return' | 'break' | 'continue';

export interface PathNodes {
  label: string;
  /** The syntax the path executes (empty for an empty else). */
  nodes: SyntaxNode[];
  /** For a switch case: the case values (null for `default`). */
  caseValues?: number[] | null;
}

/** A branch whose condition varies across the threads, with its syntax: what the verdicts and costs read. */
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

export interface PlacedSite {
  construct: 'if' | 'else-if' | 'switch' | 'loop' | 'ternary' | 'short-circuit';
  at: Range;
  condAt: Range;
  arms: Range[];
  cond: ThreadValue;
  guards: Sym[];
  cases?: Array<number[] | null>;
}

const LOOP_TYPES: ReadonlySet<string> = new Set(['for_statement', 'while_statement', 'do_statement', 'for_range_loop']);

/** The branch site of `site` in `tree` (a tree of the text the ranges are offsets of), or null when its syntax is not there. */
export function branchSiteIn(tree: Tree, kernel: string, site: PlacedSite): BranchSite | null {
  const node = nodeAt(tree.rootNode, site.at, expectedTypes(site.construct));
  if (!node) return null;
  const conditionNode = nodeAt(tree.rootNode, site.condAt, null) ?? node;
  const base = { kernel, node, conditionNode: condExpr(conditionNode), condition: site.cond, guards: site.guards };
  switch (site.construct) {
    case 'if':
    case 'else-if': {
      if (node.type !== 'if_statement') return { ...base, construct: site.construct, paths: plainPaths(site, tree) };
      const consequence = node.childForFieldName('consequence');
      const alternativeClause = node.childForFieldName('alternative');
      const alternative =
        alternativeClause?.type === 'else_clause' ? (codeChildren(alternativeClause)[0] ?? null) : alternativeClause;
      const jump = !alternative && consequence ? earlyExit(consequence) : null;
      if (jump && consequence) {
        const construct: BranchConstruct =
          jump.type === 'return_statement' ? 'return' : jump.type === 'break_statement' ? 'break' : 'continue';
        return {
          ...base,
          construct,
          // The path that keeps running first: `laneActivity` describes it.
          paths: [
            {
              label: construct === 'return' ? 'rest of the function' : 'rest of the loop body',
              nodes: followingStatements(node, construct !== 'return'),
            },
            { label: construct, nodes: [consequence] },
          ],
        };
      }
      return {
        ...base,
        construct: site.construct,
        paths: [
          { label: 'then', nodes: consequence ? [consequence] : [] },
          { label: 'else', nodes: alternative ? [alternative] : [] },
        ],
      };
    }
    case 'loop': {
      const body = LOOP_TYPES.has(node.type) ? node.childForFieldName('body') : null;
      const update = node.type === 'for_statement' ? node.childForFieldName('update') : null;
      return {
        ...base,
        construct: 'loop',
        paths: [
          {
            label: 'one more iteration',
            nodes: body
              ? [body, ...(update ? [update] : [])]
              : site.arms.map((a) => nodeAt(tree.rootNode, a, null)).filter(isNode),
          },
          { label: 'leave the loop', nodes: [] },
        ],
      };
    }
    case 'switch': {
      const body = node.type === 'switch_statement' ? node.childForFieldName('body') : null;
      const cases = body ? body.namedChildren.filter((c): c is SyntaxNode => c?.type === 'case_statement') : [];
      const paths: PathNodes[] = [];
      for (let i = 0; i < cases.length; i++) {
        const c = cases[i];
        const valueNode = c.childForFieldName('value');
        const nodes: SyntaxNode[] = [];
        // The statements this case runs: its own and the following cases' until a break (fall-through).
        for (let j = i; j < cases.length; j++) {
          const statements = caseStatements(cases[j]);
          nodes.push(...statements);
          if (statements.some((s) => s.type === 'break_statement' || s.type === 'return_statement')) break;
        }
        const given = site.cases && site.cases.length >= cases.length ? site.cases[i] : undefined;
        paths.push({
          label: valueNode ? `case ${valueNode.text}` : 'default',
          nodes,
          caseValues: valueNode ? (given ?? literalCase(valueNode.text)) : null,
        });
      }
      if (!cases.some((c) => !c.childForFieldName('value')))
        paths.push({ label: 'no case', nodes: [], caseValues: null });
      if (cases.length === 0) return { ...base, construct: 'switch', paths: plainPaths(site, tree) };
      return { ...base, construct: 'switch', paths };
    }
    case 'ternary': {
      if (node.type !== 'conditional_expression')
        return { ...base, construct: 'ternary', paths: plainPaths(site, tree) };
      const a = node.childForFieldName('consequence');
      const b = node.childForFieldName('alternative');
      return {
        ...base,
        construct: 'ternary',
        paths: [
          { label: 'true', nodes: a ? [a] : [] },
          { label: 'false', nodes: b ? [b] : [] },
        ],
      };
    }
    case 'short-circuit': {
      const right = node.type === 'binary_expression' ? node.childForFieldName('right') : null;
      return {
        ...base,
        construct: 'short-circuit',
        paths: [
          { label: 'evaluate the right operand', nodes: right ? [right] : [] },
          { label: 'skip it', nodes: [] },
        ],
      };
    }
  }
}

function isNode(n: SyntaxNode | null): n is SyntaxNode {
  return n !== null;
}

/** A branch read from a macro's expansion: its paths are where its arms stand (the macro use). */
function plainPaths(site: PlacedSite, tree: Tree): PathNodes[] {
  const nodes = site.arms.map((a) => nodeAt(tree.rootNode, a, null)).filter(isNode);
  return [
    { label: 'then', nodes: nodes.slice(0, 1) },
    { label: 'else', nodes: nodes.slice(1, 2) },
  ];
}

function expectedTypes(construct: PlacedSite['construct']): ReadonlySet<string> {
  switch (construct) {
    case 'if':
    case 'else-if':
      return new Set(['if_statement']);
    case 'loop':
      return LOOP_TYPES;
    case 'switch':
      return new Set(['switch_statement']);
    case 'ternary':
      return new Set(['conditional_expression']);
    case 'short-circuit':
      return new Set(['binary_expression']);
  }
}

/**
 * The node spanning exactly `at` (of one of `types` when there is one), else the smallest node
 * around it (a macro use the branch was expanded from).
 */
export function nodeAt(root: SyntaxNode, at: Range, types: ReadonlySet<string> | null): SyntaxNode | null {
  const [start, end] = at;
  if (end < start || start < 0 || start > root.endIndex) return null;
  let node: SyntaxNode | null = root.descendantForIndex(start, Math.max(start, end - 1));
  let exact: SyntaxNode | null = null;
  for (let n = node; n; n = n.parent) {
    if (n.startIndex === start && n.endIndex === end) {
      exact ??= n;
      if (!types || types.has(n.type)) return n;
    }
    if (n.startIndex < start || n.endIndex > end) break;
  }
  if (exact) return exact;
  // The range is inside a node that holds more (a macro use): the smallest around it.
  while (node && (node.startIndex > start || node.endIndex < end)) node = node.parent;
  return node;
}

function codeChildren(node: SyntaxNode): SyntaxNode[] {
  return node.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== 'comment');
}

function condExpr(node: SyntaxNode): SyntaxNode {
  if (node.type === 'condition_clause' || node.type === 'parenthesized_expression') {
    const inner = node.childForFieldName('value') ?? codeChildren(node).pop() ?? null;
    return inner ?? node;
  }
  return node;
}

/** `return;`, `break;` or `continue;`, alone or alone in braces. */
function earlyExit(node: SyntaxNode): SyntaxNode | null {
  if (node.type === 'return_statement' || node.type === 'break_statement' || node.type === 'continue_statement')
    return node;
  if (node.type === 'compound_statement') {
    const statements = codeChildren(node);
    if (statements.length === 1) return earlyExit(statements[0]);
  }
  return null;
}

/** The statements after `node` up to the end of the function (or of the loop body, for break/continue). */
function followingStatements(node: SyntaxNode, stopAtLoop: boolean): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  let n: SyntaxNode = node;
  while (n.parent) {
    for (let s = n.nextNamedSibling; s; s = s.nextNamedSibling) if (s.type !== 'comment') out.push(s);
    const parent: SyntaxNode = n.parent;
    if (parent.type === 'function_definition' || parent.type === 'lambda_expression') break;
    if (stopAtLoop && LOOP_TYPES.has(parent.type)) break;
    n = parent;
  }
  return out;
}

function caseStatements(c: SyntaxNode): SyntaxNode[] {
  const value = c.childForFieldName('value');
  return codeChildren(c).filter((s) => !value || s.id !== value.id);
}

function literalCase(text: string): number[] {
  const n = Number(text.replace(/[uUlL]+$/, ''));
  return Number.isFinite(n) ? [n] : [];
}
