/** The one adapter from core spans and findings to LSP ranges and diagnostics. */
import { DiagnosticSeverity, type Diagnostic, type Range } from 'vscode-languageserver/node';
import type { Finding, Position, Span } from './core/types';

export const toRange = (span: Span): Range => ({ start: { ...span.start }, end: { ...span.end } });

export function contains(span: Span, position: Position): boolean {
  const after = (a: Position, b: Position) => a.line > b.line || (a.line === b.line && a.character >= b.character);
  return after(position, span.start) && after(span.end, position);
}

const SEVERITY: Record<Finding['severity'], DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

export function toDiagnostic(finding: Finding, uri: string): Diagnostic {
  return {
    range: toRange(finding.span),
    severity: SEVERITY[finding.severity],
    code: finding.code,
    source: 'cuda-occupancy',
    message: finding.message,
    relatedInformation: finding.related.length
      ? finding.related.map((r) => ({ location: { uri: r.uri ?? uri, range: toRange(r.span) }, message: r.message }))
      : undefined,
  };
}
