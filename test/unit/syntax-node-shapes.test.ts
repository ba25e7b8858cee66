/**
 * Between two keystrokes no syntax node is alive. V8 forgets the hidden class of a kind of object
 * when a full collection finds none alive, and deoptimizes the code optimized against it: each full
 * collection used to throw away the optimized tree walks (see keepShapesAlive in cuda-parser.ts).
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const GRAMMAR_SUPPORT = path.join(__dirname, '..', 'support', 'grammar.js');

/** V8's %GetOptimizationStatus bit for code optimized by TurboFan. */
const TURBOFANNED = 64;

// Run in a child: %-natives and gc() need their Node options. Optimized on the main thread, so that
// the status read next is the compiled code's, not a compile still under way on a busy machine.
const SCRIPT = `
const { getCudaParser } = require(${JSON.stringify(GRAMMAR_SUPPORT)});
(async () => {
  const parser = await getCudaParser();
  function count(node) { let n = 1; for (let c = node.firstChild; c; c = c.nextSibling) n += count(c); return n; }
  const text = 'template <int N> __global__ void k(float* x) { int i = threadIdx.x; if (i < N) x[i] = 0; }\\n'.repeat(50);
  const parseAndWalk = () => { const tree = parser.parse(text); count(tree.rootNode); tree.delete(); };
  %PrepareFunctionForOptimization(count);
  parseAndWalk();
  parseAndWalk();
  %OptimizeFunctionOnNextCall(count);
  parseAndWalk();
  const before = %GetOptimizationStatus(count);
  gc();
  gc();
  console.log(JSON.stringify({ before, after: %GetOptimizationStatus(count) }));
})();
`;

describe('syntax node shapes', function () {
  this.timeout(60000);

  it('keeps a tree walk optimized across full collections when no tree is alive', () => {
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--no-concurrent-recompilation', '-e', SCRIPT], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const { before, after } = JSON.parse(run.stdout) as { before: number; after: number };
    assert.ok(before & TURBOFANNED, `the walk was optimized to begin with (status ${before})`);
    assert.ok(after & TURBOFANNED, `still optimized after two full collections (status ${after})`);
  });
});
