/**
 * What nvcc would read is bounded (issue 34, case 2). gcc reads a header whole: an `#include` of /dev/zero grew
 * nvcc's preprocessor to 2.1 GB, a 3 GB sparse header took 3.7 GB and 53 s, a FIFO blocked `check` for its whole
 * 120 s timeout. Now each include the scan of the include closure sees is refused before nvcc starts, with one line;
 * one it cannot see (a computed include) still ends at nvcc's address-space limit, in seconds.
 */
import * as assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli-run';
import { fakeNvcc, realNvccOrSkip } from '../support/nvcc';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'cuda-occupancy.js');
const KERNEL = '__global__ void k(float* p) { p[threadIdx.x] = 1; }\nvoid run(float* p) { k<<<1, 128>>>(p); }\n';

function cli(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ out: string; err: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...env } }, (_error, out, err) =>
      resolve({ out: String(out), err: String(err), ms: Date.now() - started }),
    );
  });
}

describe('what nvcc would read is bounded', function () {
  this.timeout(60_000);
  if (process.platform !== 'linux') return;
  let repo: string;
  beforeEach(() => {
    repo = mkdtempSync(path.join(tmpdir(), 'cuda-occ-reads-'));
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  const cases: Array<[string, (dir: string) => string, RegExp]> = [
    ['an absolute #include of /dev/zero', () => '#include "/dev/zero"', /includes \/dev\/zero, a character device/],
    ['#include <...> of /dev/zero', () => '#include </dev/zero>', /includes \/dev\/zero, a character device/],
    [
      'a header linked to /dev/zero, found through -I',
      (dir) => {
        mkdirSync(path.join(dir, 'inc'));
        symlinkSync('/dev/zero', path.join(dir, 'inc', 'zero.h'));
        return '#include <zero.h>';
      },
      /includes .*inc\/zero\.h, a character device/,
    ],
    ['#include of a macro naming /dev/zero', () => '#define ZERO "/dev/zero"\n#include ZERO', /includes \/dev\/zero/],
    [
      'a FIFO beside the source',
      (dir) => {
        execFileSync('mkfifo', [path.join(dir, 'fifo.h')]);
        return '#include "fifo.h"';
      },
      /includes .*fifo\.h, a FIFO, not a regular file/,
    ],
    [
      'a FIFO included by a header',
      (dir) => {
        execFileSync('mkfifo', [path.join(dir, 'fifo.h')]);
        writeFileSync(path.join(dir, 'outer.h'), '#pragma once\n#include "fifo.h"\n');
        return '#include "outer.h"';
      },
      /outer\.h includes .*fifo\.h, a FIFO/,
    ],
    [
      'a 3 GB sparse header',
      (dir) => {
        execFileSync('truncate', ['-s', '3G', path.join(dir, 'big.h')]);
        return '#include "big.h"';
      },
      /includes .*big\.h, 3072 MiB, over the 64 MiB limit/,
    ],
  ];

  for (const [what, make, line] of cases) {
    it(`refuses ${what} before nvcc starts, with one line`, async () => {
      const include = make(repo);
      writeFileSync(path.join(repo, 'k.cu'), `${include}\n${KERNEL}`);
      const argsLog = path.join(tmpdir(), `cuda-occ-reads-args-${process.pid}-${Date.now()}`);
      try {
        const run = await cli(['check', '--verbose', '--nvcc', fakeNvcc('nvcc-ok'), '-I', 'inc', '.'], repo, {
          FAKE_NVCC_ARGS_LOG: argsLog,
        });
        assert.ok(run.ms < 10_000, `took ${run.ms} ms`);
        assert.match(run.err, line);
        assert.match(run.err, /k\.cu: nvcc failed: refused to compile: /);
        assert.equal(existsSync(argsLog), false, 'nvcc was started');
        assert.match(run.out, /1 kernel, 1 launch/, 'the analysis still ran');
      } finally {
        rmSync(argsLog, { force: true });
      }
    });
  }

  describe('with the real nvcc', () => {
    const nvcc = realNvccOrSkip();
    it('ends a computed #include of /dev/zero (which no scan sees) at the default address-space limit, in seconds', async () => {
      writeFileSync(
        path.join(repo, 'k.cu'),
        `#define STRING(x) #x\n#define PATH(x) STRING(x)\n#include PATH(/dev/zero)\n${KERNEL}`,
      );
      const run = await cli(['check', '--verbose', '--nvcc', nvcc, '.'], repo);
      assert.match(run.err, /k\.cu: nvcc failed: .*(out of memory|memory exhausted|status)/);
      assert.ok(run.ms < 20_000, `took ${run.ms} ms`);
    });
  });
});
