/**
 * Arms the compiler makes one. An `if`/`else` (or an `else if` chain ending in `else`) whose arms
 * are the same straight-line statements on different operands (`t = pos[i] * powf(s, w)` against
 * `t = pos[i + n] * powf(s, w)`; `a[k % n] += a[j % n]` against `b[k % m] += b[j % m]`) is compiled
 * as one copy of the shared code: the optimizer sinks the instructions the arms have in common into
 * the join (LLVM's SimplifyCFG, which NVVM runs) and keeps only the operands that differ, chosen
 * per lane by selects. A split warp then issues the shared code once, not once per arm: the split
 * costs the differing operands alone, so rewriting the branch gives back nothing the compiler has
 * not already taken.
 *
 * Only what the sinking is known to take is read as merged: arms of equal statements, each an
 * expression or a declaration (no nested branch, loop, exit or short-circuit), the same operators,
 * callees, fields, types and declared names, differing in operands with no call and no write, and
 * mostly shared (the differing operands are fewer syntax nodes than the code they feed).
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { PathNodes } from './branch-syntax';

/** Statements straight-line code is made of: anything else (a branch, a loop, an exit) is not merged. */
const STRAIGHT: ReadonlySet<string> = new Set(['expression_statement', 'declaration']);
/** Syntax with control flow or effects of its own, which no select replaces. */
const NOT_OPERAND: ReadonlySet<string> = new Set([
  'call_expression',
  'assignment_expression',
  'update_expression',
  'comma_expression',
  'conditional_expression',
  'lambda_expression',
  'new_expression',
  'delete_expression',
]);
/** Leaves that are operands: a select can choose between two of them. */
const OPERAND_LEAF: ReadonlySet<string> = new Set([
  'identifier',
  'number_literal',
  'char_literal',
  'true',
  'false',
  'null',
  'nullptr',
]);

/** Whether the `if` site's arms (its paths, the `else if` chain flattened) are one statement list on different operands. */
export function armsMerge(paths: readonly PathNodes[]): boolean {
  if (paths.length !== 2 || paths[0].nodes.length === 0 || paths[1].nodes.length === 0) return false;
  const arms: SyntaxNode[][] = [];
  const first = statements(paths[0].nodes);
  if (!first) return false;
  arms.push(first);
  if (!addChain(paths[1].nodes, arms)) return false;
  const [reference, ...others] = arms;
  return others.every((arm) => sameOnOtherOperands(reference, arm));
}

/** The else path's arms: an `else if` chain adds its arms in turn (each with its else), a block adds itself. */
function addChain(nodes: readonly SyntaxNode[], arms: SyntaxNode[][]): boolean {
  const chained = nodes.length === 1 && nodes[0].type === 'if_statement' ? nodes[0] : null;
  if (!chained) {
    const list = statements(nodes);
    if (!list) return false;
    arms.push(list);
    return true;
  }
  const condition = chained.childForFieldName('condition');
  const consequence = chained.childForFieldName('consequence');
  const alternative = chained.childForFieldName('alternative');
  // Each later test is computed only where the earlier ones failed; merged, every lane computes it.
  if (!condition || !consequence || !alternative || !isOperand(condition)) return false;
  const list = statements([consequence]);
  if (!list) return false;
  arms.push(list);
  const next = alternative.type === 'else_clause' ? alternative.namedChildren.filter(code) : [alternative];
  return addChain(next, arms);
}

function code(n: SyntaxNode | null): n is SyntaxNode {
  return !!n && n.type !== 'comment';
}

/** The statements of an arm, when all are straight-line; null otherwise. */
function statements(nodes: readonly SyntaxNode[]): SyntaxNode[] | null {
  const list = nodes.flatMap((n) => (n.type === 'compound_statement' ? n.namedChildren.filter(code) : [n]));
  if (list.length === 0) return null;
  return list.every((s) => STRAIGHT.has(s.type) && !hasShortCircuit(s)) ? list : null;
}

function hasShortCircuit(n: SyntaxNode): boolean {
  if (n.type === 'conditional_expression' || n.type === 'lambda_expression') return true;
  if (n.type === 'binary_expression') {
    const op = n.childForFieldName('operator')?.type;
    if (op === '&&' || op === '||') return true;
  }
  return n.namedChildren.some((c) => !!c && hasShortCircuit(c));
}

/** An expression a select can stand for: no call, no write, no control flow of its own. */
function isOperand(n: SyntaxNode): boolean {
  if (NOT_OPERAND.has(n.type)) return false;
  return n.children.every((c) => !c || isOperand(c));
}

function size(n: SyntaxNode): number {
  return 1 + n.namedChildren.reduce((s, c) => s + (c ? size(c) : 0), 0);
}

/** The two statement lists differ only in operands, and share more syntax than they differ in. */
function sameOnOtherOperands(a: readonly SyntaxNode[], b: readonly SyntaxNode[]): boolean {
  if (a.length !== b.length) return false;
  let differing = 0;
  let total = 0;
  for (let i = 0; i < a.length; i++) {
    const d = differingSize(a[i], b[i]);
    if (d === null) return false;
    differing += d;
    total += Math.max(size(a[i]), size(b[i]));
  }
  return differing * 2 < total;
}

/**
 * How many syntax nodes of `a` differ from `b` where the two are the same code but for operands;
 * null where they are not (another operator, callee, field, type or declared name, or a differing
 * part with a call or a write).
 */
function differingSize(a: SyntaxNode, b: SyntaxNode): number | null {
  if (a.type === b.type && a.childCount === b.childCount) {
    if (a.childCount === 0) {
      if (a.text === b.text) return 0;
      return OPERAND_LEAF.has(a.type) && !fixedName(a) && !fixedName(b) ? 1 : null;
    }
    let sum = 0;
    for (let i = 0; i < a.childCount; i++) {
      const x = a.child(i);
      const y = b.child(i);
      if (!x || !y) return null;
      if (a.fieldNameForChild(i) !== b.fieldNameForChild(i)) return null;
      const d = differingSize(x, y);
      if (d === null) return null;
      sum += d;
    }
    return sum;
  }
  // Different shapes: both must be operands (`i2` against `i2 + ne02 * 2`), computed per arm.
  return isExpression(a) && isExpression(b) && isOperand(a) && isOperand(b) && !fixedName(a) && !fixedName(b)
    ? Math.max(size(a), size(b))
    : null;
}

/**
 * A name the code calls or declares rather than computes with (a callee, a template's name, a
 * declared variable, a qualifier): two of them are different code, not two operands.
 */
function fixedName(n: SyntaxNode): boolean {
  const parent = n.parent;
  if (!parent || !OPERAND_LEAF.has(n.type) || n.type !== 'identifier') return false;
  if (parent.type === 'call_expression') return parent.childForFieldName('function')?.id === n.id;
  if (parent.type === 'init_declarator') return parent.childForFieldName('value')?.id !== n.id;
  return !(
    parent.type.endsWith('_expression') ||
    parent.type === 'argument_list' ||
    parent.type === 'subscript_argument_list' ||
    parent.type === 'initializer_list'
  );
}

function isExpression(n: SyntaxNode): boolean {
  return (
    n.type.endsWith('_expression') ||
    OPERAND_LEAF.has(n.type) ||
    n.type === 'parenthesized_expression' ||
    n.type === 'subscript_expression'
  );
}
