/**
 * Open documents' analyses, kept between edits: each document's syntax tree (edited and parsed
 * again incrementally), the facts of its current version (computed on first use, then only
 * read), and the per-chunk and per-kernel results an edit does not touch. What to keep of which
 * document, and for how long, is decided here; the text itself comes from the editor adapter.
 */
import { treeShape, type CudaParser, type TextEdit, type Tree } from '../syntax/cuda-parser';
import type { Position } from '../types';
import {
  analyzeResumable,
  type AnalyzeInput,
  type DocumentFacts,
  type ReadTexts,
  type ResumableAnalysis,
} from './document-analysis';
import { documentView } from './unit-facts';
import { commonPrefix, commonSuffix } from '../text/source-text';
import { KernelAnalysisCache } from './kernel-analysis-cache';

interface Entry {
  version: number;
  text: string;
  tree: Tree | null;
  /** The text `tree` was parsed from (the unit's parse view of an earlier version): the next parse edits it. */
  parsed: string | null;
  facts: DocumentFacts | null;
  /** Goes on with the current facts' pending kernel bodies; it reads `tree`, so it goes whenever the tree does. */
  resume: ResumableAnalysis['resume'];
  /** Per-kernel results of earlier versions: an edit re-analyses only the kernel it touched. */
  kernels: KernelAnalysisCache;
  /** The kernels read from earlier versions: an edit reads again only the functions it touched. */
  functions: KernelAnalysisCache;
  /** The tree is an incremental parse that may differ from a fresh one (see settleLater). */
  unsettled: boolean;
  /** The texts the last analysis read: the next one masks again only the lines around the edits since. */
  texts: ReadTexts | null;
}

export interface DocumentSessionsOptions {
  parser: CudaParser;
  /** Inputs beyond the text and tree: the workspace index, target limits, switches. Called once per analysed version. */
  analyzeOptions?: (uri: string, text: string) => Partial<Omit<AnalyzeInput, 'uri' | 'version' | 'text' | 'tree'>>;
  log?: (message: string) => void;
  /** Milliseconds a version's first analysis spends on kernel bodies it has not seen (default: no limit). */
  treePassBudgetMs?: number;
  /** Measures the budgets (the server's `performance.now`); without one, every analysis is complete. */
  clock?: () => number;
  /** A document's analysis was forgotten to save memory (it is analysed again when asked): drop what was built on it. */
  onForget?: (uri: string) => void;
  /**
   * Keep an incremental parse that error recovery may have made differ from a fresh parse, rather
   * than parse the whole text again before answering: the caller parses the version afresh
   * elsewhere (a worker thread) and hands its shape to `settle`. Without it, such a parse is
   * parsed again from scratch at once.
   */
  settleLater?: boolean;
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
/** One background slice of kernel-body analysis (see DocumentSessions.complete). */
export const BACKGROUND_SLICE_MS = 60;

export class DocumentSessions {
  private readonly entries = new Map<string, Entry>();
  /** URIs whose entry holds a tree, least recently analysed first. */
  private readonly withTrees = new Set<string>();
  /** URIs whose analysis is kept, least recently used first. */
  private readonly inUse = new Set<string>();

  constructor(private readonly options: DocumentSessionsOptions) {}

  open(uri: string, version: number, text: string): void {
    this.drop(uri);
    this.entries.set(uri, {
      version,
      text,
      tree: null,
      parsed: null,
      facts: null,
      resume: null,
      kernels: new KernelAnalysisCache(),
      functions: new KernelAnalysisCache(),
      unsettled: false,
      texts: null,
    });
  }

  /**
   * The document's new version. `edits` take the old text to the new one, in order (tree-sitter's
   * edits: offsets and points); null when the change is not known edit by edit (a whole new text):
   * the next analysis then parses from scratch.
   */
  update(uri: string, version: number, text: string, edits: readonly TextEdit[] | null): void {
    const entry = this.entries.get(uri);
    if (!entry) return;
    // The tree is of the unit's view, which an edit may change beyond what it touches (an `#endif`
    // typed turns lines on): the next analysis edits it by the difference of the two views.
    if (!edits) {
      entry.tree?.delete();
      entry.tree = null;
      entry.parsed = null;
    }
    entry.version = version;
    entry.text = text;
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
    return this.entries.get(uri)?.text;
  }

  version(uri: string): number | undefined {
    return this.entries.get(uri)?.version;
  }

