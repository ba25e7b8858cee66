/** Code actions: the core's quick fixes for a requested range, as LSP code actions with edits in the document. */
import { CodeActionKind, type CodeAction, type Diagnostic, type Range } from 'vscode-languageserver/node';
import type { DocumentReport } from '../core/analyzer';
import { quickFixes, type QuickFix, type QuickFixContext } from '../core/analyzer';
import { asUri, toRange } from './lsp-convert';

export { ADD_NVCC_ARGUMENT_COMMAND } from '../core/analyzer';

export interface CodeActionOptions extends QuickFixContext {
  /** The client shows actions that are not offered, greyed out with why (`codeAction.disabledSupport`); else they are left out. */
  disabledSupport?: boolean;
}

export function codeActions(
  report: DocumentReport,
  range: Range,
  diagnostics: readonly Diagnostic[],
  options: CodeActionOptions = {},
): CodeAction[] {
  const inView = diagnostics.map((d) => ({ code: d.code, span: d.range }));
  return quickFixes(report, range, inView, options)
    .filter((fix) => !fix.disabled || options.disabledSupport)
    .map((fix) => toCodeAction(fix, report.facts.uri, diagnostics));
}

function toCodeAction(fix: QuickFix, uri: string, diagnostics: readonly Diagnostic[]): CodeAction {
  const action: CodeAction = {
    title: fix.title,
    kind: fix.kind === 'quickfix' ? CodeActionKind.QuickFix : CodeActionKind.RefactorRewrite,
  };
  if (fix.isPreferred) action.isPreferred = true;
  if (fix.fixes) {
    const { code, span } = fix.fixes;
    action.diagnostics = diagnostics.filter(
      (d) =>
        d.code === code && d.range.start.line === span.start.line && d.range.start.character === span.start.character,
    );
  }
  if (fix.disabled) action.disabled = { reason: fix.disabled };
  if (fix.edits) {
    // Edits in this document, or in the file a kernel is written in (its index path).
    const changes: Record<string, Array<{ range: Range; newText: string }>> = {};
    for (const e of fix.edits)
      (changes[e.path ? asUri(e.path) : uri] ??= []).push({ range: toRange(e.span), newText: e.newText });
    action.edit = { changes };
  }
  if (fix.command) action.command = fix.command;
  return action;
}
