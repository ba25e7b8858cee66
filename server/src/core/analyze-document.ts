/**
 * One document's facts, computed once per version from its text and syntax
 * tree: the kernels, the launches and the regions the grammar could not parse.
 * Every feature (hover, lens, diagnostics, CLI) reads these.
 */
import type { Tree } from 'web-tree-sitter';
import type { Kernel, Launch, Span } from './types';
import { makeSourceText, type SourceText } from './source-text';
import { findKernels } from './kernel-finder';
import { findLaunches } from './launch-finder';
import { collectConstants, makeLookup } from './constant-table';
import type { Lookup } from './const-eval';

export interface DocumentFacts {
  uri: string;
  version: number;
  source: SourceText;
  kernels: Kernel[];
  launches: Launch[];
  /** Regions tree-sitter-cuda marked as ERROR or MISSING (its grammar has gaps). */
  parseErrors: Span[];
}

export interface AnalyzeInput {
  uri: string;
  version: number;
  text: string;
  tree: Tree | null;
  /** Constants from included headers and the rest of the workspace. */
  workspaceLookup?: Lookup;
}

export function analyzeDocument({ uri, version, text, tree, workspaceLookup }: AnalyzeInput): DocumentFacts {
  const source = makeSourceText(text);
  const fileConstants = collectConstants(source);
  const lookup = makeLookup([fileConstants], workspaceLookup);
  return {
    uri,
    version,
    source,
    kernels: findKernels(source, { lookup }),
    launches: findLaunches(source, { fileConstants, fallback: workspaceLookup }),
    parseErrors: tree ? collectParseErrors(tree) : [],
  };
}

function collectParseErrors(tree: Tree, limit = 100): Span[] {
  const spans: Span[] = [];
  if (!tree.rootNode.hasError) return spans;
  const cursor = tree.walk();
  let visitedChildren = false;
  for (;;) {
    const node = cursor.currentNode;
    if (!visitedChildren && (node.isError || node.isMissing)) {
      spans.push({
        start: { line: node.startPosition.row, character: node.startPosition.column },
        end: { line: node.endPosition.row, character: node.endPosition.column },
      });
      if (spans.length >= limit) break;
      visitedChildren = true;
    }
    if (!visitedChildren && node.hasError && cursor.gotoFirstChild()) continue;
    if (cursor.gotoNextSibling()) {
      visitedChildren = false;
      continue;
    }
    if (!cursor.gotoParent()) break;
    visitedChildren = true;
  }
  cursor.delete();
  return spans;
}
