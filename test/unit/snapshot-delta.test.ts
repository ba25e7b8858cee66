/**
 * Snapshots cross to the answer thread with the branches it already holds by reference
 * (lsp/snapshot-delta.ts): what the thread rebuilds equals what the server's thread handed over,
 * through structured clones as postMessage makes them.
 */
import * as assert from 'node:assert/strict';
import { serialize, deserialize } from 'node:v8';
import type { AnswerSnapshot } from '../../server/src/lsp/answer-snapshots';
import { SnapshotDecoder, SnapshotEncoder, type WireSnapshot } from '../../server/src/lsp/snapshot-delta';

type Branch = AnswerSnapshot['report']['branches'][number];

const URI = 'file:///ws/a.cu';

function branch(line: number, condition: string): Branch {
  const span = { start: { line, character: 2 }, end: { line, character: 20 } };
  return { kernel: 'k', kind: 'divergent', condition, span, conditionSpan: span } as unknown as Branch;
}

function snapshot(version: number, branches: Branch[], uri = URI): AnswerSnapshot {
  return { uri, version, report: { branches }, lenses: null } as unknown as AnswerSnapshot;
}

/** As postMessage carries it. */
const clone = (w: WireSnapshot) => deserialize(serialize(w)) as WireSnapshot;

describe('snapshot deltas to the answer thread', () => {
  it('sends a kept branch as its place in the previous snapshot, and the thread rebuilds every branch', () => {
    const encoder = new SnapshotEncoder();
    const decoder = new SnapshotDecoder();
    const [a, b, c] = [branch(3, 'threadIdx.x < 16'), branch(9, 'lane == 0'), branch(14, 'tid % 2')];
    const first = encoder.encode(snapshot(1, [a, b, c]));
    assert.deepEqual(
      first.report.branches.map((x) => typeof x),
      ['object', 'object', 'object'],
    );
    assert.deepEqual(decoder.decode(clone(first))!.report.branches, [a, b, c]);

    // b changed (a new object), d is new, a and c were kept; the order changed too.
    const b2 = branch(9, 'lane == 1');
    const d = branch(20, 'threadIdx.y > 2');
    const second = encoder.encode(snapshot(2, [c, a, b2, d]));
    assert.deepEqual(second.report.branches.slice(0, 2), [2, 0]);
    assert.deepEqual(decoder.decode(clone(second))!.report.branches, [c, a, b2, d]);

    // The next refers to the second, not the first.
    const third = encoder.encode(snapshot(3, [b2, d]));
    assert.deepEqual(third.report.branches, [2, 3]);
    assert.deepEqual(decoder.decode(clone(third))!.report.branches, [b2, d]);
  });

  it('keeps documents apart, and after a close sends every branch again', () => {
    const encoder = new SnapshotEncoder();
    const decoder = new SnapshotDecoder();
    const a = branch(3, 'threadIdx.x < 16');
    decoder.decode(clone(encoder.encode(snapshot(1, [a]))));
    // Another document with the same object (not possible in practice, but it must not be referred to).
    const other = encoder.encode(snapshot(1, [a], 'file:///ws/b.cu'));
    assert.equal(typeof other.report.branches[0], 'object');
    assert.deepEqual(decoder.decode(clone(other))!.report.branches, [a]);

    encoder.forget(URI);
    decoder.forget(URI);
    const reopened = encoder.encode(snapshot(1, [a]));
    assert.equal(typeof reopened.report.branches[0], 'object');
    assert.deepEqual(decoder.decode(clone(reopened))!.report.branches, [a]);
  });

  it('does not answer from a snapshot whose branches it cannot rebuild', () => {
    const decoder = new SnapshotDecoder();
    const wire = snapshot(2, []) as unknown as WireSnapshot;
    wire.report.branches = [0];
    assert.equal(decoder.decode(wire), null);
  });
});
