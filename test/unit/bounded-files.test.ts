/**
 * No file can hang the server or the CLI (issue 25, cases 2 and 3): only regular files are read, never more
 * than a cap, and directory walks stop at link loops and do not follow links out of the workspace.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readBoundedFile, readBoundedFileSync } from '../../server/src/files/bounded-read';
import { readPtxasLog } from '../../server/src/files/ptxas-log';
import { listSourceFiles } from '../../server/src/files/workspace-files';
import { loadCompileCommands } from '../../server/src/nvcc/compile-commands';
import { walkIncludeClosure } from '../../server/src/nvcc/include-closure';
import { loadBaseline } from '../../server/src/cli/baseline-file';
import { runCli } from '../support/cli-run';

/** Fails the test instead of hanging it: every case here must end in well under a second. */
async function quickly<T>(what: string, work: () => Promise<T> | T, limitMs = 5000): Promise<T> {
  const started = Date.now();
  const result = await work();
  assert.ok(Date.now() - started < limitMs, `${what} took ${Date.now() - started} ms`);
  return result;
}

describe('bounded file access', function () {
  this.timeout(30_000);
  if (process.platform === 'win32') return;
  let dir: string;
  let fifo: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-bounded-'));
    fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a FIFO without blocking, and /dev/zero without reading it', async () => {
    for (const special of [fifo, '/dev/zero', dir]) {
      assert.throws(
        () => readBoundedFileSync(special, { maxBytes: 1024 }),
        (e: Error & { code: string }) => e.code === 'not-regular' && /not a regular file/.test(e.message),
        special,
      );
      await assert.rejects(
        quickly(special, () => readBoundedFile(special, { maxBytes: 1024 })),
        (e: Error & { code: string }) => e.code === 'not-regular',
      );
    }
    const zero = path.join(dir, 'zero.log');
    symlinkSync('/dev/zero', zero);
    assert.throws(() => readBoundedFileSync(zero, { maxBytes: 1024 }), /a character device, not a regular file/);
  });

  it('reads a regular file up to the cap, and refuses a larger one', async () => {
    const file = path.join(dir, 'ten.txt');
    writeFileSync(file, '0123456789');
    assert.equal(readBoundedFileSync(file, { maxBytes: 10 }).text, '0123456789');
    assert.equal((await readBoundedFile(file, { maxBytes: 10 })).text, '0123456789');
    assert.throws(
      () => readBoundedFileSync(file, { maxBytes: 9, what: 'ptxas log' }),
      (e: Error & { code: string }) =>
        e.code === 'too-large' && e.message === `ptxas log ${file} is larger than 9 bytes: not read`,
    );
    // /proc files say size 0: the cap still holds while reading.
    if (process.platform === 'linux')
      assert.throws(
        () => readBoundedFileSync('/proc/self/maps', { maxBytes: 16 }),
        (e: Error & { code: string }) => e.code === 'too-large',
      );
  });

  it('refuses a ptxas log, a compile database and a baseline that are FIFOs or /dev/zero', async () => {
    for (const special of [fifo, '/dev/zero']) {
      await quickly('ptxas log', () => assert.throws(() => readPtxasLog(special), /not a regular file/));
      await quickly('baseline', () => assert.throws(() => loadBaseline(special, dir), /not a regular file/));
      await quickly('compile_commands.json', () => assert.rejects(loadCompileCommands(special), /not a regular file/));
    }
  });

  describe('the CLI on special files given as arguments', () => {
    let source: string;
    before(() => {
      source = path.join(dir, 'k.cu');
      writeFileSync(source, '__global__ void k(float* p) {}\nvoid f(float* p) { k<<<1, 64>>>(p); }\n');
      mkdirSync(path.join(dir, 'db'));
      execFileSync('mkfifo', [path.join(dir, 'db', 'compile_commands.json')]);
      mkdirSync(path.join(dir, 'zero-db'));
      symlinkSync('/dev/zero', path.join(dir, 'zero-db', 'compile_commands.json'));
    });

    const cases: Array<[string, () => string[], RegExp]> = [
      ['--ptxas-log FIFO', () => ['--ptxas-log', fifo], /cannot read ptxas log .*pipe: a FIFO, not a regular file/],
      [
        '--ptxas-log /dev/zero',
        () => ['--ptxas-log', '/dev/zero'],
        /cannot read ptxas log \/dev\/zero: a character device, not a regular file/,
      ],
      ['--baseline FIFO', () => ['--baseline', fifo], /cannot read baseline .*pipe: a FIFO, not a regular file/],
      [
        '--baseline /dev/zero',
        () => ['--baseline', '/dev/zero'],
        /cannot read baseline \/dev\/zero: a character device/,
      ],
      [
        '-p DIR holding a FIFO',
        () => ['-p', path.join(dir, 'db')],
        /cannot read compile_commands\.json .*compile_commands\.json: a FIFO, not a regular file/,
      ],
      [
        '-p DIR holding a link to /dev/zero',
        () => ['-p', path.join(dir, 'zero-db')],
        /cannot read compile_commands\.json .*: a character device, not a regular file/,
      ],
    ];
    for (const [name, args, says] of cases) {
      it(`answers ${name} with one line and exit 2, at once`, async () => {
        const run = await quickly(name, () => runCli(['check', '--no-nvcc', ...args(), source], dir));
        assert.equal(run.code, 2, run.err);
        assert.equal(run.err.trim().split('\n').length, 1, run.err);
        assert.match(run.err, says);
      });
    }
  });

  describe('directory walks', () => {
    let root: string;
    before(() => {
      root = path.join(dir, 'repo');
      mkdirSync(path.join(root, 'src', 'loop'), { recursive: true });
      writeFileSync(path.join(root, 'src', 'k.cu'), '__global__ void k(float* p) {}\n');
      writeFileSync(path.join(root, 'src', 'loop', 'h.cuh'), '#define BLOCK 64\n');
      symlinkSync('.', path.join(root, 'src', 'loop', 'a'));
      symlinkSync('.', path.join(root, 'src', 'loop', 'b'));
      symlinkSync('..', path.join(root, 'src', 'loop', 'up'));
      symlinkSync('/', path.join(root, 'src', 'root'));
      symlinkSync('/dev/zero', path.join(root, 'src', 'zero.cuh'));
      execFileSync('mkfifo', [path.join(root, 'src', 'fifo.h')]);
    });

    it('reads each directory once through link loops (loop/a -> ., loop/b -> .), and does not follow a link to /', async () => {
      const scan = await quickly('the scan', () => listSourceFiles([root]));
      assert.deepEqual(
        scan.files.map((f) => path.relative(root, f)),
        ['src/k.cu', 'src/loop/h.cuh'],
      );
      assert.ok(
        scan.skipped.some((s) => s.path.endsWith('root') && s.reason === 'a link to /, outside the workspace'),
        JSON.stringify(scan.skipped),
      );
      assert.ok(
        scan.skipped.some((s) => /a link loop/.test(s.reason)),
        JSON.stringify(scan.skipped),
      );
      assert.equal(scan.truncated, false);
    });

    it('`cuda-occupancy check DIR` ends at once on such a repository', async () => {
      const run = await quickly('check', () => runCli(['check', '--no-nvcc', '--format', 'json', root], dir));
      assert.equal(run.code, 0, run.err);
      const json = JSON.parse(run.out) as { files: Array<{ path: string }> };
      assert.deepEqual(
        json.files.map((f) => f.path),
        ['repo/src/k.cu', 'repo/src/loop/h.cuh'],
      );
    });

    it('refuses a header linked to /dev/zero or a FIFO without reading it, and stamps the others', async () => {
      const from = path.join(root, 'src', 'k.cu');
      const closure = await quickly('the include closure', () =>
        walkIncludeClosure({
          filePath: from,
          text: '#include "zero.cuh"\n#include "fifo.h"\n#include "loop/h.cuh"\n',
        }),
      );
      assert.deepEqual(
        closure.stamps.map((s) => path.basename(s.path)),
        ['h.cuh'],
      );
      assert.deepEqual(
        closure.refused.map((r) => [path.basename(r.path), r.from, r.reason]),
        [
          ['zero.cuh', from, 'a character device, not a regular file'],
          ['fifo.h', from, 'a FIFO, not a regular file'],
        ],
      );
    });
  });
});
