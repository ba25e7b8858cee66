/**
 * A snapshot as it crosses to the answer thread: the branches the thread already holds (the same
 * objects as in the document's previous snapshot, which the analysis kept because their kernel did
 * not change or move) go as their place in that snapshot, not as a copy. Branches are two fifths of a
 * 25k-line snapshot and most of them are kept between versions; they refer to nothing else of the
 * report, so a branch needs no other object to be rebuilt.
 *
 * Both ends hold the branches of the last snapshot of each document, in the order they were sent
 * (messages between the threads keep their order), and forget them when the server's thread says the
 * document was closed.
 */
import type { Branch } from '../core/analyzer';
import type { AnswerSnapshot } from './answer-snapshots';

/** A snapshot on the wire: each branch, or its index among the previous snapshot's branches of the document. */
export type WireSnapshot = Omit<AnswerSnapshot, 'report'> & {
  report: Omit<AnswerSnapshot['report'], 'branches'> & { branches: Array<Branch | number> };
};

/** The server's thread's end. */
export class SnapshotEncoder {
  private readonly sent = new Map<string, Map<Branch, number>>();

  encode(snapshot: AnswerSnapshot): WireSnapshot {
    const before = this.sent.get(snapshot.uri);
    const now = new Map<Branch, number>();
    const branches = snapshot.report.branches.map((b, i) => {
      now.set(b, i);
      return before?.get(b) ?? b;
    });
    this.sent.set(snapshot.uri, now);
    return { ...snapshot, report: { ...snapshot.report, branches } };
  }

  forget(uri: string): void {
    this.sent.delete(uri);
  }
}

/** The answer thread's end. */
export class SnapshotDecoder {
  private readonly received = new Map<string, Branch[]>();

  /** The snapshot, or null when it refers to branches this end does not hold (it is then not answered from). */
  decode(wire: WireSnapshot): AnswerSnapshot | null {
    const before = this.received.get(wire.uri);
    const branches: Branch[] = [];
    for (const b of wire.report.branches) {
      const branch = typeof b === 'number' ? before?.[b] : b;
      if (!branch) {
        this.received.delete(wire.uri);
        return null;
      }
      branches.push(branch);
    }
    this.received.set(wire.uri, branches);
    return { ...wire, report: { ...wire.report, branches } };
  }

  forget(uri: string): void {
    this.received.delete(uri);
  }
}
