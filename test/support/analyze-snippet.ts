/** Parse a `.cu` snippet and analyse it, the way the server does: in its translation unit, from the unit's view. */
import {
  analyzeDocument,
  type AnalyzeInput,
  type DocumentFacts,
} from '../../server/src/core/incremental/document-analysis';
import { documentView, type UnitContext } from '../../server/src/core/incremental/unit-facts';
import type { WorkspaceIndex } from '../../server/src/core/facts/workspace-index';
import { getCudaParser } from './grammar';
import type { CudaParser } from '../../server/src/core/syntax/cuda-parser';

export async function analyzeSnippet(text: string, extra: Partial<AnalyzeInput> = {}): Promise<DocumentFacts> {
  const parser = await getCudaParser();
  const path = extra.path ?? '/snippet.cu';
  const unit = extra.unit ?? (extra.workspace ? unitOf(extra.workspace, path) : undefined);
  const view = documentView(path, text, unit);
  const tree = parser.parse(view.parseView);
  try {
    return analyzeDocument({ uri: 'file:///snippet.cu', version: 1, text, tree, view, parser, path, unit, ...extra });
  } finally {
    tree.delete();
  }
}

/** The unit context a workspace index gives a document (what the analyzer gives one). */
export function unitOf(index: WorkspaceIndex, path: string): UnitContext {
  const main = index.unitsFor(path)[0] ?? null;
  return {
    sources: { read: (p) => index.text(p), byTail: (tail) => index.withTail(tail) },
    main,
    flags: { includeDirs: index.includeDirsOf(main ?? path) },
  };
}

/** A document analysed at once with a parser the caller holds (the CLI's way): its unit's view parsed, then read. */
export function analyzeParsed(
  parser: CudaParser,
  text: string,
  extra: Partial<AnalyzeInput> & { uri?: string } = {},
): DocumentFacts {
  const path = extra.path ?? (extra.uri ? extra.uri.replace(/^file:\/\//, '') : '/doc.cu');
  const unit = extra.unit ?? (extra.workspace ? unitOf(extra.workspace, path) : undefined);
  const view = documentView(path, text, unit);
  const tree = parser.parse(view.parseView);
  try {
    return analyzeDocument({ uri: 'file:///doc.cu', version: 1, text, tree, view, parser, path, unit, ...extra });
  } finally {
    tree.delete();
  }
}
