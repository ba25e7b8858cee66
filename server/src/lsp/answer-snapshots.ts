/**
 * Answers that never wait for an analysis: each open document's latest completed report (a snapshot,
 * plain data the server's thread hands over), and the incremental changes made to the document since.
 * A hover, the code lenses and the code actions of a version newer than the snapshot's are answered
 * from the snapshot, their places carried through the changes (edit-mapping.ts); an answer about a
 * place an edit touched is dropped, and a hover says it is from an earlier version. The analysis of the
 * new version goes on meanwhile; when it completes, its snapshot replaces this one.
 */
import type {
  CodeAction,
  CodeActionParams,
  CodeLens,
  Hover,
  HoverParams,
  TextDocumentContentChangeEvent,
} from 'vscode-languageserver/node';
import type { DocumentReport, QuickFixContext, SourceText } from '../core/analyzer';
import { makeSourceText } from '../core/analyzer';
import { positionBefore, rangeAfter, type RangeChange } from './edit-mapping';
import { hoverAt } from './hover';
import { codeActions } from './code-actions';

/** What the server's thread hands over when a version's report is complete. */
export interface AnswerSnapshot {
  uri: string;
  version: number;
  report: DocumentReport;
  /** The code lenses of this version (null: lenses are off). */
  lenses: CodeLens[] | null;
  /** What the quick fixes of this version read of the rest of the workspace, recorded (see recordingContext). */
  fixContext: RecordedFixContext;
  /** The client shows actions that are not offered, greyed out (`codeAction.disabledSupport`). */
  disabledSupport: boolean;
}

/** The answers of QuickFixContext's functions, by argument, as the server's thread gave them. */
export interface RecordedFixContext {
  otherLaunches: Record<string, ReturnType<NonNullable<QuickFixContext['otherLaunches']>>>;
  macroBody: Record<string, string | null>;
  kernelsNamed: Record<string, ReturnType<NonNullable<QuickFixContext['kernelsNamed']>>>;
  fileText: Record<string, string | null>;
}

const kernelKey = (kernel: { qualifiedName: string; nameSpan: { start: { line: number; character: number } } }) =>
  `${kernel.qualifiedName}@${kernel.nameSpan.start.line}:${kernel.nameSpan.start.character}`;

/** A context that answers as `context` does and writes down each answer (what a snapshot carries). */
export function recordingContext(context: QuickFixContext): { context: QuickFixContext; recorded: RecordedFixContext } {
  const recorded: RecordedFixContext = { otherLaunches: {}, macroBody: {}, kernelsNamed: {}, fileText: {} };
  return {
    recorded,
    context: {
      otherLaunches:
        context.otherLaunches && ((k) => (recorded.otherLaunches[kernelKey(k)] = context.otherLaunches!(k))),
      macroBody: context.macroBody && ((name) => (recorded.macroBody[name] = context.macroBody!(name))),
      kernelsNamed: context.kernelsNamed && ((name) => (recorded.kernelsNamed[name] = context.kernelsNamed!(name))),
      fileText: context.fileText && ((file) => (recorded.fileText[file] = context.fileText!(file))),
    },
  };
}

/** A context that answers from what was recorded. */
export function replayingContext(recorded: RecordedFixContext): QuickFixContext {
  return {
    otherLaunches: (k) => recorded.otherLaunches[kernelKey(k)] ?? [],
    macroBody: (name) => recorded.macroBody[name] ?? null,
    kernelsNamed: (name) => recorded.kernelsNamed[name] ?? [],
    fileText: (file) => recorded.fileText[file] ?? null,
  };
}

/**
 * The document's text as a snapshot carries it: without its masked copy (a second copy of the text,
 * an eighth of a 25k-line snapshot), which only the quick fixes read; the snapshot's holder works it
 * out when they first do (withMaskOnUse).
 */
export function withoutMask(source: SourceText): SourceText {
  const { masked: _masked, ...rest } = source;
  return rest as SourceText;
}

/** A snapshot's text whose masked copy is worked out when first read (see withoutMask). */
function withMaskOnUse(source: SourceText): void {
  if (typeof (source as Partial<SourceText>).masked === 'string') return;
  let masked: string | null = null;
  Object.defineProperty(source, 'masked', {
    get: () => (masked ??= makeSourceText(source.text).masked),
    enumerable: true,
    configurable: true,
  });
}

/** Marks a hover answered from an earlier version than the one shown. */
export const STALE_HOVER_NOTE = '*From the analysis of an earlier version: the latest edits are being analysed.*';

const MAX_CHANGES_KEPT = 10_000;

interface Kept {
  /** The version the client has now. */
  version: number;
  /** The latest version whose diagnostics the server's thread published: it has analysed it, and answers it itself. */
  published: number | null;
  /** Changes since the snapshot's version, in order, each with the version it made (null: it replaced the whole text, and nothing before it maps). */
  changes: Array<{ version: number; change: RangeChange | null }>;
  snapshot: AnswerSnapshot | null;
}

export class AnswerSnapshots {
  private readonly documents = new Map<string, Kept>();

  opened(uri: string, version: number): void {
    this.documents.set(uri, { version, changes: [], snapshot: null, published: null });
  }

