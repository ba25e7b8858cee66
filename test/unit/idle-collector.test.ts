/**
 * The server collects garbage in the windows it knows are idle, once the old generation has
 * grown enough since the last collection (see idle-collector.ts).
 */
import * as assert from 'node:assert/strict';
import { IdleCollector } from '../../server/src/idle-collector';

const MB = 1 << 20;

/**
 * A collector over a pretend heap: `heap.old` is what the old generation holds, `run()` runs what was
 * deferred. `collection: 'none'` is Node without gc exposed; `'throws'`, a collection that fails.
 */
function pretendHeap(initialMb: number, { collection = 'collects' }: { collection?: 'collects' | 'none' | 'throws' } = {}) {
  const heap = { old: initialMb * MB, collections: 0, afterCollectionMb: initialMb };
  const deferred: Array<() => void> = [];
  const collect = () => {
    if (collection === 'throws') throw new Error('no');
    heap.collections++;
    heap.old = heap.afterCollectionMb * MB;
  };
  const collector = new IdleCollector({
    collect: collection === 'none' ? null : collect,
    oldGenerationBytes: () => heap.old,
    defer: (run) => {
      deferred.push(run);
      return { cancel: () => deferred.splice(deferred.indexOf(run), 1) };
    },
  });
  const run = () => {
    for (const task of deferred.splice(0)) task();
  };
  return { heap, collector, run, deferred };
}

describe('IdleCollector', () => {
  it('leaves a heap that grew by less than a quarter (and 4 MB) to V8', () => {
    const { heap, collector, run } = pretendHeap(40);
    heap.old = 49 * MB;
    collector.idle();
    run();
    assert.equal(heap.collections, 0);
  });

  it('collects once the old generation grew by a quarter, a little later', () => {
    const { heap, collector, run, deferred } = pretendHeap(40);
    heap.old = 51 * MB;
    collector.idle();
    assert.equal(heap.collections, 0, 'not at once: the requests that follow an edit come first');
    assert.equal(deferred.length, 1);
    run();
    assert.equal(heap.collections, 1);
    assert.equal(collector.collections, 1);
  });

  it('grows at least 4 MB between collections of a small heap', () => {
    const { heap, collector, run } = pretendHeap(8);
    heap.old = 11.5 * MB; // +44%, but under 4 MB
    collector.idle();
    run();
    assert.equal(heap.collections, 0);
    heap.old = 12.5 * MB;
    collector.idle();
    run();
    assert.equal(heap.collections, 1);
  });

  it('measures growth from what was left after the last collection', () => {
    const { heap, collector, run } = pretendHeap(40);
    heap.old = 60 * MB;
    heap.afterCollectionMb = 44;
    collector.idle();
    run();
    assert.equal(heap.collections, 1);
    heap.old = 52 * MB; // +8 MB on 44: under a quarter
    collector.idle();
    run();
    assert.equal(heap.collections, 1);
    heap.old = 56 * MB; // +12 MB on 44
    collector.idle();
    run();
    assert.equal(heap.collections, 2);
  });

  it('counts from the lowest it saw, so that a collection V8 ran by itself is not collected again', () => {
    const { heap, collector, run } = pretendHeap(40);
    heap.old = 30 * MB; // V8 collected
    collector.idle();
    heap.old = 39 * MB; // +9 MB on 30
    collector.idle();
    run();
    assert.equal(heap.collections, 1);
  });

  it('schedules one collection however many idle windows open before it runs', () => {
    const { heap, collector, run, deferred } = pretendHeap(40);
    heap.old = 60 * MB;
    collector.idle();
    collector.idle();
    collector.idle();
    assert.equal(deferred.length, 1);
    run();
    assert.equal(heap.collections, 1);
  });

  it('survives a collection that throws, and goes on counting from what is in use', () => {
    const { heap, collector, run, deferred } = pretendHeap(40, { collection: 'throws' });
    heap.old = 60 * MB;
    collector.idle();
    assert.doesNotThrow(run);
    assert.equal(collector.collections, 0);
    heap.old = 70 * MB; // +10 MB on 60: under a quarter
    collector.idle();
    assert.equal(deferred.length, 0);
  });

  it('does nothing when Node does not expose gc, and drops a scheduled collection on dispose', () => {
    const off = pretendHeap(40, { collection: 'none' });
    off.heap.old = 80 * MB;
    off.collector.idle();
    assert.equal(off.collector.enabled, false);
    assert.equal(off.deferred.length, 0);

    const on = pretendHeap(40);
    on.heap.old = 80 * MB;
    on.collector.idle();
    on.collector.dispose();
    on.run();
    assert.equal(on.heap.collections, 0);
  });
});