  /**
   * Facts of the current version, computed on first use. Kernel bodies not seen before are
   * analysed for at most `treePassBudgetMs`; `pendingKernels` counts the rest (see `complete`).
   */
  facts(uri: string): DocumentFacts | undefined {
    const entry = this.entries.get(uri);
    if (!entry) return undefined;
    this.keepAnalysis(uri);
    if (entry.facts && entry.facts.version === entry.version) return entry.facts;
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
      entry.functions = new KernelAnalysisCache();
      entry.texts = null;
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
    const text = entry.text;
    const options = this.options.analyzeOptions?.(uri, text) ?? {};
    const view = documentView(options.path ?? uri, text, options.unit);
    let old = entry.tree;
    if (old && entry.parsed !== null) {
      const edit = editBetween(entry.parsed, view.parseView);
      if (edit) old.edit(edit);
    } else if (old) {
      old.delete();
      old = entry.tree = null;
    }
    // A parse from scratch makes a tree that pushes out the least recently analysed one: pushed out
    // first, the parser's WebAssembly memory (which never shrinks) peaks one tree lower.
    if (!old) this.keepTrees(TREES_KEPT - 1);
    entry.tree = entry.parsed === view.parseView && old ? old : this.parse(view.parseView, old, entry);
    entry.parsed = entry.tree ? view.parseView : null;
    if (old && old !== entry.tree) old.delete();
    const analysis = analyzeResumable({
      ...options,
      uri,
      version: entry.version,
      text,
      tree: entry.tree,
      view,
      parser: this.options.parser,
      cache: entry.kernels,
      functions: entry.functions,
      treePassBudgetMs,
      clock: this.options.clock,
      previous: entry.texts ?? undefined,
    });
    entry.texts = analysis.texts;
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
        entry.parsed = null;
        entry.resume = null;
      }
      this.withTrees.delete(oldest);
    }
  }

  /** Drop the facts of `uri`, or of every document (after a change elsewhere in the workspace or new settings). */
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

  /**
   * The version `settle` waits for, and the text its tree was parsed from (the unit's parse view of
   * it), when that tree is an incremental parse that may differ from a fresh one; else null.
   */
  unsettled(uri: string): { version: number; text: string } | null {
    const entry = this.entries.get(uri);
    return entry?.tree && entry.unsettled && entry.parsed !== null
      ? { version: entry.version, text: entry.parsed }
      : null;
  }

  /**
   * A fresh parse of `version`'s text had this `treeShape`: the same as the kept tree's, which
   * is then settled, or not, and the version is parsed again from scratch when next asked (its
   * facts may change: publish them again). Stale when the document moved on.
   */
  settle(uri: string, version: number, freshShape: string): 'same' | 'parsed again' | 'stale' {
    const entry = this.entries.get(uri);
    if (!entry?.tree || !entry.unsettled || entry.version !== version) return 'stale';
    entry.unsettled = false;
    if (treeShape(entry.tree) === freshShape) return 'same';
    entry.tree.delete();
    entry.tree = null;
    entry.parsed = null;
    entry.facts = null;
    entry.resume = null;
    this.withTrees.delete(uri);
    return 'parsed again';
  }

  private parse(text: string, old: Tree | null, entry: Entry): Tree | null {
    const parser = this.options.parser;
    try {
      if (old && this.options.settleLater && parser.parseIncremental) {
        const { tree, settled } = parser.parseIncremental(text, old);
        // An edit of a tree that was not settled is not either: settledAround assumes the old tree
        // was a fresh parse.
        entry.unsettled = entry.unsettled || !settled;
        return tree;
      }
      entry.unsettled = false;
      return parser.parse(text, old ?? undefined);
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

/** The one edit that takes `before` to `after` (their common prefix and suffix kept), or null when they are the same. */
export function editBetween(before: string, after: string): TextEdit | null {
  if (before === after) return null;
  const prefix = commonPrefix(before, after);
  const suffix = commonSuffix(before, after, Math.min(before.length, after.length) - prefix);
  const point = (text: string, offset: number) => {
    const row = countLines(text, offset);
    return { row, column: offset - (text.lastIndexOf('\n', offset - 1) + 1) };
  };
  return {
    startIndex: prefix,
    oldEndIndex: before.length - suffix,
    newEndIndex: after.length - suffix,
    startPosition: point(before, prefix),
    oldEndPosition: point(before, before.length - suffix),
    newEndPosition: point(after, after.length - suffix),
  };
}

function countLines(text: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
