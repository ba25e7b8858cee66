/** The regions tree-sitter-cuda marked as ERROR or MISSING: its grammar has gaps, and the analysis says where. */
import type { Tree } from 'web-tree-sitter';
import type { Span } from '../types';
import { positionAt, type SourceText } from '../text/source-text';

export function collectParseErrors(tree: Tree, source: SourceText, limit = 100): Span[] {
  const spans: Span[] = [];
  if (!tree.rootNode.hasError) return spans;
  // From offsets, not tree points: a MISSING node can sit between the `\r` and `\n` of a
  // line end, which no LSP position names; it is moved before the `\r`.
  const at = (offset: number) =>
    positionAt(
      source,
      offset > 0 && source.text.charCodeAt(offset - 1) === 13 && source.text.charCodeAt(offset) === 10
        ? offset - 1
        : offset,
    );
  const cursor = tree.walk();
  let visitedChildren = false;
  for (;;) {
    const node = cursor.currentNode;
    if (!visitedChildren && (node.isError || node.isMissing)) {
      spans.push({ start: at(node.startIndex), end: at(node.endIndex) });
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
