/**
 * The server collects garbage in the windows it knows are idle, once the old generation has
 * grown enough since the last collection, and compacts it once settled when much of it is free
 * (see idle-collector.ts).
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { IdleCollector } from '../../server/src/lsp/idle-collector';

const MB = 1 << 20;

/**
 * A collector over a pretend heap: `heap.old` is what the old generation holds, `heap.free` what its
 * pages hold free, `run()` runs what was deferred. `collection: 'none'` is Node without gc exposed;
 * `'throws'`, a collection that fails.
 */
function pretendHeap(
  initialMb: number,
  { collection = 'collects' }: { collection?: 'collects' | 'none' | 'throws' } = {},
) {
  const heap = { old: initialMb * MB, free: 0, collections: 0, compactions: 0, afterCollectionMb: initialMb };
  const deferred: Array<() => void> = [];
  // What a collection frees stays in the old generation's pages, free, unless it compacts.
  const collect = (compact: boolean) => {
    if (collection === 'throws') throw new Error('no');
    heap.collections++;
    heap.free = compact ? 0 : heap.free + heap.old - heap.afterCollectionMb * MB;
    heap.old = heap.afterCollectionMb * MB;
    if (compact) heap.compactions++;
  };
  const collector = new IdleCollector({
    collect: collection === 'none' ? null : collect,
    oldGenerationBytes: () => heap.old,
    oldGenerationFreeBytes: () => heap.free,
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

  it('compacts once settled when the old generation holds a quarter of what is in use (and 16 MB) free', () => {
    const { heap, collector, run } = pretendHeap(60);
    heap.free = 14 * MB; // under 16 MB
    collector.settled();
    run();
    assert.equal(heap.collections, 0, 'no growth and little free: nothing to do');
    heap.free = 30 * MB; // half of what is in use
    collector.settled();
    run();
    assert.deepEqual([heap.collections, heap.compactions, collector.compactions], [1, 1, 1]);
    collector.settled();
    run();
    assert.equal(heap.collections, 1, 'compacted: nothing free left');
  });

  it('decides when the time comes: a collection that leaves much free is followed by a compacting one', () => {
    const { heap, collector, run } = pretendHeap(40);
    heap.old = 50 * MB; // +10 MB: under a quarter, and little free
    collector.settled();
    heap.old = 70 * MB; // the heap grew meanwhile: its collection frees 30 MB
    run();
    assert.deepEqual([heap.collections, heap.compactions, heap.free], [2, 1, 0]);
  });

  it("never compacts in an edit's debounce, however much is free", () => {
    const { heap, collector, run } = pretendHeap(40);
    heap.old = 60 * MB;
    heap.free = 60 * MB;
    collector.idle();
    run();
    assert.deepEqual([heap.collections, heap.compactions], [1, 0]);
  });

  it('collects without compacting once settled when the heap grew but its collection leaves little free', () => {
    const { heap, collector, run } = pretendHeap(40);
    heap.old = 52 * MB;
    heap.afterCollectionMb = 44; // frees 8 MB
    collector.settled();
    run();
    assert.deepEqual([heap.collections, heap.compactions], [1, 0]);
  });

  it("lets a settled server's task take the place of an edit's waiting one, never the other way", () => {
    const { heap, collector, run, deferred } = pretendHeap(40);
    heap.old = 60 * MB;
    collector.idle();
    heap.free = 40 * MB;
    collector.settled();
    collector.idle();
    assert.equal(deferred.length, 1);
    run();
    assert.deepEqual([heap.collections, heap.compactions], [2, 1]);
  });

  it("compacts V8's old generation for real (node --expose-gc)", () => {
    // In a child: gc() needs its option. A heap of 80k-object arrays, two thirds of them dropped and
    // every other object of the rest: pages a plain collection leaves mostly in place.
    const script = `
      const { getHeapSpaceStatistics } = require('node:v8');
      const { IdleCollector } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'server', 'src', 'lsp', 'idle-collector.js'))});
      const oldSpaceMb = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size / 1048576;
      let keep = [];
      for (let r = 0; r < 30; r++) { const a = []; for (let i = 0; i < 80000; i++) a.push({ i, s: 'x' + i }); keep.push(a); }
      gc();
      for (const a of keep) for (let i = 0; i < a.length; i += 2) a[i] = null;
      keep = keep.filter((_, k) => k % 3 === 0);
      const collector = new IdleCollector({ defer: (run) => (run(), { cancel() {} }) });
      collector.idle(); // a plain collection, if any: what V8 keeps without compacting
      gc();
      const before = oldSpaceMb();
      collector.settled();
      console.log(JSON.stringify({ before, after: oldSpaceMb(), compactions: collector.compactions, kept: keep.length }));
    `;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const { before, after, compactions } = JSON.parse(child.stdout) as {
      before: number;
      after: number;
      compactions: number;
    };
    assert.equal(compactions, 1);
    assert.ok(after < before * 0.6, `old space ${before.toFixed(1)} MB -> ${after.toFixed(1)} MB`);
  });
});
