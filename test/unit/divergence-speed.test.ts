/**
 * What the divergence pass does to be fast must not change what it finds:
 * the block evaluator against `evaluateSym` thread by thread, the structural
 * key that lets verdicts be reused, and the reuse itself.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Dim3 } from '../../server/src/core/types';
import { analyzeSource } from '../support/divergence-fixtures';
import { uniformities } from '../support/uniformity';
import {
  blockEvaluator,
  evaluateSym,
  threadValue,
  type BlockSample,
} from '../../server/src/core/uniformity/lane-evaluation';
import { structuralKey, type Sym } from '../../server/src/core/uniformity/symbolic-values';

const OPERATORS = [
  '+',
  '-',
  '*',
  '/',
  '%',
  '<<',
  '>>',
  '&',
  '|',
  '^',
  '<',
  '<=',
  '>',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  'min',
  'max',
  '<=>',
];

const anySym: fc.Arbitrary<Sym> = fc.letrec<{ sym: Sym }>((tie) => ({
  sym: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .constantFrom(0, -0, 1, 2, 3, 31, 32, 33, -7, 2.5, 2 ** 40, 1e300 * 1e300, NaN)
      .map((value): Sym => ({ op: 'const', value })),
    fc.record({
      op: fc.constantFrom('threadIdx' as const, 'blockIdx' as const, 'blockDim' as const, 'gridDim' as const),
      dim: fc.constantFrom('x' as const, 'y' as const, 'z' as const),
    }),
    fc.constant<Sym>({ op: 'laneId' }),
    // ids 1 and 2 are bound by the samples below, 3 is not (undefined)
    fc.integer({ min: 1, max: 3 }).map((id): Sym => ({ op: 'free', id, name: `f${id}`, loop: null })),
    fc.record({
      op: fc.constant('opaque' as const),
      id: fc.integer({ min: 1, max: 5 }),
      kind: fc.constantFrom('warpUniform' as const, 'laneVarying' as const),
      what: fc.constant('o'),
    }),
    fc.record({
      op: fc.constant('binary' as const),
      operator: fc.constantFrom(...OPERATORS),
      left: tie('sym'),
      right: tie('sym'),
    }),
    fc.record({ op: fc.constant('unary' as const), operator: fc.constantFrom('-', '!', '~', '+'), arg: tie('sym') }),
    fc.record({ op: fc.constant('select' as const), cond: tie('sym'), then: tie('sym'), else: tie('sym') }),
  ),
})).sym;

const SHAPES: Dim3[] = [
  { x: 32, y: 1, z: 1 },
  { x: 48, y: 1, z: 1 },
  { x: 16, y: 8, z: 1 },
  { x: 8, y: 4, z: 2 },
  { x: 1, y: 1, z: 1 },
];

function sameResult(a: unknown, b: unknown): boolean {
  return Object.is(a, b);
}

describe('divergence: speed-ups keep the results', () => {
  it('a block evaluator gives every thread what evaluateSym gives it, sample after sample', () => {
    fc.assert(
      fc.property(
        anySym,
        fc.constantFrom(...SHAPES),
        // One evaluator for a run of samples: what it keeps from one to the next must not show.
        fc.array(fc.tuple(fc.integer({ min: -40, max: 1000 }), fc.integer({ min: 0, max: 3 }), fc.boolean()), {
          minLength: 1,
          maxLength: 5,
        }),
        (sym, shape, runs) => {
          const evaluate = blockEvaluator(sym, shape);
          const size = shape.x * shape.y * shape.z;
          for (const [bound, bx, second] of runs) {
            const sample: BlockSample = {
              blockIdx: { x: bx, y: 1, z: 0 },
              gridDim: { x: 8, y: 8, z: 1 },
              bindings: new Map([
                [1, bound],
                [2, second ? 32 : 7],
              ]),
              warpKey: (w) => w + 1000 * bx,
            };
            const column = evaluate(sample);
            for (let t = 0; t < size; t++) {
              const threadIdx = {
                x: t % shape.x,
                y: Math.floor(t / shape.x) % shape.y,
                z: Math.floor(t / (shape.x * shape.y)),
              };
              const expected = evaluateSym(sym, {
                ...sample,
                threadIdx,
                blockDim: shape,
                warpKey: sample.warpKey(Math.floor(t / 32)),
              });
              if (!sameResult(threadValue(column, t), expected)) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 400 },
    );
  });

  it('gives the same condition the same structural key in two kernels, and different conditions different keys', async () => {
    const text = [
      '__global__ void a(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = 0; for (int s = 64; s > 0; s >>= 1) if (threadIdx.x < s) p[0] = 1; }',
      '__global__ void b(int* q, int n) { int j = blockIdx.x * blockDim.x + threadIdx.x; if (j < n) q[j] = 0; for (int s = 64; s > 0; s >>= 1) if (threadIdx.x < s) q[0] = 1; }',
      '__global__ void c(int* q, int m) { int j = blockIdx.x * blockDim.x + threadIdx.x; if (j < m) q[j] = 0; for (int s = 32; s > 0; s >>= 1) if (threadIdx.x < s) q[0] = 1; }',
    ].join('\n');
    const [a, b, c] = await uniformities(text);
    const keys = (read: typeof a) => read.sites.map((s) => structuralKey(s.cond.sym));
    assert.equal(keys(a).length, 2);
    assert.deepEqual(keys(a), keys(b));
    // `m` is another name, `s` another loop: neither condition shares a key with kernel a's
    for (const [i, k] of keys(c).entries()) assert.notEqual(k, keys(a)[i]);
  });

  it('gives the same condition in two kernels the same verdict, not one shared object', async () => {
    const kernel = (name: string) =>
      `__global__ void ${name}(float* p, int n) {\n  int t = threadIdx.x;\n  if (t % 32 < 5) p[t] *= 2.0f;\n}\n`;
    const branches = await analyzeSource(kernel('first') + kernel('second'));
    assert.equal(branches.length, 2);
    const [first, second] = branches;
    assert.equal(first.kind, 'divergent');
    const verdict = (b: (typeof branches)[number]) => ({
      kind: b.kind,
      split: b.split,
      laneActivity: b.laneActivity,
      explanation: b.explanation,
      assumptions: b.assumptions.slice(1),
    });
    assert.deepEqual(verdict(first), verdict(second));
    assert.notEqual(first.split, second.split);
    first.split!.groups!.push(99);
    const again = await analyzeSource(kernel('third'));
    assert.deepEqual(again[0].split, second.split);
  });

  it('treats a bitwise operation on an infinite value as undefined instead of throwing', async () => {
    const branches = await analyzeSource(
      '__global__ void k(int* a) {\n  if ((threadIdx.x & (1e300 * 1e300)) == 0) a[0] = 1;\n  if (threadIdx.x % 2) a[1] = 2;\n}\n',
    );
    assert.equal(branches.length, 2);
    assert.equal(branches[1].kind, 'divergent');
  });
});
