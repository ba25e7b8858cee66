/**
 * The shape of a syntax subtree with errors, as text: along every path to an error, each node's
 * children with their type, field, extent (relative to the subtree's start) and whether error
 * recovery made them up. A child without an error is not read further: the grammar gives one
 * subtree for a symbol over a stretch of text (the same assumption that lets a clean kernel's
 * results be kept by its text). Two subtrees with the same text and the same shape read the same
 * to every pass over the tree, however error recovery arrived at them.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';

export function subtreeShape(node: SyntaxNode): string {
  const base = node.startIndex;
  const parts: number[] = [node.grammarId, node.endIndex - base];
  const cursor = node.walk();
  try {
    const visit = (): void => {
      if (!cursor.gotoFirstChild()) return;
      do {
        parts.push(
          cursor.nodeTypeId,
          cursor.currentFieldId,
          cursor.startIndex - base,
          cursor.endIndex - base,
          cursor.nodeIsMissing ? 1 : 0,
        );
        if (cursor.currentNode.hasError) {
          parts.push(-1);
          visit();
          parts.push(-2);
        }
      } while (cursor.gotoNextSibling());
      cursor.gotoParent();
    };
    visit();
  } finally {
    cursor.delete();
  }
  return parts.join(',');
}
