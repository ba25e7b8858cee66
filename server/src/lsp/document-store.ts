/**
 * Text synchronisation: applies LSP content changes to each open document's text and turns them
 * into tree-sitter edits for the core's document sessions, which keep the trees and facts.
 */
import { TextDocument, type TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';
import type { TextEdit } from '../core/syntax/cuda-parser';
import type { Position } from '../core/types';
import { DocumentSessions, type DocumentSessionsOptions } from '../core/incremental/document-sessions';
import type { DocumentFacts } from '../core/incremental/document-analysis';

export { FIRST_PASS_BUDGET_MS, BACKGROUND_SLICE_MS } from '../core/incremental/document-sessions';

export type DocumentStoreOptions = { sessions: DocumentSessions } | (Omit<DocumentSessionsOptions, 'clock'> & { clock?: () => number });

export class DocumentStore {
  private readonly documents = new Map<string, TextDocument>();
  private readonly sessions: DocumentSessions;

  constructor(options: DocumentStoreOptions) {
    this.sessions = 'sessions' in options ? options.sessions : new DocumentSessions({ clock: () => performance.now(), ...options });
  }

  open(uri: string, languageId: string, version: number, text: string): void {
    this.documents.set(uri, TextDocument.create(uri, languageId, version, text));
    this.sessions.open(uri, version, text);
  }

  change(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): void {
    let document = this.documents.get(uri);
    if (!document) return;
    let edits: TextEdit[] | null = [];
    for (const change of changes) {
      if ('range' in change) {
        const before = document;
        // Offsets as TextDocument.update reads the range (clamped, start before end); points from
        // the offsets. An edit right after a `\r` starts at it: whether it ends a line may change.
        const [a, b] = [before.offsetAt(change.range.start), before.offsetAt(change.range.end)];
        const [changeStart, oldEndIndex] = a <= b ? [a, b] : [b, a];
        const startIndex = changeStart > 0 && before.getText().charCodeAt(changeStart - 1) === 13 ? changeStart - 1 : changeStart;
        const newEndIndex = changeStart + change.text.length;
        const point = ({ line, character }: { line: number; character: number }) => ({ row: line, column: character });
        // Read before the update, which changes the document in place: the old end is a place in the old text.
        const startPosition = point(before.positionAt(startIndex));
        const oldEndPosition = point(before.positionAt(oldEndIndex));
        document = TextDocument.update(before, [change], version);
        edits?.push({ startIndex, oldEndIndex, newEndIndex, startPosition, oldEndPosition, newEndPosition: point(document.positionAt(newEndIndex)) });
      } else {
        document = TextDocument.update(document, [change], version);
        edits = null;
      }
    }
    this.documents.set(uri, document);
    this.sessions.update(uri, version, document.getText(), edits);
  }

  close(uri: string): void {
    this.documents.delete(uri);
    this.sessions.close(uri);
  }

  has(uri: string): boolean {
    return this.documents.has(uri);
  }

  uris(): string[] {
    return [...this.documents.keys()];
  }

  text(uri: string): string | undefined {
    return this.documents.get(uri)?.getText();
  }

  version(uri: string): number | undefined {
    return this.documents.get(uri)?.version;
  }

  facts(uri: string): DocumentFacts | undefined {
    return this.sessions.facts(uri);
  }

  complete(uri: string, budgetMs: number, at?: Position): boolean {
    return this.sessions.complete(uri, budgetMs, at);
  }

  invalidate(uri?: string): void {
    this.sessions.invalidate(uri);
  }

  dispose(): void {
    this.documents.clear();
    this.sessions.dispose();
  }
}
