/**
 * Hover on a branch whose condition depends on a thread index: the verdict, where the thread
 * dependence comes from, for a divergent branch the path costs (PTX instructions, or an estimate
 * from the syntax) and the efficiency, the suggestion, and what the verdict assumes.
 */
import type { Branch, BranchKind } from '../body/divergence';
import type { Position, Span } from '../types';
import { contains } from '../text/source-text';
import { mdText } from './format';
import { severityNote, type DivergenceSeverityOptions } from './divergence-findings';

const RANK: Record<BranchKind, number> = { 'warp-uniform': 0, tail: 1, divergent: 2 };

/**
 * The branches whose condition holds `position`: the innermost condition, worst verdict first (a
 * condition in a `__device__` function has one branch per kernel that reaches it). Empty when none.
 */
export function branchesAt(branches: readonly Branch[], position: Position): Branch[] {
  const hits = branches.filter((b) => contains(b.conditionSpan, position));
  if (hits.length === 0) return [];
  const innermost = hits.reduce((a, b) =>
    spanSize(b.conditionSpan) < spanSize(a.conditionSpan) ? b : a,
  ).conditionSpan;
  return hits
    .filter((b) => sameSpan(b.conditionSpan, innermost))
    .sort((a, b) => RANK[b.kind] - RANK[a.kind] || a.efficiency - b.efficiency);
}

/**
 * The hover's markdown for `branches` (from `branchesAt`, non-empty): the first in full, the others'
 * kernels and verdicts after it. Each quantity is given once, with its name: the explanation
 * carries the split and what it costs (issue slots, issue efficiency, active lanes), the path costs
 * follow it, and the severity line the idle-lane issue slots the warning threshold weighs.
 */
export function branchHoverMarkdown(branches: readonly Branch[], severity: DivergenceSeverityOptions = {}): string {
  const [b, ...others] = branches;
  const where = b.inDeviceFunction
    ? `in ${code(b.kernel === 'lambda' ? 'a device lambda' : b.kernel)}, a \`__device__\` function no kernel of this file calls`
    : `in kernel ${code(b.kernel)}`;
  const lines = [`**${b.kind}** ${code(b.condition)} ${where}`, b.explanation];
  if (b.kind === 'divergent') {
    const source = b.costSource === 'ptx' ? 'from the PTX' : 'estimated from the syntax';
    const paths = b.paths.map((p) => `${mdText(p.label)} ${p.cost}`).join(' · ');
    lines.push(`Path costs (issue slots per warp, ${source}): ${paths}.`);
    const note = severityNote(b, severity);
    if (note) lines.push(note);
  }
  lines.push(`Thread index from ${code(b.source.text)} (line ${b.source.span.start.line + 1}).`);
  if (b.suggestion) lines.push(`**Suggestion:** ${b.suggestion}`);
  if (b.assumptions.length > 0) lines.push(`Assumptions:\n${b.assumptions.map((a) => `- ${a}`).join('\n')}`);
  const elsewhere = others.filter((o) => o.kernel !== b.kernel);
  if (elsewhere.length > 0)
    lines.push(`Also reached from ${elsewhere.map((o) => `${code(o.kernel)} (${o.kind})`).join(', ')}.`);
  return lines.join('\n\n');
}

/** A markdown code span that survives a backtick in the text. */
function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function spanSize(span: Span): number {
  return (span.end.line - span.start.line) * 1_000_000 + (span.end.character - span.start.character);
}

function sameSpan(a: Span, b: Span): boolean {
  return (
    a.start.line === b.start.line &&
    a.start.character === b.start.character &&
    a.end.line === b.end.line &&
    a.end.character === b.end.character
  );
}
