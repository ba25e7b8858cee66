/** The registry of what the core keeps between calls (core/incremental/kept-tables.ts) and its one policy. */
import * as assert from 'node:assert/strict';
import {
  clearKeptTables,
  keptTables,
  memoByObject,
  memoByText,
  memoWhileSame,
  readsTable,
} from '../../server/src/core/incremental/kept-tables';
import { parseArch } from '../../server/src/core/gpu/arch-table';
// The facade loads every stage of the pipeline, and so registers every table.
import '../../server/src/core/analyzer';

describe('kept tables', () => {
  it('lists every table the core keeps, with its size and capacity', () => {
    parseArch('sm_80');
    const names = keptTables().map((t) => t.name);
    for (const name of [
      'architecture names',
      'expression tokens',
      'branch verdicts',
      'dependence kinds',
      'directive ranges',
      'file directives',
      'file outlines',
      'launch findings',
      'tree-sitter runtime',
    ]) {
      assert.ok(names.includes(name), `${name} is not registered: ${names.join(', ')}`);
    }
    const arch = keptTables().find((t) => t.name === 'architecture names')!;
    assert.equal(arch.keyedBy, 'text');
    assert.ok(arch.size! >= 1 && arch.size! <= arch.capacity!);
  });

  it('computes a text-keyed value once, and keeps at most its capacity, dropping what was not used for longest', () => {
    let computed = 0;
    // 'quoted operators' holds 256: two generations of 128.
    const quote = memoByText(
      'quoted operators',
      (s: string) => s,
      (s: string) => (computed++, `"${s}"`),
    );
    assert.equal(quote('a'), '"a"');
    assert.equal(quote('a'), '"a"');
    assert.equal(computed, 1);
    for (let k = 0; k < 300; k++) {
      quote(`x${k}`);
      quote('a'); // used all along: never dropped
    }
    const before = computed;
    quote('a');
    quote('x299');
    assert.equal(computed, before, 'the most recently used are kept');
    quote('x0');
    assert.equal(computed, before + 1, 'the least recently used was dropped');
    const table = keptTables().filter((t) => t.name === 'quoted operators');
    assert.ok(table.every((t) => t.size! <= t.capacity!));
  });

  it('keeps an object-keyed value while the object lives and its inputs stay the same', () => {
    let computed = 0;
    const lengthOf = memoByObject('test lengths', (xs: number[]) => (computed++, xs.length));
    const xs = [1, 2, 3];
    assert.equal(lengthOf(xs), 3);
    assert.equal(lengthOf(xs), 3);
    assert.equal(computed, 1);
    const scaled = memoWhileSame(
      'test scaled',
      (a: number, b: number) => a === b,
      (xs: number[], k: number) => (computed++, xs.map((x) => x * k)),
    );
    assert.deepEqual(scaled(xs, 2), [2, 4, 6]);
    assert.deepEqual(scaled(xs, 2), [2, 4, 6]);
    assert.equal(computed, 2);
    assert.deepEqual(scaled(xs, 3), [3, 6, 9]);
    assert.equal(computed, 3);
  });

  it('forgets everything on clear, and the next calls compute again', () => {
    let computed = 0;
    const twice = memoByText(
      'expression tokens',
      (s: string) => `test:${s}`,
      (s: string) => (computed++, s + s),
    );
    twice('ab');
    clearKeptTables();
    twice('ab');
    assert.equal(computed, 2);
  });

  it('gives a value kept with what it read only where those reads are answered the same, a few contexts per key', () => {
    const table = readsTable<{ width: number }, string>('header outlines');
    const read = (width: number) => table.get('/h.cuh', (r) => r.width === width);
    table.set('/h.cuh', { width: 32 }, 'read with 32');
    assert.equal(read(32), 'read with 32');
    assert.equal(read(16), undefined, 'another context computes afresh');
    table.set('/h.cuh', { width: 16 }, 'read with 16');
    assert.equal(read(16), 'read with 16');
    assert.equal(read(32), 'read with 32', 'both contexts are kept');
    for (const width of [1, 2, 3, 4]) table.set('/h.cuh', { width }, `read with ${width}`);
    assert.equal(read(16), undefined, 'the context not met for longest went first');
    assert.equal(read(4), 'read with 4');
    assert.equal(
      table.get('/other.cuh', () => true),
      undefined,
    );
  });
});
