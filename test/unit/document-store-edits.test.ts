/**
 * The tree is of the unit's view of the document, which a change may alter beyond the text it
 * touches (an `#endif` turns lines on): the next analysis edits the tree by the difference of the
 * two views, as tree-sitter's edit: offsets and points, the old end a place in the text before.
 */
import * as assert from 'node:assert/strict';
import type { Edit, Tree } from 'web-tree-sitter';
import { DocumentStore } from '../../server/src/lsp/document-store';
import { getCudaParser } from '../support/grammar';

const URI = 'file:///edits.cu';
const TEXT = '__global__ void k(int* a) {\n  int t = threadIdx.x;\n\n  a[t] = t;\n}\n';

/** The store, and each edit it gives the tree of the last version it parsed. */
async function storeSeeingEdits(): Promise<{ store: DocumentStore; edits: Edit[] }> {
  const parser = await getCudaParser();
  const edits: Edit[] = [];
  const seeing = (tree: Tree): Tree => {
    const edit = tree.edit.bind(tree);
    tree.edit = (e: Edit) => {
      edits.push(e);
      edit(e);
    };
    return tree;
  };
  const store = new DocumentStore({
    parser: {
      parse: (text, old) => seeing(parser.parse(text, old)),
      parseApart: (text) => parser.parseApart(text),
      dispose: () => undefined,
    },
  });
  store.open(URI, 'cuda-cpp', 1, TEXT);
  store.facts(URI);
  return { store, edits };
}

describe('DocumentStore edits', () => {
  it('gives the old end of a change that joins two lines as a place in the text before it', async () => {
    const { store, edits } = await storeSeeingEdits();
    // Backspace at the start of line 3: the empty line 2 goes.
    store.change(URI, 2, [{ range: { start: { line: 2, character: 0 }, end: { line: 3, character: 0 } }, text: '' }]);
    store.facts(URI);
    const start = TEXT.indexOf('\n\n') + 1;
    assert.deepEqual(edits, [
      {
        startIndex: start,
        oldEndIndex: start + 1,
        newEndIndex: start,
        startPosition: { row: 2, column: 0 },
        oldEndPosition: { row: 3, column: 0 },
        newEndPosition: { row: 2, column: 0 },
      },
    ]);
    store.dispose();
  });

  it('gives the new end of a change that adds a line as a place in the text after it', async () => {
    const { store, edits } = await storeSeeingEdits();
    store.change(URI, 2, [
      { range: { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } }, text: 'int u = 0;\n  int' },
    ]);
    store.facts(URI);
    // The two views differ from `  int ` on: `t` became `u = 0;\n  int t`.
    const start = TEXT.indexOf('int t') + 4;
    assert.deepEqual(edits, [
      {
        startIndex: start,
        oldEndIndex: start,
        newEndIndex: start + 13,
        startPosition: { row: 1, column: 6 },
        oldEndPosition: { row: 1, column: 6 },
        newEndPosition: { row: 2, column: 6 },
      },
    ]);
    store.dispose();
  });
});

describe('DocumentStore: findings kept across an edit', () => {
  it('names the line of an access in a device function after a line is added above it and its caller', async () => {
    const parser = await getCudaParser();
    const text = [
      '__device__ void put(float* out, int i) {',
      '  out[i * 64] = 1.0f;',
      '}',
      '__global__ void k(float* out) {',
      '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
      '  put(out, i);',
      '}',
      'void run(float* o) { k<<<8, 256>>>(o); }',
      '',
    ].join('\n');
    const messages = (store: DocumentStore, uri: string) => {
      store.facts(uri);
      while (store.complete(uri, 1000));
      return store.facts(uri)!.memory.map((r) => `${r.span.start.line + 1}: ${r.message.slice(0, 60)}`);
    };
    const edited = new DocumentStore({ parser });
    edited.open(URI, 'cuda-cpp', 1, text);
    assert.deepEqual(messages(edited, URI), ['6: Uncoalesced store to `out` (`out[i * 64]` at line 2, reached']);
    const top = { line: 0, character: 0 };
    edited.change(URI, 2, [{ range: { start: top, end: top }, text: '\n' }]);
    // The kernel and `put` moved together: the message says where `put`'s store is now.
    assert.deepEqual(messages(edited, URI), ['7: Uncoalesced store to `out` (`out[i * 64]` at line 3, reached']);
    edited.dispose();
  });
});
