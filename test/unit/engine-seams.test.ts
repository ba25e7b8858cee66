/**
 * The engine seams (server/src/core/incremental/engine-seams.ts) do what they are there for: V8
 * forgets the hidden class of a kind of object when a full collection finds none alive, and
 * deoptimizes the code optimized against it. Between two keystrokes no syntax node or view is
 * alive: without the seam, each full collection threw away the optimized tree walks.
 */
import * as path from 'node:path';
import { assertWalkStaysOptimized } from '../support/optimization-status';

describe('engine seams', function () {
  this.timeout(60000);

  it('keep a tree walk optimized across full collections when no tree is alive', () => {
    assertWalkStaysOptimized({
      count:
        'function count(node) { let n = 1; for (let c = node.firstChild; c; c = c.nextSibling) n += count(c); return n; }',
      root: 'tree.rootNode',
    });
  });

  it('keep a walk over syntax views optimized across full collections when no view of a tree is alive', () => {
    assertWalkStaysOptimized({
      requires: `const { SyntaxViews } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'server', 'src', 'core', 'syntax', 'syntax-view.js'))});`,
      count:
        "function count(v) { let n = v.type.length + v.endIndex; for (const c of v.namedChildren) n += count(c); return n + (v.childForFieldName('body') ? 1 : 0); }",
      root: 'new SyntaxViews(tree).view(tree.rootNode)',
    });
  });
});
