/**
 * `check --shard K/N` and `merge` (issue 36): the shards are disjoint, together hold every file, do
 * not depend on the run or on which other files exist, and their outputs merged (JSON, SARIF,
 * baselines) are what one run over every file prints.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli, sourceTree } from '../support/cli-run';
import { shardOf } from '../../server/src/cli/shards';
import type { CheckJson } from '../../server/src/cli/check-json-types';

/** A repository of kernels in folders, one launching a kernel of a header in another folder. */
function repository(): string {
  const files: Record<string, string> = {
    'common/k.cuh': '__global__ void shared_kernel(float* x) { if (threadIdx.x < 7) x[threadIdx.x] = 1; }\n',
  };
  for (let i = 0; i < 14; i++) {
    const threads = 64 * (1 + (i % 8));
    files[`${['a', 'b', 'c'][i % 3]}/unit${i}.cu`] =
      `#include "../common/k.cuh"\n// occupancy: regs=${16 + 8 * (i % 5)}\n__global__ void __launch_bounds__(${threads}) k${i}(float* x) { x[threadIdx.x] = 0; }\n` +
      `void run${i}(float* x) {\n  k${i}<<<${i + 1}, ${threads}>>>(x);\n  shared_kernel<<<1, ${threads * 2}>>>(x);\n}\n`;
  }
  return sourceTree(files);
}

describe('check --shard and merge', () => {
  const dir = repository();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-shards-'));
  const check = async (format: string, ...more: string[]) => {
    const run = await runCli(
      ['check', '.', '--no-nvcc', '--jobs', '1', '--format', format, '--fail-on', 'never', ...more],
      dir,
    );
    assert.equal(run.code, 0, run.err);
    return run.out;
  };
  const write = (name: string, text: string) => {
    const file = path.join(scratch, name);
    fs.writeFileSync(file, text);
    return file;
  };

  it('splits the files into disjoint shards that together hold them all, the same in every run', async () => {
    const whole = JSON.parse(await check('json')) as CheckJson;
    const all = whole.files.map((f) => f.path).sort();
    assert.equal(all.length, 15);
    const seen: string[] = [];
    for (let k = 1; k <= 4; k++) {
      const shard = JSON.parse(await check('json', '--shard', `${k}/4`)) as CheckJson;
      const again = JSON.parse(await check('json', '--shard', `${k}/4`)) as CheckJson;
      assert.deepEqual(again, shard, `shard ${k}/4 differs between runs`);
      for (const f of shard.files) assert.equal(shardOf(f.path, dir, 4), k, f.path);
      seen.push(...shard.files.map((f) => f.path));
    }
    assert.deepEqual([...seen].sort(), all);
    assert.equal(new Set(seen).size, seen.length, 'a file is in two shards');
    // Which shard a file is in depends on its path only, not on the other files.
    assert.equal(shardOf('a/unit0.cu', dir, 4), shardOf('a/unit0.cu', '/elsewhere/' + path.basename(dir), 4));
  });

  it('merges the shards’ JSON, SARIF and baselines into what one run prints', async () => {
    for (const format of ['json', 'sarif'] as const) {
      const whole = await check(format);
      const parts = [];
      for (let k = 1; k <= 3; k++) parts.push(write(`${format}-${k}.json`, await check(format, '--shard', `${k}/3`)));
      const merged = await runCli(['merge', ...parts], dir);
      assert.equal(merged.code, 0, merged.err);
      assert.deepEqual(JSON.parse(merged.out), JSON.parse(whole), `${format} merged differs from one run`);
    }
    const baselines = [];
    for (let k = 1; k <= 3; k++) {
      const file = path.join(scratch, `baseline-${k}.json`);
      const run = await runCli(['baseline', 'write', file, '--no-nvcc', '--shard', `${k}/3`, '.'], dir);
      assert.equal(run.code, 0, run.err);
      baselines.push(file);
    }
    const wholeBaseline = path.join(scratch, 'baseline-whole.json');
    assert.equal((await runCli(['baseline', 'write', wholeBaseline, '--no-nvcc', '.'], dir)).code, 0);
    const merged = await runCli(['merge', ...baselines], dir);
    assert.equal(merged.code, 0, merged.err);
    assert.deepEqual(JSON.parse(merged.out), JSON.parse(fs.readFileSync(wholeBaseline, 'utf8')));
  });

  it('refuses overlapping shards, mixed kinds and a bad --shard', async () => {
    const one = write('one.json', await check('json', '--shard', '1/2'));
    const overlap = await runCli(['merge', one, one], dir);
    assert.equal(overlap.code, 2);
    assert.match(overlap.err, /in two inputs: the shards overlap/);
    const sarif = write('one.sarif', await check('sarif', '--shard', '2/2'));
    assert.match((await runCli(['merge', one, sarif], dir)).err, /inputs of one kind/);
    for (const bad of ['0/2', '3/2', '1', 'a/b'])
      assert.match((await runCli(['check', '.', '--no-nvcc', '--shard', bad], dir)).err, /--shard needs K\/N/);
  });
});
