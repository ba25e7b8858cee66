/**
 * Findings a programmer switched off in the source, as linters let them:
 *
 *   // cuda-occupancy-disable-next-line divergent-branch
 *   if (lane == 0) out[warp] = sum;
 *   k<<<1, 32>>>(p); // cuda-occupancy-disable-line small-grid -- a one-warp setup kernel
 *   // cuda-occupancy-disable-file latency-deficit
 *
 * A directive names rule ids, separated by commas or spaces; without any it switches off every
 * rule. Text after `--` is the reason and is ignored. The report drops suppressed findings, so the
 * editor, `check`'s text, JSON and SARIF and the exit status all honour them alike.
 */
import type { Finding } from '../types';
import { positionAt, type SourceText } from '../text/source-text';

export type SuppressionScope = 'next-line' | 'line' | 'file';

export interface Suppression {
  scope: SuppressionScope;
  /** 0-based line the directive applies to (the file's directives: the line they are written on). */
  line: number;
  /** Rule ids; null: every rule. */
  codes: readonly string[] | null;
}

const DIRECTIVE = /cuda-occupancy-disable-(next-line|line|file)\b/g;
const RULE_ID = /^[a-z][a-z0-9-]*$/;

/** The suppression directives written in comments of `source`. */
export function findSuppressions(source: SourceText): Suppression[] {
  const { text, masked } = source;
  if (!text.includes('cuda-occupancy-disable-')) return [];
  const found: Suppression[] = [];
  for (const match of text.matchAll(DIRECTIVE)) {
    const at = match.index;
    const lineStart = text.lastIndexOf('\n', at - 1) + 1;
    // In a comment: blanked in the masked text, after a `//` or `/*` on its line.
    if (masked[at] !== ' ' || !/\/\/|\/\*/.test(text.slice(lineStart, at))) continue;
    const lineEnd = text.indexOf('\n', at);
    const rest = text.slice(at + match[0].length, lineEnd < 0 ? text.length : lineEnd);
    const list = rest.split(/--|\*\//)[0];
    const codes = list.split(/[\s,]+/).filter((c) => RULE_ID.test(c));
    const line = positionAt(source, at).line;
    const scope = match[1] as SuppressionScope;
    found.push({ scope, line: scope === 'next-line' ? line + 1 : line, codes: codes.length ? codes : null });
  }
  return found;
}

/** `findings` without the ones the directives switch off. */
export function withoutSuppressed(findings: readonly Finding[], suppressions: readonly Suppression[]): Finding[] {
  if (suppressions.length === 0) return [...findings];
  const covers = (s: Suppression, f: Finding) =>
    (s.codes === null || s.codes.includes(f.code)) && (s.scope === 'file' || s.line === f.span.start.line);
  return findings.filter((f) => !suppressions.some((s) => covers(s, f)));
}
