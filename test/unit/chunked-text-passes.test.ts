/**
 * The text passes run chunk by chunk and kept between versions: after any
 * edits, what they give from the previous version's chunks (entries taken by
 * position, file-wide tables kept where the replaced chunks held the same)
 * equals what a fresh run over the final text gives.
 */
import * as assert from 'node:assert/strict';
import { makeSourceText } from '../../server/src/core/text/source-text';
import { runTextPasses, TextPassCache, type TextFacts } from '../../server/src/core/incremental/chunked-text-passes';
import { anySource, applyEdit, checkProperty, editSequence, fuzzRuns } from '../support/fuzz-sources';

/** Every field as plain data (the body context worked out, sets sorted, maps as entries). */
function plain(facts: TextFacts): unknown {
  return JSON.parse(
    JSON.stringify({ ...facts, bodyContext: facts.bodyContext() }, (_key, value) =>
      value instanceof Set ? [...value].sort() : value instanceof Map ? [...value.entries()] : value,
    ),
  );
}

function passes(text: string, cache = new TextPassCache(), previous?: ReturnType<typeof makeSourceText>): TextFacts {
  return runTextPasses({ source: makeSourceText(text, previous), outerKey: '-', cache });
}

describe('chunked text passes', () => {
  it('keeps the function names and device functions of the chunks an edit did not change', () => {
    const kernels = Array.from(
      { length: 40 },
      (_, k) =>
        `__device__ int f${k}(int x) { return x + ${k}; }\n__global__ void k${k}(int* p) {\n  p[threadIdx.x] = f${k}(${k});\n}\n`,
    ).join('\n');
    const cache = new TextPassCache();
    const before = passes(kernels, cache);
    before.bodyContext(); // the kernel bodies were read
    const typed = kernels.replace('p[threadIdx.x] = f7(7);', 'p[threadIdx.x] = f7(7) ;');
    const after = passes(typed, cache, cache.layout!.source);
    after.bodyContext();
    assert.equal(
      after.bodyContext().functionNames,
      before.bodyContext().functionNames,
      'a space typed in a body: the same set',
    );
    assert.equal(after.bodyContext().deviceFunctions, before.bodyContext().deviceFunctions);
    assert.equal(after.bodyContext().contextKey, before.bodyContext().contextKey);
    const renamed = typed.replace('__device__ int f7(int x)', '__device__ int g7(int x)');
    const again = passes(renamed, cache, cache.layout!.source);
    assert.notEqual(again.bodyContext().functionNames, after.bodyContext().functionNames);
    assert.ok(again.bodyContext().functionNames.has('g7'));
    assert.deepEqual(plain(again), plain(passes(renamed)));
  });

  it('works out the body context only when it is asked for, and then as a fresh run would', () => {
    const kernels = Array.from(
      { length: 20 },
      (_, k) =>
        `__device__ int f${k}(int x) { return x + ${k}; }\n__global__ void k${k}(int* p) {\n  p[threadIdx.x] = f${k}(${k});\n}\n`,
    ).join('\n');
    const cache = new TextPassCache();
    const first = passes(kernels, cache);
    assert.equal(cache.layout!.body.peek(), undefined, 'a first pass reads no kernel body: nothing asked for yet');
    // Versions whose body context nobody asked for: the next one that is asked works it out from its chunks.
    const typed = kernels.replace('f3(3);', 'f3(3) ;');
    passes(typed, cache, cache.layout!.source);
    const renamed = typed.replace('__device__ int f5(int x)', '__device__ int g5(int x)');
    const last = passes(renamed, cache, cache.layout!.source);
    assert.ok(last.bodyContext().functionNames.has('g5'));
    assert.deepEqual(plain(last), plain(passes(renamed)));
    assert.ok(first.bodyContext().functionNames.has('f5'), 'an earlier version still answers for its own text');
  });

  it('keeps the constants keys when an edit moves a chunk end between chunks that write the same names', () => {
    // Every host function writes `threads` and `smem`: the file has each name many times (ambiguous).
    const unit = (k: number) =>
      `__global__ void k${k}(float* p, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) p[i] *= ${k}.0f;\n}\n` +
      `void run${k}(float* p, int n) {\n  const int threads = ${64 + 32 * (k % 3)};\n  const size_t smem = ${k} * 4;\n  k${k}<<<(n + threads - 1) / threads, threads, smem>>>(p, n);\n}\n`;
    const text = Array.from({ length: 60 }, (_, k) => unit(k)).join('\n');
    const cache = new TextPassCache();
    const before = passes(text, cache);
    const key = (f: TextFacts) => [f.environment, f.bodyContext().contextKey];
    const chunksBefore = cache.layout!.chunks.length;
    let movedEnds = 0;
    // A space typed before each statement of each kernel body, then taken out.
    for (let at = text.indexOf('  if (i < n)'); at >= 0; at = text.indexOf('  if (i < n)', at + 1)) {
      const typed = text.slice(0, at) + ' ' + text.slice(at);
      const after = passes(typed, cache, cache.layout!.source);
      if (cache.layout!.chunks.length !== chunksBefore) movedEnds++;
      assert.deepEqual(key(after), key(before), `a space typed at offset ${at}`);
      passes(text, cache, cache.layout!.source);
    }
    assert.ok(movedEnds > 0, 'some edit moved a chunk end (else this checks nothing)');
  });

  it('drops a launch an edit puts in an `#if 0` of a file that had no conditional, and reports it again once the edit is undone', () => {
    const unit = (k: number) =>
      `__global__ void k${k}(float* p) { p[threadIdx.x] = ${k}.0f; }\nvoid run${k}(float* p) {\n  k${k}<<<1, ${32 * (1 + (k % 4))}>>>(p);\n}\n`;
    const text = Array.from({ length: 40 }, (_, k) => unit(k)).join('\n');
    const cache = new TextPassCache();
    const names = (f: TextFacts) => f.launches.map((l) => l.kernelName);
    assert.equal(passes(text, cache).launches.length, 40);
    const off = text.replace('  k30<<<1, 96>>>(p);', '#if 0\n  k30<<<1, 96>>>(p);\n#endif');
    const edited = passes(off, cache, cache.layout!.source);
    assert.ok(cache.layout!.chunks.length > 1, 'several chunks (else this checks nothing)');
    assert.deepEqual(
      names(edited),
      names(passes(text)).filter((n) => n !== 'k30'),
    );
    assert.deepEqual(plain(edited), plain(passes(off)));
    const undone = passes(text, cache, cache.layout!.source);
    assert.equal(undone.launches.length, 40);
    assert.deepEqual(plain(undone), plain(passes(text)));
  });

  it('gives after any edits what a fresh run over the final text gives', async () => {
    await checkProperty(
      'text passes: incremental = fresh',
      [anySource, editSequence],
      (original, edits) => {
        const cache = new TextPassCache();
        let text = original;
        passes(text, cache);
        for (const [k, e] of edits.entries()) {
          text = applyEdit(text, e);
          const incremental = passes(text, cache, cache.layout!.source);
          // Every other version is not asked for its body context (a keystroke superseded before its kernels were read).
          if (k % 2 === 1 || k === edits.length - 1) assert.deepEqual(plain(incremental), plain(passes(text)));
        }
      },
      fuzzRuns(200),
    );
  });
});
