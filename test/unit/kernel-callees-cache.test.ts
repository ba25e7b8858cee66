/**
 * A kernel's body results are kept between versions while what its passes read stays the same,
 * the functions it calls included: `__device__` ones, and the file's other functions, which the
 * passes follow too (a `constexpr` function, which device code calls under
 * `--expt-relaxed-constexpr`; one that a macro marks `__device__`).
 */
import * as assert from 'node:assert/strict';
import { DocumentStore } from '../../server/src/lsp/document-store';
import { getCudaParser } from '../support/grammar';

const URI = 'file:///callees.cu';
const TEXT = `// called from the kernel under --expt-relaxed-constexpr
const int kN = 4;
constexpr float heavy(float x) {
  return x * 2.0f;
}

__global__ void split(float* out) {
  int t = threadIdx.x;
  float v = out[t];
  if (t % 2 == 0) {
    v = heavy(v);
  } else {
    v = v - 1.0f;
  }
  out[t] = v;
}
`;
const LOOP = '  for (int k = 0; k < 8; ++k) x = x * 1.0001f + __sinf(x);\n';

async function pathCosts(store: DocumentStore): Promise<number[]> {
  while (store.complete(URI, 1000));
  const branch = store.facts(URI)!.branches.find((b) => b.kind === 'divergent');
  assert.ok(branch, 'the branch on t % 2 is divergent');
  return branch.paths.map((p) => p.cost);
}

async function freshCosts(text: string): Promise<number[]> {
  const store = new DocumentStore({ parser: await getCudaParser() });
  store.open(URI, 'cuda-cpp', 1, text);
  try {
    return await pathCosts(store);
  } finally {
    store.dispose();
  }
}

/** `text` with `insert` typed at `line`:`character`, as a client applies the change. */
function typed(text: string, line: number, character: number, insert: string): string {
  const lines = text.split('\n');
  lines[line] = lines[line].slice(0, character) + insert + lines[line].slice(character);
  return lines.join('\n');
}

describe('kernel results kept between versions', () => {
  it('are read again when a function the kernel calls without __device__ (constexpr) changes', async () => {
    const store = new DocumentStore({ parser: await getCudaParser() });
    try {
      store.open(URI, 'cuda-cpp', 1, TEXT);
      const before = await pathCosts(store);
      store.change(URI, 2, [
        { range: { start: { line: 3, character: 0 }, end: { line: 3, character: 0 } }, text: LOOP },
      ]);
      const withLoop = typed(TEXT, 3, 0, LOOP);
      const after = await pathCosts(store);
      assert.deepEqual(after, await freshCosts(withLoop));
      assert.ok(after[0] > before[0], `the path through heavy costs more with the loop: ${before} -> ${after}`);
      // A quote before heavy's header: the file no longer defines the function the kernel calls.
      store.change(URI, 3, [
        { range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } }, text: '" ' },
      ]);
      const undefinedHeavy = await pathCosts(store);
      assert.deepEqual(undefinedHeavy, await freshCosts(typed(withLoop, 2, 0, '" ')));
      assert.ok(undefinedHeavy[0] < after[0], `the path no longer follows heavy: ${after} -> ${undefinedHeavy}`);
    } finally {
      store.dispose();
    }
  });
});
