/**
 * `check` at repository scale (issue 36): each file's output is written as soon as the file is
 * analysed, in the files' order, and what is written is, to the byte, the whole output the format
 * always printed (JSON and SARIF as JSON.stringify(…, null, 2) of the whole; the text as its
 * goldens). Watched through the CLI's hook on each analysed file, not through timing.
 */
import * as assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { baselineCommand } from '../../server/src/cli/baseline-command';
import { checkCommand } from '../../server/src/cli/check-command';
import { memoryIO, sourceTree } from '../support/cli-run';

/** Files that each launch a kernel past its bounds (an error: the text prints errors at once). */
function repository(files: number): Record<string, string> {
  const tree: Record<string, string> = {
    'inc/bounds.cuh': '#pragma once\n#define BOUND 128\n__device__ inline float twice(float x) { return 2.0f * x; }\n',
  };
  for (let k = 0; k < files; k++)
    tree[`src/part${k % 3}/unit${String(k).padStart(2, '0')}.cu`] = [
      '#include "../../inc/bounds.cuh"',
      `__global__ void __launch_bounds__(BOUND) scale${k}(float* data) {`,
      '  data[blockIdx.x * BOUND + threadIdx.x] = twice(data[blockIdx.x * BOUND + threadIdx.x]);',
      '}',
      `void run${k}(float* data) { scale${k}<<<64, 256>>>(data); }`,
      '',
    ].join('\n');
  return tree;
}

interface Watched {
  code: number;
  /** Per wait for stdout's reader, how many files had been analysed then. */
  waits: number[];
  out: string;
  err: string;
  /** Per write to stdout, how many files had been analysed then. */
  writes: Array<{ analysed: number; text: string }>;
  analysed: string[];
}

async function watch(dir: string, args: string[]): Promise<Watched> {
  const printed = { out: '', err: '' };
  const io = memoryIO(dir, printed);
  const analysed: string[] = [];
  const writes: Watched['writes'] = [];
  const waits: number[] = [];
  const code = await checkCommand(
    ['--no-nvcc', '--jobs', '1', ...args],
    {
      ...io,
      out: (text) => {
        writes.push({ analysed: analysed.length, text });
        io.out(text);
      },
      drained: () => {
        waits.push(analysed.length);
        return new Promise((resolve) => setImmediate(resolve));
      },
    },
    { analysed: (file) => analysed.push(path.relative(dir, file)) },
  );
  return { code, ...printed, writes, waits, analysed };
}

describe('check streams its output (issue 36)', function () {
  this.timeout(120_000);
  const FILES = 9;
  let dir: string;
  before(() => {
    dir = sourceTree(repository(FILES));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const format of ['json', 'sarif', 'text']) {
    it(`writes the first file's ${format} before the last file is analysed`, async () => {
      const run = await watch(dir, ['--format', format, '.']);
      assert.equal(run.code, 1, run.err);
      assert.equal(run.analysed.length, FILES + 1, run.analysed.join(', '));
      // The header comes first (it has no findings), then the first unit.
      const first = run.analysed.indexOf(path.join('src', 'part0', 'unit00.cu'));
      assert.equal(first, 1, run.analysed.join(', '));
      const at = run.writes.findIndex((w) => w.text.includes('src/part0/unit00.cu'));
      assert.ok(at >= 0, run.out.slice(0, 400));
      // Written once that file was analysed, and before the last one was.
      assert.ok(run.writes[at].analysed > first, `written after ${run.writes[at].analysed} files`);
      assert.ok(run.writes[at].analysed < run.analysed.length, `written after ${run.writes[at].analysed} files`);
    });
  }

  it("waits for stdout's reader after each file (what was written is not queued to the end)", async () => {
    const run = await watch(dir, ['--format', 'json', '.']);
    assert.deepEqual(
      run.waits,
      run.analysed.map((_, k) => k + 1),
    );
  });

  for (const format of ['json', 'sarif']) {
    it(`writes ${format} as JSON.stringify(whole, null, 2) writes it, with items and without`, async () => {
      for (const args of [['.'], ['inc/bounds.cuh']]) {
        const run = await watch(dir, ['--format', format, ...args]);
        assert.notEqual(run.code, 2, run.err);
        assert.equal(run.out, `${JSON.stringify(JSON.parse(run.out), null, 2)}\n`);
      }
    });
  }

  it('gives the same output with a baseline that changes nothing, written at the end', async () => {
    const plain = await watch(dir, ['--format', 'json', '.']);
    const baselineDir = sourceTree({});
    try {
      const written = { out: '', err: '' };
      await baselineCommand(['write', path.join(baselineDir, 'b.json'), '--no-nvcc', '.'], memoryIO(dir, written));
      const compared = await watch(dir, ['--format', 'json', '--baseline', path.join(baselineDir, 'b.json'), '.']);
      assert.equal(compared.out, plain.out);
      assert.ok(compared.writes.every((w) => w.analysed === FILES + 1));
    } finally {
      rmSync(baselineDir, { recursive: true, force: true });
    }
  });
});
