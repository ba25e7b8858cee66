/**
 * A file with a parse error outside its kernels (real code: 42% of a corpus's files have one)
 * keeps the results of the kernels an edit did not touch, and its incremental results equal a
 * fresh analysis of the same text.
 */
import * as assert from 'node:assert/strict';
import { documentView } from '../../server/src/core/incremental/unit-facts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DocumentStore } from '../../server/src/lsp/document-store';
import { keptTables } from '../../server/src/core/incremental/kept-tables';
import { getCudaParser } from '../support/grammar';
import { bodyPasses, completeFacts, freshFacts } from '../support/incremental';
import { treeShape, type Tree } from '../../server/src/core/syntax/cuda-parser';

const URI = 'file:///parse-error.cu';
const TEXT = readFileSync(
  join(__dirname, '..', '..', '..', 'test', 'fixtures', 'incremental', 'parse-error.cu'),
  'utf8',
);

/** Parses of a whole text from scratch so far in this process. */
const fromScratch = () => keptTables().find((t) => t.name === 'parses from scratch')!.size!;

/** `text` with `insert` typed at `line`:`character`. */
function typed(text: string, line: number, character: number, insert: string): string {
  const lines = text.split('\n');
  lines[line] = lines[line].slice(0, character) + insert + lines[line].slice(character);
  return lines.join('\n');
}

/** The 0-based line of the first line of `text` that includes `needle`. */
function lineOf(text: string, needle: string): number {
  const line = text.split('\n').findIndex((l) => l.includes(needle));
  assert.ok(line >= 0, `the fixture has ${needle}`);
  return line;
}

describe('incremental analysis of a file with a parse error outside its kernels', () => {
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

  /** Types `insert` at the start of the line holding `at`, as a client does. */
  function type(at: string, insert: string, character = 0): void {
    const line = lineOf(text, at);
    store.change(URI, ++version, [{ range: { start: { line, character }, end: { line, character } }, text: insert }]);
    text = typed(text, line, character, insert);
  }

  it('has the parse error the test is about, and three kernels with branches', () => {
    const facts = completeFacts(store, URI);
    assert.equal(facts.parseErrors.length, 1);
    assert.equal(facts.parseErrors[0].start.line, lineOf(TEXT, 'void broken_setup'));
    assert.deepEqual(
      facts.kernels.map((k) => k.name),
      ['first_pass', 'second_pass', 'third_pass'],
    );
    assert.deepEqual([...new Set(facts.branches.map((b) => b.kernel))].sort(), [
      'first_pass',
      'second_pass',
      'third_pass',
    ]);
  });

  it('analyses again only the kernel an edit changed; the others keep their results', () => {
    completeFacts(store, URI);
    const before = bodyPasses();
    // On one line: kernels whose branches reach into a __device__ function are kept where they are.
    type('data[i] += 1.0f;', 'data[i] *= 2.0f; ');
    const after = completeFacts(store, URI);
    // second_pass's memory-level parallelism and its branches: nothing of first_pass or third_pass.
    assert.equal(bodyPasses() - before, 2);
    assert.ok(
      after.branches.some((b) => b.kernel === 'first_pass') && after.branches.some((b) => b.kernel === 'third_pass'),
    );
  });

  it('analyses again the kernels that call a __device__ function an edit changed, not the others', () => {
    completeFacts(store, URI);
    const before = bodyPasses();
    type('if (lane % 2 == 0)', 'x = x * 1.0f; ');
    completeFacts(store, URI);
    // first_pass and third_pass call scaled (two passes each); second_pass does not.
    assert.equal(bodyPasses() - before, 4);
  });

  it('gives the same facts as a fresh analysis after each edit: in a kernel, in the broken function, above everything, in the helper', async () => {
    completeFacts(store, URI);
    const edits: Array<[string, string, number?]> = [
      ['data[i] += 1.0f;', '    data[i] *= 2.0f;\n'],
      ['first_pass<<<blocks, BLOCK>>>', '  blocks += 1;\n'],
      ['#define BLOCK', '// a comment that moves every kernel down\n'],
      ['return x;', '  if (lane > 8) x = -x;\n'],
      ['for (int k = threadIdx.x; k < n; k += blockDim.x)', '  if (threadIdx.x == 0) v = 1.0f;\n'],
      // A second error, inside third_pass: that kernel is read as error recovery shapes it.
      ['out[i] = v;', '  v = (v + ;\n'],
      ['int i = blockIdx.x * blockDim.x + threadIdx.x;', 'x'],
      // The first error closed: the file parses with the one inside third_pass only.
      ['void broken_setup(int n', ')', 'void broken_setup(int n'.length],
    ];
    for (const [at, insert, character] of edits) {
      type(at, insert, character);
      assert.deepEqual(
        completeFacts(store, URI),
        await freshFacts(URI, text, version),
        `after typing ${JSON.stringify(insert)}`,
      );
    }
    assert.equal(completeFacts(store, URI).parseErrors.length > 0, true, 'the edits leave the file with an error');
  });
});