  changed(uri: string, version: number, changes: readonly TextDocumentContentChangeEvent[]): void {
    const kept = this.documents.get(uri);
    if (!kept || version <= kept.version) return;
    kept.version = version;
    for (const change of changes)
      kept.changes.push({ version, change: 'range' in change ? { range: change.range, text: change.text } : null });
    // A document the analysis never catches up with (a burst of edits): past this many, nothing earlier maps.
    if (kept.changes.length > MAX_CHANGES_KEPT) kept.changes = [{ version, change: null }];
  }

  /** The server's thread published the diagnostics of `version`: until the client moves on, it answers that version itself. */
  published(uri: string, version: number | undefined): void {
    const kept = this.documents.get(uri);
    if (kept && version !== undefined) kept.published = version;
  }

  closed(uri: string): void {
    this.documents.delete(uri);
  }

  /** A completed report: it replaces an older one, and the changes up to its version are forgotten. */
  completed(snapshot: AnswerSnapshot): void {
    const kept = this.documents.get(snapshot.uri);
    if (!kept || snapshot.version > kept.version || (kept.snapshot && kept.snapshot.version > snapshot.version)) return;
    withMaskOnUse(snapshot.report.facts.source);
    kept.snapshot = snapshot;
    kept.changes = kept.changes.filter((c) => c.version > snapshot.version);
  }

  /** The snapshot and changes to answer from: only while the document has moved on from a snapshot that maps. */
  private behind(uri: string): { snapshot: AnswerSnapshot; changes: RangeChange[] } | null {
    const kept = this.documents.get(uri);
    if (!kept?.snapshot || kept.version === kept.snapshot.version || kept.published === kept.version) return null;
    const changes: RangeChange[] = [];
    for (const { change } of kept.changes) {
      if (!change) return null;
      changes.push(change);
    }
    return { snapshot: kept.snapshot, changes };
  }

  /** Whether a request on `uri` is answered here (from a snapshot of an earlier version) rather than by the analysis. */
  answersFor(uri: string): boolean {
    return this.behind(uri) !== null;
  }

  hover(params: HoverParams): Hover | null {
    const behind = this.behind(params.textDocument.uri);
    if (!behind) return null;
    const at = positionBefore(params.position, behind.changes);
    const hover = at && hoverAt(behind.snapshot.report, at);
    if (!hover?.range) return null;
    const range = rangeAfter(hover.range, behind.changes);
    if (!range) return null;
    const contents = hover.contents as { kind: string; value: string };
    return { contents: { kind: contents.kind, value: `${contents.value}\n\n${STALE_HOVER_NOTE}` }, range } as Hover;
  }

  codeLenses(uri: string): CodeLens[] {
    const behind = this.behind(uri);
    if (!behind?.snapshot.lenses) return [];
    const out: CodeLens[] = [];
    for (const lens of behind.snapshot.lenses) {
      const range = rangeAfter(lens.range, behind.changes);
      if (range) out.push({ ...lens, range });
    }
    return out;
  }

  codeActions(params: CodeActionParams): CodeAction[] {
    const uri = params.textDocument.uri;
    const behind = this.behind(uri);
    if (!behind) return [];
    const start = positionBefore(params.range.start, behind.changes);
    const end = positionBefore(params.range.end, behind.changes);
    if (!start || !end) return [];
    // The diagnostics the client sends are of its version: those of the snapshot's version that map to them.
    const diagnostics = params.context.diagnostics.flatMap((d) => {
      const s = positionBefore(d.range.start, behind.changes);
      const e = positionBefore(d.range.end, behind.changes);
      return s && e ? [{ ...d, range: { start: s, end: e } }] : [];
    });
    const actions = codeActions(behind.snapshot.report, { start, end }, diagnostics, {
      ...replayingContext(behind.snapshot.fixContext),
      disabledSupport: behind.snapshot.disabledSupport,
    });
    const out: CodeAction[] = [];
    for (const action of actions) {
      const mapped = this.actionAfter(action, uri, behind.changes, params);
      if (mapped) out.push(mapped);
    }
    return out;
  }

  /** An action of the snapshot's version on the current text: its edits in this document carried through the changes, or null when one was touched. */
  private actionAfter(
    action: CodeAction,
    uri: string,
    changes: RangeChange[],
    params: CodeActionParams,
  ): CodeAction | null {
    const mapped: CodeAction = { ...action };
    if (action.edit?.changes) {
      const edits: NonNullable<NonNullable<CodeAction['edit']>['changes']> = {};
      for (const [target, list] of Object.entries(action.edit.changes)) {
        if (target !== uri) {
          edits[target] = list;
          continue;
        }
        const moved = [];
        for (const e of list) {
          const range = rangeAfter(e.range, changes);
          if (!range) return null;
          moved.push({ ...e, range });
        }
        edits[target] = moved;
      }
      mapped.edit = { changes: edits };
    }
    // The diagnostics an action fixes, as the client sent them (its version's ranges).
    if (action.diagnostics)
      mapped.diagnostics = params.context.diagnostics.filter((d) =>
        action.diagnostics!.some((a) => a.code === d.code && a.message === d.message),
      );
    return mapped;
  }
}
