/**
 * Whether a tree walk stays optimized across full collections when nothing it walked is alive: V8
 * forgets the hidden class of a kind of object when a full collection finds none alive, and
 * deoptimizes the code optimized against it (see core/incremental/engine-seams.ts).
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

/** V8's %GetOptimizationStatus bit for code optimized by TurboFan. */
const TURBOFANNED = 64;

/**
 * Runs, in a child (%-natives and gc() need their Node options), `count` (the source of a function
 * `count(root)`) over the tree `root` (an expression of `tree`, after `requires`) of 50 kernels:
 * optimized on the main thread, so that the status read is the compiled code's, not a compile
 * still under way on a busy machine; then two full collections with no tree alive. Asserts that
 * `count` was optimized before them and still is after.
 */
export function assertWalkStaysOptimized({
  requires = '',
  count,
  root,
}: {
  requires?: string;
  count: string;
  root: string;
}): void {
  const script = `
const { getCudaParser } = require(${JSON.stringify(path.join(__dirname, 'grammar.js'))});
${requires}
(async () => {
  const parser = await getCudaParser();
  ${count}
  const text = 'template <int N> __global__ void k(float* x) { int i = threadIdx.x; if (i < N) x[i] = 0; }\\n'.repeat(50);
  const parseAndWalk = () => { const tree = parser.parse(text); count(${root}); tree.delete(); };
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
  const run = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--no-concurrent-recompilation', '-e', script],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  const { before, after } = JSON.parse(run.stdout) as { before: number; after: number };
  assert.ok(before & TURBOFANNED, `the walk was optimized to begin with (status ${before})`);
  assert.ok(after & TURBOFANNED, `still optimized after two full collections (status ${after})`);
}
