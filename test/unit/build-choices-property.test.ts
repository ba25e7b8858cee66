/**
 * An `#if` the unit cannot decide is a choice the build makes: whatever arms a host function's
 * groups hold, the block a launch reads with the macros left open covers the block of every build
 * (each macro defined or not, written before the code). The view's build is one of them, so its
 * value is never the only answer where another build's differs.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadFileAloneParser, readAlone } from '../support/file-alone';
import { checkProperty, fuzzRuns } from '../support/fuzz-sources';

const MACROS = ['USE_A', 'USE_B', 'USE_C'];

/** A statement on `t`, or a group of statements under an `#ifdef`/`#ifndef` with one or two arms. */
type Piece =
  | { k: 'set'; op: '=' | '+=' | '*='; v: number }
  | { k: 'group'; macro: number; negate: boolean; then: Piece[]; else: Piece[] | null };

const piece: fc.Arbitrary<Piece> = fc.letrec<{ piece: Piece; list: Piece[] }>((tie) => ({
  piece: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({
      k: fc.constant('set' as const),
      op: fc.constantFrom('=' as const, '+=' as const, '*=' as const),
      v: fc.integer({ min: 1, max: 4 }),
    }),
    fc.record({
      k: fc.constant('group' as const),
      macro: fc.integer({ min: 0, max: MACROS.length - 1 }),
      negate: fc.boolean(),
      then: tie('list'),
      else: fc.option(tie('list'), { nil: null }),
    }),
  ),
  list: fc.array(tie('piece'), { maxLength: 3 }),
})).piece;

function write(p: Piece, out: string[]): void {
  if (p.k === 'set') {
    out.push(`  t ${p.op} ${p.op === '=' ? p.v * 32 : p.op === '+=' ? p.v * 32 : 2};`);
    return;
  }
  out.push(`#${p.negate ? 'ifndef' : 'ifdef'} ${MACROS[p.macro]}`);
  for (const q of p.then) write(q, out);
  if (p.else) {
    out.push('#else');
    for (const q of p.else) write(q, out);
  }
  out.push('#endif');
}

function program(pieces: Piece[], prelude: string[]): string {
  const out = [...prelude, '__global__ void k(float* p) {}', 'void host(float* p) {', '  int t = 32;'];
  for (const p of pieces) write(p, out);
  out.push('  k<<<1, t>>>(p);', '}');
  return out.join('\n');
}

/** The launch's block sizes: its candidates, its one value, or null when unknown. */
function blocks(text: string): number[] | null {
  const [launch] = readAlone(text).launches;
  assert.ok(launch, 'the launch is reported');
  if (launch.candidates) return launch.candidates.map((c) => c.x);
  return launch.block.value ? [launch.block.value.x] : null;
}

describe('undecided #if arms in a host function (property)', function () {
  this.timeout(300_000);
  before(loadFileAloneParser);

  it("covers every build's block: each macro defined or not", async () => {
    await checkProperty(
      'build-choices',
      [fc.array(piece, { minLength: 1, maxLength: 4 })],
      (pieces) => {
        const open = blocks(program(pieces, []));
        for (let build = 0; build < 1 << MACROS.length; build++) {
          const prelude = MACROS.map((m, i) => (build & (1 << i) ? `#define ${m}` : `#undef ${m}`));
          const decided = blocks(program(pieces, prelude));
          assert.ok(decided && decided.length === 1, `build ${prelude.join(' ')} gives one block: ${decided}`);
          if (open === null) continue;
          assert.ok(
            open.includes(decided[0]),
            `build ${prelude.join(' ')} launches ${decided[0]} threads, the open reading says ${open.join(', ')}`,
          );
        }
      },
      fuzzRuns(40),
    );
  });
});
