/**
 * Open documents: text, syntax tree and facts, one set per version. Edits are
 * applied incrementally (tree.edit + parse with the old tree); facts are
 * computed on first use of a version and then only read.
 */
import { TextDocument, type TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';
import type { CudaParser, Tree } from '../core/syntax/cuda-parser';
import type { Position } from '../core/types';
import { analyzeResumable, type AnalyzeInput, type DocumentFacts, type ResumableAnalysis } from '../core/facts/document-facts';
import { KernelAnalysisCache } from '../core/incremental/kernel-analysis-cache';
import { TextPassCache } from '../core/incremental/chunked-text-passes';

interface Entry {
  document: TextDocument;
  tree: Tree | null;
  facts: DocumentFacts | null;
  /** Goes on with the current facts' pending kernel bodies; it reads `tree`, so it goes whenever the tree does. */
  resume: ResumableAnalysis['resume'];
  /** Per-kernel results of earlier versions: an edit re-analyses only the kernel it touched. */
  kernels: KernelAnalysisCache;
  /** Per-chunk text-pass results of earlier versions: an edit re-reads only the chunk it fell in. */
  chunks: TextPassCache;
}

export interface DocumentStoreOptions {
  parser: CudaParser;
  /** Inputs beyond the text and tree: the workspace index, target limits, switches. Called once per analysed version. */
  analyzeOptions?: (uri: string, text: string) => Partial<Omit<AnalyzeInput, 'uri' | 'version' | 'text' | 'tree'>>;
  log?: (message: string) => void;
  /** Milliseconds a version's first analysis spends on kernel bodies it has not seen (default: no limit). */
  treePassBudgetMs?: number;
  /** A document's analysis was forgotten to save memory (it is analysed again when asked): drop what was built on it. */
  onForget?: (uri: string) => void;
}

/**
 * Syntax trees kept for incremental parsing. A 10k-line file's tree takes about
 * 13 MB of WebAssembly memory (which never shrinks); documents beyond the most
 * recently analysed two keep their facts and text, and parse from scratch on
 * their next change.
 */
const TREES_KEPT = 2;

/**
 * Documents whose analysis (facts and the per-chunk and per-kernel results kept
 * between versions, about 8 MB for a 10k-line file) is kept: the ones in use. The
 * others keep their text and are analysed again when asked (a first pass).
 */
const ANALYSES_KEPT = 4;

/**
 * What a version's first analysis spends on kernel bodies it has not seen before (the server's
 * setting): none beyond the one kernel each pass always takes, which is the kernel a keystroke
 * changed; a newly opened file's kernels all follow in background slices.
 */
export const FIRST_PASS_BUDGET_MS = 0;
/** One background slice of kernel-body analysis (see DocumentStore.complete). */
export const BACKGROUND_SLICE_MS = 60;

export class DocumentStore {
  private readonly entries = new Map<string, Entry>();
  /** URIs whose entry holds a tree, least recently analysed first. */
  private readonly withTrees = new Set<string>();
  /** URIs whose analysis is kept, least recently used first. */
  private readonly inUse = new Set<string>();

  constructor(private readonly options: DocumentStoreOptions) {}

  open(uri: string, languageId: string, version: number, text: string): void {
    this.drop(uri);
    this.entries.set(uri, { document: TextDocument.create(uri, languageId, version, text), tree: null, facts: null, resume: null, kernels: new KernelAnalysisCache(), chunks: new TextPassCache() });
  }

  change(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): void {
    const entry = this.entries.get(uri);
    if (!entry) return;
    let tree = entry.tree;
    for (const change of changes) {
      if (tree && 'range' in change) {
        const before = entry.document;
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
        entry.document = TextDocument.update(before, [change], version);
        tree.edit({ startIndex, oldEndIndex, newEndIndex, startPosition, oldEndPosition, newEndPosition: point(entry.document.positionAt(newEndIndex)) });
      } else {
        entry.document = TextDocument.update(entry.document, [change], version);
        tree?.delete();
        tree = null;
      }
    }
    entry.tree = tree;
    entry.facts = null;
    entry.resume = null;
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

  text(uri: string): string | undefined {
    return this.entries.get(uri)?.document.getText();
  }

  version(uri: string): number | undefined {
    return this.entries.get(uri)?.document.version;
  }

  /**
   * Facts of the current version, computed on first use. Kernel bodies not seen before are
   * analysed for at most `treePassBudgetMs`; `pendingKernels` counts the rest (see `complete`).
   */
  facts(uri: string): DocumentFacts | undefined {
    const entry = this.entries.get(uri);
    if (!entry) return undefined;
    this.keepAnalysis(uri);
    if (entry.facts && entry.facts.version === entry.document.version) return entry.facts;
    return this.analyze(uri, entry, this.options.treePassBudgetMs ?? Infinity);
  }

  /** Marks `uri` as in use; forgets the analysis of the least recently used beyond ANALYSES_KEPT. */
  private keepAnalysis(uri: string): void {
    this.inUse.delete(uri);
    this.inUse.add(uri);
    for (const oldest of this.inUse) {
      if (this.inUse.size <= ANALYSES_KEPT) break;
      this.inUse.delete(oldest);
      const entry = this.entries.get(oldest);
      if (!entry) continue;
      entry.facts = null;
      entry.resume = null;
      entry.kernels = new KernelAnalysisCache();
      entry.chunks = new TextPassCache();
      this.options.onForget?.(oldest);
    }
  }

  /**
   * Analyse more of the current version's pending kernel bodies, for at most `budgetMs`, first the
   * one around `at` (a request waits for it); the facts then replace the earlier ones of the same
   * version. False when nothing is pending.
   */
  complete(uri: string, budgetMs: number, at?: Position): boolean {
    const entry = this.entries.get(uri);
    const facts = entry && this.facts(uri);
    if (!entry || !facts || facts.pendingKernels === 0) return false;
    if (!entry.resume) {
      this.analyze(uri, entry, budgetMs); // its tree was given back: parse and read the text again
      return true;
    }
    const next = entry.resume(budgetMs, at);
    entry.facts = next.facts;
    entry.resume = next.resume;
    return true;
  }

  private analyze(uri: string, entry: Entry, treePassBudgetMs: number): DocumentFacts {
    const text = entry.document.getText();
    const old = entry.tree;
    // A parse from scratch makes a tree that pushes out the least recently analysed one: pushed out
    // first, the parser's WebAssembly memory (which never shrinks) peaks one tree lower.
    if (!old) this.keepTrees(TREES_KEPT - 1);
    entry.tree = this.parse(text, old);
    if (old && old !== entry.tree) old.delete();
    const analysis = analyzeResumable({
      ...this.options.analyzeOptions?.(uri, text),
      uri,
      version: entry.document.version,
      text,
      tree: entry.tree,
      cache: entry.kernels,
      textCache: entry.chunks,
      treePassBudgetMs,
    });
    entry.facts = analysis.facts;
    entry.resume = analysis.resume;
    this.keepTree(uri);
    return entry.facts;
  }

  private keepTree(uri: string): void {
    this.withTrees.delete(uri);
    if (this.entries.get(uri)?.tree) this.withTrees.add(uri);
    this.keepTrees(TREES_KEPT);
  }

  /** Gives back the trees of the least recently analysed documents beyond the most recent `count`. */
  private keepTrees(count: number): void {
    for (const oldest of this.withTrees) {
      if (this.withTrees.size <= count) break;
      const entry = this.entries.get(oldest);
      entry?.tree?.delete();
      if (entry) {
        entry.tree = null;
        entry.resume = null;
      }
      this.withTrees.delete(oldest);
    }
  }

  /** Drop cached facts (after a change elsewhere in the workspace or new compiler figures). */
  invalidate(uri?: string): void {
    for (const [key, entry] of this.entries) {
      if (uri !== undefined && key !== uri) continue;
      entry.facts = null;
      entry.resume = null;
    }
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
    this.withTrees.delete(uri);
    this.inUse.delete(uri);
    this.entries.get(uri)?.tree?.delete();
    this.entries.delete(uri);
  }
}
