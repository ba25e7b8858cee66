/**
 * Places carried through incremental changes (server/src/lsp/edit-mapping.ts): a range an edit did
 * not touch holds the same text after it, and a position maps back to where the same character was.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { positionBefore, rangeAfter, type RangeChange } from '../../server/src/lsp/edit-mapping';

const text = fc.stringMatching(/^[ab\n]{0,40}$/);
const change = fc.record({ from: fc.nat(), length: fc.nat({ max: 6 }), insert: fc.stringMatching(/^[xy\n]{0,5}$/) });

/**
 * Applies offset-based changes to a copy of `doc` (TextDocument.update edits the document it is
 * given), returning the document after them and the LSP changes.
 */
function apply(doc: TextDocument, changes: Array<{ from: number; length: number; insert: string }>) {
  const lsp: RangeChange[] = [];
  let current = TextDocument.create(doc.uri, doc.languageId, doc.version, doc.getText());
  for (const c of changes) {
    const length = current.getText().length;
    const start = Math.min(c.from, length);
    const end = Math.min(start + c.length, length);
    const range = { start: current.positionAt(start), end: current.positionAt(end) };
    lsp.push({ range, text: c.insert });
    current = TextDocument.update(current, [{ range, text: c.insert }], current.version + 1);
  }
  return { after: current, lsp };
}

describe('edit mapping', () => {
  it('a range no edit touched holds the same text after the edits', () => {
    fc.assert(
      fc.property(text, fc.array(change, { maxLength: 4 }), fc.nat(), fc.nat({ max: 8 }), (t, cs, at, len) => {
        const doc = TextDocument.create('u', 'cuda-cpp', 1, t);
        const start = Math.min(at, t.length);
        const end = Math.min(start + len, t.length);
        const range = { start: doc.positionAt(start), end: doc.positionAt(end) };
        const { after, lsp } = apply(doc, cs);
        const mapped = rangeAfter(range, lsp);
        if (mapped) assert.equal(after.getText(mapped), doc.getText(range));
      }),
    );
  });

  it('a position maps back to the same character, unless an edit wrote it', () => {
    fc.assert(
      fc.property(text, fc.array(change, { maxLength: 4 }), fc.nat(), (t, cs, at) => {
        const doc = TextDocument.create('u', 'cuda-cpp', 1, t);
        const { after, lsp } = apply(doc, cs);
        const offset = Math.min(at, after.getText().length - 1);
        if (offset < 0) return;
        const position = after.positionAt(offset);
        const back = positionBefore(position, lsp);
        if (!back) return;
        const ch = after.getText()[offset];
        if (ch !== 'a' && ch !== 'b') return; // written by an edit, yet not caught: only xy and newlines are written
        assert.equal(doc.getText()[doc.offsetAt(back)], ch);
      }),
    );
  });

  it('drops a range an edit wrote into, and keeps one an edit moved', () => {
    const range = { start: { line: 2, character: 2 }, end: { line: 2, character: 8 } };
    const inside: RangeChange = {
      range: { start: { line: 2, character: 4 }, end: { line: 2, character: 4 } },
      text: 'x',
    };
    assert.equal(rangeAfter(range, [inside]), null);
    const above: RangeChange = {
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      text: '\n\n',
    };
    assert.deepEqual(rangeAfter(range, [above]), {
      start: { line: 4, character: 2 },
      end: { line: 4, character: 8 },
    });
    const before: RangeChange = {
      range: { start: { line: 2, character: 0 }, end: { line: 2, character: 1 } },
      text: '',
    };
    assert.deepEqual(rangeAfter(range, [before]), {
      start: { line: 2, character: 1 },
      end: { line: 2, character: 7 },
    });
    assert.deepEqual(positionBefore({ line: 4, character: 3 }, [above]), { line: 2, character: 3 });
    assert.equal(positionBefore({ line: 1, character: 0 }, [above]), null);
  });
});
