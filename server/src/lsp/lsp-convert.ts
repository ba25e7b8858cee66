/** The one adapter from core spans and findings to LSP ranges and diagnostics. */
import { pathToFileURL } from 'node:url';
import { DiagnosticSeverity, type Diagnostic, type Range } from 'vscode-languageserver/node';
import type { Finding, Span } from '../core/types';

export const toRange = (span: Span): Range => ({ start: { ...span.start }, end: { ...span.end } });

export { contains } from '../core/analyzer';

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
      ? finding.related.map((r) => ({
          location: { uri: r.uri ? asUri(r.uri) : uri, range: toRange(r.span) },
          message: r.message,
        }))
      : undefined,
  };
}

/** Related locations and edits in other files carry a URI, or an absolute path from the workspace index. */
export function asUri(pathOrUri: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(pathOrUri) && !/^[a-z]:[\\/]/i.test(pathOrUri)
    ? pathOrUri
    : pathToFileURL(pathOrUri).href;
}

/** The one diagnostic of a document over the size limits (document-limits.ts), at its start. */
export function tooLargeDiagnostic(message: string): Diagnostic {
  return {
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    severity: DiagnosticSeverity.Information,
    code: 'too-large-to-analyse',
    source: 'cuda-occupancy',
    message,
  };
}
