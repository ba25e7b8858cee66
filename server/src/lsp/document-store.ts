/**
 * Text synchronisation: applies LSP content changes to each open document's text and turns them
 * into tree-sitter edits for the core's document sessions, which keep the trees and facts.
 */
import { TextDocument, type TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';
import type { TextEdit } from '../core/analyzer';
import type { Position } from '../core/types';
import { DocumentSessions, type DocumentSessionsOptions } from '../core/analyzer';
import type { DocumentFacts } from '../core/analyzer';
import {
  DEFAULT_DOCUMENT_LIMITS,
  tooLargeAfterEdit,
  tooLargeToAnalyse,
  tooManyBytes,
  type DocumentLimits,
} from '../document-limits';

export { FIRST_PASS_BUDGET_MS, BACKGROUND_SLICE_MS } from '../core/analyzer';

export type DocumentStoreOptions = (
  { sessions: DocumentSessions } | (Omit<DocumentSessionsOptions, 'clock'> & { clock?: () => number })
) & {
  /** The size limits (read on every change, so that settings apply at once); default DEFAULT_DOCUMENT_LIMITS. */
  limits?: () => DocumentLimits;
};

export class DocumentStore {
  private readonly documents = new Map<string, TextDocument>();
  private readonly sessions: DocumentSessions;
  /** Documents over the size limits, with why: they are kept as text only, never analysed. */
  private readonly oversize = new Map<string, string>();
  /**
   * Documents whose text is not kept at all: opened by a message too large to decode (framing-guard.ts), or grown
   * past twice the limit. Their changes cannot be applied: they are counted, not read, until one replaces the whole
   * text or the document is opened again. (2,000 edits of 100 KB each grew one to 200 MB and the server to 2.7 GB.)
   */
  private readonly textless = new Set<string>();
  private readonly limits: () => DocumentLimits;

  constructor(options: DocumentStoreOptions) {
    this.sessions =
      'sessions' in options ? options.sessions : new DocumentSessions({ clock: () => performance.now(), ...options });
    this.limits = options.limits ?? (() => DEFAULT_DOCUMENT_LIMITS);
  }

  open(uri: string, languageId: string, version: number, text: string): void {
    this.documents.set(uri, TextDocument.create(uri, languageId, version, text));
    this.oversize.delete(uri);
    this.textless.delete(uri);
    this.analyse(uri, version, text, 'open');
  }

  /** Opens a document whose message was `bytes` long, too large to decode: its text is not known. */
  openWithoutText(uri: string, languageId: string, version: number, bytes: number): void {
    this.documents.set(uri, TextDocument.create(uri, languageId, version, ''));
    this.dropText(uri, tooManyBytes(bytes, this.limits()));
  }

  /** A change of a document too large to decode: the document's text is no longer known. */
  changeWithoutText(uri: string, version: number, bytes: number): boolean {
    const document = this.documents.get(uri);
    if (!document || !Number.isInteger(version) || version <= document.version) return false;
    this.documents.set(uri, TextDocument.create(uri, document.languageId, version, ''));
    this.dropText(uri, tooManyBytes(bytes, this.limits()));
    return true;
  }

  private dropText(uri: string, reason: string): void {
    this.textless.add(uri);
    this.oversize.set(uri, `${reason}; its text is not kept: open it again once it is smaller`);
    this.sessions.close(uri);
  }

  /** Why the document is not analysed (`too large to analyse: ...`), or null. */
  tooLarge(uri: string): string | null {
    return this.oversize.get(uri) ?? null;
  }

  /** The limits changed: documents that now fit are analysed, documents that no longer fit dropped. */
  recheckLimits(): void {
    for (const [uri, document] of this.documents)
      if (!this.textless.has(uri)) this.analyse(uri, document.version, document.getText(), 'limits');
  }

  /**
   * Hands a version to the sessions, unless it is over the limits: `open` a first version, edits the
   * change from the last one, `limits` the same version under new limits (only a change of verdict acts).
   */
  private analyse(uri: string, version: number, text: string, how: 'open' | 'limits' | TextEdit[] | null): void {
    const was = this.oversize.get(uri);
    // One edit of a document within the limits: only the lines it wrote need a look.
    const reason =
      Array.isArray(how) && how.length === 1 && was === undefined
        ? tooLargeAfterEdit(text, how[0].startIndex, how[0].newEndIndex, this.limits())
        : tooLargeToAnalyse(text, this.limits());
    if (reason) {
      this.oversize.set(uri, reason);
      if (how === 'open' || was === undefined) this.sessions.close(uri);
      return;
    }
    this.oversize.delete(uri);
    if (how === 'open' || was !== undefined) this.sessions.open(uri, version, text);
    else if (how !== 'limits') this.sessions.update(uri, version, text, how);
  }

  /**
   * Applies a version's changes. A version not newer than the document's is stale (a client bug, or
   * messages out of order): ignored, and false returned.
   */
  change(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): boolean {
    let document = this.documents.get(uri);
    if (!document) return false;
    if (!Number.isInteger(version) || version <= document.version) return false;
    if (this.textless.has(uri)) {
      // Edits of a text not kept cannot be applied; a change that replaces the whole text starts it again.
      let whole = changes.length - 1;
      while (whole >= 0 && 'range' in changes[whole]) whole--;
      if (whole < 0) {
        this.documents.set(uri, TextDocument.create(uri, document.languageId, version, ''));
        return true;
      }
      this.textless.delete(uri);
      document = TextDocument.create(uri, document.languageId, document.version, '');
      changes = changes.slice(whole);
    }
    let edits: TextEdit[] | null = [];
    for (const change of changes) {
      if ('range' in change) {
        const before = document;
        // Offsets as TextDocument.update reads the range (clamped, start before end); points from
        // the offsets. An edit right after a `\r` starts at it: whether it ends a line may change.
        const [a, b] = [before.offsetAt(change.range.start), before.offsetAt(change.range.end)];
        const [changeStart, oldEndIndex] = a <= b ? [a, b] : [b, a];
        const startIndex =
          changeStart > 0 && before.getText().charCodeAt(changeStart - 1) === 13 ? changeStart - 1 : changeStart;
        const newEndIndex = changeStart + change.text.length;
        const point = ({ line, character }: { line: number; character: number }) => ({ row: line, column: character });
        // Read before the update, which changes the document in place: the old end is a place in the old text.
        const startPosition = point(before.positionAt(startIndex));
        const oldEndPosition = point(before.positionAt(oldEndIndex));
        document = TextDocument.update(before, [change], version);
        edits?.push({
          startIndex,
          oldEndIndex,
          newEndIndex,
          startPosition,
          oldEndPosition,
          newEndPosition: point(document.positionAt(newEndIndex)),
        });
      } else {
        document = TextDocument.update(document, [change], version);
        edits = null;
      }
    }
    this.documents.set(uri, document);
    const text = document.getText();
    // Far past the limit (UTF-16 units, at most 3 bytes each): not analysed, and not worth keeping.
    if (text.length > 2 * this.limits().maxBytes) {
      this.documents.set(uri, TextDocument.create(uri, document.languageId, version, ''));
      this.dropText(uri, tooManyBytes(Buffer.byteLength(text, 'utf8'), this.limits()));
      return true;
    }
    this.analyse(uri, version, text, edits);
    return true;
  }

  close(uri: string): void {
    this.documents.delete(uri);
    this.oversize.delete(uri);
    this.textless.delete(uri);
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

  /** See DocumentSessions.unsettled and settle: a version whose tree a fresh parse elsewhere checks. */
  unsettled(uri: string): { version: number; text: string } | null {
    return this.sessions.unsettled(uri);
  }

  settle(uri: string, version: number, freshShape: string): 'same' | 'parsed again' | 'stale' {
    return this.sessions.settle(uri, version, freshShape);
  }

  dispose(): void {
    this.documents.clear();
    this.oversize.clear();
    this.textless.clear();
    this.sessions.dispose();
  }
}
