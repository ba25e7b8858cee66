/**
 * `check` keeps nvcc's figures between runs (issue 36): a second run over unchanged sources compiles
 * nothing and prints the same, a changed file is compiled again, and --no-cache compiles everything.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli, sourceTree } from '../support/cli-run';
import { fakeNvcc } from '../support/nvcc';

describe('check: the compile cache between runs', () => {
  /** nvcc runs, figures and PTX alike: nvcc-capped writes its arguments, one line per run. */
  const compiles = (log: string) =>
    fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;

  it('compiles an unchanged repository once, and a changed file again', async () => {
    const dir = sourceTree({
      'a.cu':
        'extern "C" __global__ void kernel(float* x) { x[0] = 1; }\nvoid f(float* x) { kernel<<<1, 128>>>(x); }\n',
      'b.cu': 'extern "C" __global__ void other(float* x) { x[1] = 2; }\nvoid g(float* x) { other<<<2, 256>>>(x); }\n',
    });
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-cache-'));
    const log = path.join(scratch, 'nvcc.log');
    const cache = path.join(scratch, 'cache');
    const check = (...more: string[]) =>
      runCli(
        ['check', '.', '--arch', 'sm_80,sm_90', '--nvcc', fakeNvcc('nvcc-capped'), '--format', 'json', ...more],
        dir,
      );
    process.env.FAKE_NVCC_ARGS_LOG = log;
    try {
      const first = await check('--cache-dir', cache);
      assert.equal(first.code, 0, first.err);
      const firstCompiles = compiles(log);
      assert.ok(firstCompiles >= 2, `nvcc ran ${firstCompiles} times for two units`);
      const second = await check('--cache-dir', cache);
      assert.equal(compiles(log), firstCompiles, 'the second run compiled again');
      assert.equal(second.out, first.out);
      fs.appendFileSync(path.join(dir, 'b.cu'), '// edited\n');
      await check('--cache-dir', cache);
      const afterEdit = compiles(log) - firstCompiles;
      assert.ok(afterEdit >= 1 && afterEdit < firstCompiles, `after one file changed nvcc ran ${afterEdit} times`);
      const before = compiles(log);
      await check('--no-cache');
      assert.equal(compiles(log) - before, firstCompiles, '--no-cache compiled every unit');
    } finally {
      delete process.env.FAKE_NVCC_ARGS_LOG;
    }
  });
});