describe('incremental parse of a file with a parse error', () => {
  /** `text` with `insert` typed at the start of the line holding `at`: the new text and the old tree edited to match. */
  function edited(tree: Tree, text: string, at: string, insert: string): string {
    const row = lineOf(text, at);
    const index = text.split('\n').slice(0, row).join('\n').length + 1;
    tree.edit({
      startIndex: index,
      oldEndIndex: index,
      newEndIndex: index + insert.length,
      startPosition: { row, column: 0 },
      oldEndPosition: { row, column: 0 },
      newEndPosition: { row, column: insert.length },
    });
    return text.slice(0, index) + insert + text.slice(index);
  }

  it('parses from scratch an edit next to the item with the error', async () => {
    const parser = await getCudaParser();
    const old = parser.parse(TEXT);
    // second_pass follows broken_setup, which error recovery built (fragile).
    const text = edited(old, TEXT, 'data[i] += 1.0f;', 'data[i] *= 2.0f; ');
    const before = fromScratch();
    const now = parser.parse(text, old);
    const fresh = parser.parse(text);
    try {
      assert.equal(fromScratch() - before, 2, 'the edit and the fresh parse');
      assert.equal(now.rootNode.toString(), fresh.rootNode.toString());
    } finally {
      for (const t of [old, now, fresh]) t.delete();
    }
  });

  for (const [what, insert] of [
    ['an edit that parses', 'v *= 2.0f; '],
    ['an edit that adds an error in the kernel', 'v = (v + ; '],
  ] as const) {
    it(`keeps an incremental parse two items away from the error, the tree a fresh parse gives: ${what}`, async () => {
      const parser = await getCudaParser();
      const old = parser.parse(TEXT);
      // In third_pass, two items away from the error.
      const text = edited(old, TEXT, 'out[i] = v;', insert);
      const before = fromScratch();
      const now = parser.parse(text, old);
      const parsedAgain = fromScratch() - before;
      const fresh = parser.parse(text);
      try {
        assert.equal(now.rootNode.toString(), fresh.rootNode.toString());
        assert.equal(parsedAgain, 0, 'the incremental parse is kept');
      } finally {
        for (const t of [old, now, fresh]) t.delete();
      }
    });
  }
});

describe('an incremental parse near an error, settled by a fresh parse elsewhere', () => {
  let store: DocumentStore;
  let version: number;
  let text: string;
  /** The shape of a fresh parse of the text the store's tree is of (the unit's parse view of `t`). */
  const shapeOfFresh = async (t: string) => {
    const fresh = (await getCudaParser()).parse(documentView(URI, t, undefined).parseView);
    try {
      return treeShape(fresh);
    } finally {
      fresh.delete();
    }
  };

  beforeEach(async () => {
    store = new DocumentStore({ parser: await getCudaParser(), settleLater: true });
    version = 1;
    text = TEXT;
    store.open(URI, 'cuda-cpp', version, text);
    completeFacts(store, URI);
  });
  afterEach(() => store.dispose());

  /** Types next to the item with the error: an incremental parse that settledAround cannot vouch for. */
  function typeNextToTheError(): void {
    const line = lineOf(text, 'data[i] += 1.0f;');
    store.change(URI, ++version, [
      { range: { start: { line, character: 0 }, end: { line, character: 0 } }, text: 'x' },
    ]);
    text = typed(text, line, 0, 'x');
  }

  it('answers from the incremental parse at once, and waits for the fresh parse of that version', async () => {
    const before = fromScratch();
    typeNextToTheError();
    const facts = completeFacts(store, URI);
    assert.equal(fromScratch() - before, 0, 'not parsed again from scratch');
    assert.deepEqual(store.unsettled(URI), { version, text: documentView(URI, text, undefined).parseView });
    assert.deepEqual(facts, await freshFacts(URI, text, version));
  });

  it('is settled when the fresh parse has the same shape, and stays an edit away from one that was not', async () => {
    typeNextToTheError();
    completeFacts(store, URI);
    typeNextToTheError();
    completeFacts(store, URI);
    assert.equal(store.settle(URI, version - 1, await shapeOfFresh(text)), 'stale', 'an older version');
    assert.ok(store.unsettled(URI), 'an edit of an unsettled tree is not settled either');
    assert.equal(store.settle(URI, version, await shapeOfFresh(text)), 'same');
    assert.equal(store.unsettled(URI), null);
  });

  it('parses the version again from scratch when the fresh parse differs, and then gives its facts', async () => {
    typeNextToTheError();
    completeFacts(store, URI);
    const before = fromScratch();
    assert.equal(store.settle(URI, version, 'another shape'), 'parsed again');
    const facts = completeFacts(store, URI);
    assert.equal(fromScratch() - before, 1);
    assert.equal(store.unsettled(URI), null);
    assert.deepEqual(facts, await freshFacts(URI, text, version));
  });
});
