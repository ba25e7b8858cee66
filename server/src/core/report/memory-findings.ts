/**
 * The findings and hovers of the memory and barrier rules (body/memory-rules.ts):
 * `barrier-divergence` (an error where the thread indices prove part of the block never arrives,
 * a warning where it depends on data), `uncoalesced-access` and `bank-conflict` (a warning from 4
 * sectors per request per ideal one, or 4-way; a hint below). What each rule leaves out as
 * immaterial (a load every block makes of the same bytes, a conflict run once per thread for a few
 * passes) is decided where the records are made (body/memory-rules.ts).
 */
import type { Finding, Position } from '../types';
import type { MemoryRecord } from '../body/memory-rules';
import { contains } from '../text/source-text';

export function memoryFindings(records: readonly MemoryRecord[]): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const r of records) {
    const key = `${r.rule}:${r.span.start.line}:${r.span.start.character}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ code: r.rule, severity: r.severity, message: r.message, span: r.span, related: [] });
  }
  return out;
}

export function memoryRecordsAt(records: readonly MemoryRecord[], position: Position): MemoryRecord[] {
  return records.filter((r) => contains(r.span, position));
}

const TITLES: Record<MemoryRecord['rule'], string> = {
  'barrier-divergence': 'Barrier in divergent code',
  'uncoalesced-access': 'Uncoalesced global access',
  'bank-conflict': 'Shared-memory bank conflict',
};

/** The hover of the records at one place (from `memoryRecordsAt`, non-empty). */
export function memoryHoverMarkdown(records: readonly MemoryRecord[]): string {
  return records
    .map((r) => {
      const measure = !r.measure
        ? null
        : r.rule === 'uncoalesced-access'
          ? `**${r.measure.actual}** sectors per warp request, against **${r.measure.ideal}** at unit stride.`
          : r.rule === 'bank-conflict'
            ? `**${r.measure.actual}-way**: ${r.measure.actual} passes per request instead of 1.`
            : `**${r.measure.actual}** of **${r.measure.ideal}** threads reach it.`;
      return [
        `**${TITLES[r.rule]}** · \`${r.rule}\` (${r.severity}) · in \`${r.kernel}\``,
        r.message,
        ...(measure ? [measure] : []),
        `Fix: ${r.fix}`,
        ...(r.assumptions.length > 0 ? [`Assumed: ${r.assumptions.join('; ')}.`] : []),
      ].join('\n\n');
    })
    .join('\n\n---\n\n');
}
