/**
 * Between two keystrokes no syntax node is alive. V8 forgets the hidden class of a kind of object
 * when a full collection finds none alive, and deoptimizes the code optimized against it: each full
 * collection used to throw away the optimized tree walks (see keepShapesAlive in cuda-parser.ts).
 */
import { assertWalkStaysOptimized } from '../support/optimization-status';

describe('syntax node shapes', function () {
  this.timeout(60000);

  it('keeps a tree walk optimized across full collections when no tree is alive', () => {
    assertWalkStaysOptimized({
      count: 'function count(node) { let n = 1; for (let c = node.firstChild; c; c = c.nextSibling) n += count(c); return n; }',
      root: 'tree.rootNode',
    });
  });
});
