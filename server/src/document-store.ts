/**
 * Open documents: text, syntax tree and facts, one set per version. Edits are
 * applied incrementally (tree.edit + parse with the old tree); facts are
 * computed on first use of a version and then only read.
 */
import { TextDocument, type TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';
import type { CudaParser, Tree } from './core/cuda-parser';
import { analyzeDocument, type AnalyzeInput, type DocumentFacts } from './core/analyze-document';

interface Entry {
  document: TextDocument;
  tree: Tree | null;
  facts: DocumentFacts | null;
}

export interface DocumentStoreOptions {
  parser: CudaParser;
  /** Inputs beyond the text and tree: the workspace index, target limits, switches. Called once per analysed version. */
  analyzeOptions?: (uri: string, text: string) => Partial<Omit<AnalyzeInput, 'uri' | 'version' | 'text' | 'tree'>>;
  log?: (message: string) => void;
}

export class DocumentStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: DocumentStoreOptions) {}

  open(uri: string, languageId: string, version: number, text: string): void {
    this.drop(uri);
    this.entries.set(uri, { document: TextDocument.create(uri, languageId, version, text), tree: null, facts: null });
  }

  change(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): void {
    const entry = this.entries.get(uri);
    if (!entry) return;
    let tree = entry.tree;
    for (const change of changes) {
      if (tree && 'range' in change) {
        const before = entry.document;
        const startIndex = before.offsetAt(change.range.start);
        const oldEndIndex = before.offsetAt(change.range.end);
        const newEndIndex = startIndex + change.text.length;
        entry.document = TextDocument.update(before, [change], version);
        const newEnd = entry.document.positionAt(newEndIndex);
        tree.edit({
          startIndex,
          oldEndIndex,
          newEndIndex,
          startPosition: { row: change.range.start.line, column: change.range.start.character },
          oldEndPosition: { row: change.range.end.line, column: change.range.end.character },
          newEndPosition: { row: newEnd.line, column: newEnd.character },
        });
      } else {
        entry.document = TextDocument.update(entry.document, [change], version);
        tree?.delete();
        tree = null;
      }
    }
    entry.tree = tree;
    entry.facts = null;
  }

  close(uri: string): void {
    this.drop(uri);
  }

  has(uri: string): boolean {
    return this.entries.has(uri);
  }

  uris(): string[] {
    return [...this.entries.keys()];
  }

  version(uri: string): number | undefined {
    return this.entries.get(uri)?.document.version;
  }

  /** Facts of the current version, computed on first use. */
  facts(uri: string): DocumentFacts | undefined {
    const entry = this.entries.get(uri);
    if (!entry) return undefined;
    if (entry.facts && entry.facts.version === entry.document.version) return entry.facts;
    const text = entry.document.getText();
    const old = entry.tree;
    entry.tree = this.parse(text, old);
    if (old && old !== entry.tree) old.delete();
    entry.facts = analyzeDocument({
      ...this.options.analyzeOptions?.(uri, text),
      uri,
      version: entry.document.version,
      text,
      tree: entry.tree,
    });
    return entry.facts;
  }

  /** Drop cached facts (after a change elsewhere in the workspace or new compiler figures). */
  invalidate(uri?: string): void {
    for (const [key, entry] of this.entries) if (uri === undefined || key === uri) entry.facts = null;
  }

  tree(uri: string): Tree | null {
    this.facts(uri);
    return this.entries.get(uri)?.tree ?? null;
  }

  dispose(): void {
    for (const uri of [...this.entries.keys()]) this.drop(uri);
  }

  private parse(text: string, old: Tree | null): Tree | null {
    try {
      return this.options.parser.parse(text, old ?? undefined);
    } catch (error) {
      this.options.log?.(`parse failed, analysing without a syntax tree: ${String(error)}`);
      return null;
    }
  }

  private drop(uri: string): void {
    this.entries.get(uri)?.tree?.delete();
    this.entries.delete(uri);
  }
}
