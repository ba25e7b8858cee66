/**
 * Real code's kernels that share a name (an overload per element type) and kernels with an error
 * of their own (a loop macro written like a `for` header) keep their results while a keystroke
 * changes another kernel, and the results equal a fresh analysis of the same text.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DocumentStore } from '../../server/src/lsp/document-store';
import { getCudaParser } from '../support/grammar';
import { bodyPasses, completeFacts, freshFacts } from '../support/incremental';

const URI = 'file:///macro-loops.cu';
const TEXT = readFileSync(
  join(__dirname, '..', '..', '..', 'test', 'fixtures', 'incremental', 'macro-loops.cu'),
  'utf8',
);

describe('incremental analysis of overloads and of kernels with an error of their own', () => {
  let store: DocumentStore;
  let text: string;
  let version: number;

  beforeEach(async () => {
    store = new DocumentStore({ parser: await getCudaParser() });
    text = TEXT;
    version = 1;
    store.open(URI, 'cuda-cpp', version, text);
  });
  afterEach(() => store.dispose());

  /** Types `insert` at `character` of the line holding `at`, as a client does. */
  function type(at: string, insert: string, character = 0): void {
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes(at));
    assert.ok(line >= 0, `the fixture has ${at}`);
    store.change(URI, ++version, [{ range: { start: { line, character }, end: { line, character } }, text: insert }]);
    lines[line] = lines[line].slice(0, character) + insert + lines[line].slice(character);
    text = lines.join('\n');
  }

  it('has what the test is about: two kernels named scale, and an error inside dropout only', () => {
    const facts = completeFacts(store, URI);
    assert.deepEqual(
      facts.kernels.filter((k) => k.isDefinition).map((k) => k.name),
      ['scale', 'scale', 'dropout', 'bias'],
    );
    assert.equal(facts.parseErrors.length, 1);
    const dropout = facts.kernels.find((k) => k.name === 'dropout')!;
    assert.ok(dropout.span.start.line < facts.parseErrors[0].start.line);
    assert.ok(facts.parseErrors[0].start.line < dropout.span.end.line);
    assert.deepEqual([...new Set(facts.branches.map((b) => b.kernel))].sort(), ['bias', 'dropout', 'scale']);
  });

  it('an edit in one overload analyses that one again, not the other of the same name', () => {
    completeFacts(store, URI);
    const before = bodyPasses();
    type('data[i] *= 2.0;', 'data[i] += 1.0; ', 2);
    completeFacts(store, URI);
    assert.equal(bodyPasses() - before, 2, "the double overload's two passes");
  });

  it('an edit in another kernel keeps the results of the kernel with an error of its own', () => {
    completeFacts(store, URI);
    const before = bodyPasses();
    type('out[i] += 1.0f;', 'out[i] *= 2.0f; ', 2);
    completeFacts(store, URI);
    assert.equal(bodyPasses() - before, 2, "bias's two passes");
  });

  it('an edit inside the macro loop analyses that kernel again', () => {
    completeFacts(store, URI);
    const before = bodyPasses();
    type('else out[j] = 0.0f;', 'out[j] += 0.0f; ', 4);
    completeFacts(store, URI);
    assert.equal(bodyPasses() - before, 2, "dropout's two passes");
  });

  it('gives the same facts as a fresh analysis after each edit', async () => {
    completeFacts(store, URI);
    const edits: Array<[string, string, number?]> = [
      ['if (threadIdx.x % 2 == 0)', '  if (threadIdx.x == 3) data[i] = 0.0f;\n'],
      ['const float keep', '  int spare = threadIdx.x;\n'],
      ['else out[j] = 0.0f;', '    if (threadIdx.x < 2) out[j] = 1.0f;\n'],
      ['__global__ void bias', '// a comment that moves the last kernel down\n'],
      // A second error, in the other overload: both scale kernels now hold one.
      ['data[i] *= 2.0;', '  data[i] = (data[i] + ;\n'],
      ['CUDA_1D_KERNEL_LOOP(j, n / 4)', 'x'],
    ];
    for (const [at, insert, character] of edits) {
      type(at, insert, character);
      assert.deepEqual(
        completeFacts(store, URI),
        await freshFacts(URI, text, version),
        `after typing ${JSON.stringify(insert)}`,
      );
    }
  });
});
