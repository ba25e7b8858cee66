/**
 * Views of syntax nodes (syntax-view.ts): what a view reads is what its node gives, and each node
 * has one view however it is reached. (That a walk over views stays optimized is engine-seams.test.ts's.)
 */
import * as assert from 'node:assert/strict';
import { parseCuda } from '../support/grammar';
import type { SyntaxNode } from '../../server/src/core/syntax/cuda-parser';
import { SyntaxViews, type NodeView } from '../../server/src/core/syntax/syntax-view';

const SOURCE = `__global__ void k(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = 2;
  if (i < n) { a[i] = a[i] * 2.0f; } else return;
  for (int s = 16; s > 0; s >>= 1) a[i] += s;
}
`;

function same(view: NodeView, node: SyntaxNode): void {
  assert.equal(view.node, node);
  assert.equal(view.id, node.id);
  assert.equal(view.type, node.type);
  assert.equal(view.text, node.text);
  assert.equal(view.startIndex, node.startIndex);
  assert.equal(view.endIndex, node.endIndex);
  assert.deepEqual(view.startPosition, node.startPosition);
  assert.deepEqual(view.endPosition, node.endPosition);
  assert.deepEqual(
    view.namedChildren.map((c) => c.id),
    node.namedChildren.map((c) => c!.id),
  );
  for (const field of [
    'body',
    'condition',
    'consequence',
    'alternative',
    'left',
    'right',
    'operator',
    'value',
    'declarator',
    'nonsense',
  ]) {
    assert.equal(view.childForFieldName(field)?.id, node.childForFieldName(field)?.id, `${node.type}.${field}`);
  }
  assert.deepEqual(
    view.childrenForFieldName('declarator').map((c) => c.id),
    node.childrenForFieldName('declarator').map((c) => c!.id),
  );
  assert.equal(view.parent?.id, node.parent?.id);
  assert.equal(view.nextNamedSibling?.id, node.nextNamedSibling?.id);
  assert.equal(view.child(0)?.id, node.child(0)?.id);
}

describe('syntax views', () => {
  it('read what the nodes give, read once or twice', async () => {
    const tree = await parseCuda(SOURCE);
    const views = new SyntaxViews(tree);
    const visit = (node: SyntaxNode) => {
      const view = views.view(node);
      same(view, node);
      same(view, node);
      for (const c of node.namedChildren) if (c) visit(c);
    };
    visit(tree.rootNode);
    tree.delete();
  });

  it('give one view per node, however it is reached', async () => {
    const tree = await parseCuda(SOURCE);
    const views = new SyntaxViews(tree);
    const root = views.view(tree.rootNode);
    const definition = root.namedChildren[0];
    const body = definition.childForFieldName('body')!;
    assert.equal(
      body,
      definition.namedChildren.find((c) => c.type === 'compound_statement'),
    );
    assert.equal(body.parent, definition);
    assert.equal(views.view(body.node.namedChildren[0]!), body.namedChildren[0]);
    const other = await parseCuda(SOURCE);
    assert.throws(() => views.view(other.rootNode), /another tree/, 'node ids are unique within one tree only');
    other.delete();
    tree.delete();
  });
});
