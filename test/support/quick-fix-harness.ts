/** Quick fixes of a snippet as the server computes them, and their edits applied to the text. */
import {
  createAnalyzer,
  DEFAULT_REPORT_SETTINGS,
  type Analyzer,
  type DocumentReport,
} from '../../server/src/core/analyzer';
import { quickFixes, type QuickFix, type SourceEdit } from '../../server/src/core/report/quick-fixes';
import { contains } from '../../server/src/core/text/source-text';
import { loadGrammarBytes } from './grammar';

let shared: Promise<Analyzer> | null = null;

/** An analyzer of its own (a workspace index to fill), or the shared one. */
export function quickFixAnalyzer(own = false): Promise<Analyzer> {
  if (own) return createAnalyzer({ grammar: loadGrammarBytes(), indexKey: (uri) => uri.replace(/^file:\/\//, '') });
  shared ??= createAnalyzer({ grammar: loadGrammarBytes(), indexKey: (uri) => uri.replace(/^file:\/\//, '') });
  return shared;
}

export interface SnippetFixes {
  report: DocumentReport;
  /** Every fix of every launch, the opt-in for each finding that asks for one included. */
  fixes: QuickFix[];
}

/** The fixes of every launch in `text` (with the findings of its report in view). */
export async function fixesOf(
  text: string,
  options: { uri?: string; analyzer?: Analyzer; archs?: string[] } = {},
): Promise<SnippetFixes> {
  const analyzer = options.analyzer ?? (await quickFixAnalyzer());
  const uri = options.uri ?? 'file:///ws/snippet.cu';
  analyzer.configure({
    archs: options.archs ?? ['sm_80'],
    divergence: false,
    report: { ...DEFAULT_REPORT_SETTINGS, divergenceEnabled: false },
  });
  // As the server and the CLI do: the document is in the workspace index too (its includes resolve from there).
  analyzer.index.update(uri.replace(/^file:\/\//, ''), text);
  const report = analyzer.reportOf(analyzer.analyzeFile({ uri, text }));
  const findings = report.findings.map((f) => ({ code: f.code, span: f.span }));
  const fixes: QuickFix[] = [];
  for (const a of report.analyses) {
    const inView = findings.filter((f) => contains(a.launch.span, f.span.start));
    fixes.push(...quickFixes(report, a.launch.span, inView, analyzer.quickFixContext(uri)));
  }
  return { report, fixes };
}

/** The offset of a 0-based line and UTF-16 character, with `\r\n`, `\r` and `\n` ending lines (as LSP counts). */
export function offsetOf(text: string, position: { line: number; character: number }): number {
  let line = 0;
  let i = 0;
  while (line < position.line && i < text.length) {
    const c = text[i++];
    if (c === '\n' || (c === '\r' && text[i] !== '\n')) line++;
  }
  return i + position.character;
}

/** `text` with `edits` applied (LSP semantics: ranges refer to the original text and do not overlap). */
export function applyEdits(text: string, edits: readonly SourceEdit[]): string {
  const placed = edits.map((e, order) => ({
    start: offsetOf(text, e.span.start),
    end: offsetOf(text, e.span.end),
    newText: e.newText,
    order,
  }));
  placed.sort((a, b) => b.start - a.start || b.order - a.order);
  let out = text;
  for (const e of placed) out = out.slice(0, e.start) + e.newText + out.slice(e.end);
  return out;
}

export const byTitle = (fixes: readonly QuickFix[], prefix: string) => fixes.filter((f) => f.title.startsWith(prefix));

/** The register caps a `__launch_bounds__` fix proposes (added or changed). */
export const BOUNDS_FIX = /^(Add|Change to) __launch_bounds__\(/;
export const boundsFixes = (fixes: readonly QuickFix[]) => fixes.filter((f) => BOUNDS_FIX.test(f.title));
