/**
 * The CLI on bad input (issue 9): unreadable files, directories without CUDA
 * files, binary files, bad flags, unknown commands and architectures each give
 * exactly one clear line on stderr and exit status 2, never a stack trace; and
 * `--format json` is always valid JSON, also on a directory of mutated
 * fixtures. In-process through `main(argv, io)`, and once through the bundle.
 */
import * as assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { runCli, REPO_ROOT, type CliRun } from '../support/cli-run';
import {
  checkProperty,
  fixtureSources,
  fuzzRuns,
  hostileDocuments,
  mutatedSource,
  pseudoRandomBytes,
} from '../support/fuzz-sources';
import { tooLargeToAnalyse } from '../../server/src/document-limits';

const CLI_BUNDLE = path.join(REPO_ROOT, 'dist', 'cli', 'cuda-occupancy.js');

/** Exit 2, nothing on stdout, one line on stderr that says what is wrong, no stack trace. */
function assertOneLineError(run: CliRun, says: RegExp): void {
  assert.equal(run.code, 2, `exit status (stderr: ${run.err})`);
  assert.equal(run.out, '', 'nothing on stdout');
  assert.match(run.err, /^cuda-occupancy: [^\n]+\n$/, `exactly one line on stderr: ${JSON.stringify(run.err)}`);
  assert.doesNotMatch(run.err, /\bat .+:\d+:\d+|internal error|Error:/, 'no stack trace or internal error');
  assert.match(run.err, says);
}

describe('CLI errors', function () {
  this.timeout(60_000);
  let dir: string;
  let good: string;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-cli-errors-'));
    good = path.join(dir, 'good.cu');
    writeFileSync(good, fixtureSources().find((f) => f.name.endsWith('/saxpy.cu'))!.text);
    writeFileSync(path.join(dir, 'binary.cu'), pseudoRandomBytes(4096));
    mkdirSync(path.join(dir, 'no-cuda'));
    writeFileSync(path.join(dir, 'no-cuda', 'notes.txt'), 'not CUDA\n');
    writeFileSync(path.join(dir, 'no-cuda', 'kernel.cpp'), 'int main() {}\n');
    mkdirSync(path.join(dir, 'with-binary'));
    writeFileSync(path.join(dir, 'with-binary', 'a.cu'), '__global__ void k() {}\n');
    writeFileSync(path.join(dir, 'with-binary', 'b.cu'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1]));
    symlinkSync(path.join(dir, 'missing-target.cu'), path.join(dir, 'dangling.cu'));
    execFileSync('mkfifo', [path.join(dir, 'pipe.cu')]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<{ name: string; argv: () => string[]; says: RegExp }> = [
    { name: 'an unknown command', argv: () => ['frobnicate'], says: /unknown command "frobnicate"/ },
    { name: 'an unknown flag', argv: () => ['check', '--bogus', good], says: /unknown option --bogus/ },
    { name: 'a flag without its value', argv: () => ['check', good, '--format'], says: /--format needs a value/ },
    { name: 'a boolean flag given a value', argv: () => ['check', '--no-nvcc=yes', good], says: /takes no value/ },
    {
      name: 'a bad --format',
      argv: () => ['check', '--no-nvcc', '--format', 'xml', good],
      says: /--format must be .*xml/,
    },
    {
      name: 'a bad --fail-on',
      argv: () => ['check', '--no-nvcc', '--fail-on', 'sometimes', good],
      says: /--fail-on must be/,
    },
    {
      name: 'a bad --timeout',
      argv: () => ['check', '--timeout', '-1', good],
      says: /--timeout needs a positive number/,
    },
    {
      name: 'an unknown --arch',
      argv: () => ['check', '--no-nvcc', '--arch', 'sm_13', good],
      says: /unknown architecture sm_13/,
    },
    {
      name: 'an empty --arch',
      argv: () => ['check', '--no-nvcc', '--arch', ',', good],
      says: /--arch names no architecture/,
    },
    {
      name: 'calc with an unknown --arch',
      argv: () => ['calc', '--arch', 'sm_999', '--block', '256', '--regs', '32'],
      says: /unknown architecture "sm_999"/,
    },
    {
      name: 'calc with a non-integer --block',
      argv: () => ['calc', '--arch', 'sm_90', '--block', 'lots', '--regs', '32'],
      says: /--block must be an integer/,
    },
    {
      name: 'calc with an unknown flag',
      argv: () => ['calc', '--arch', 'sm_90', '--warp', '32'],
      says: /unknown argument "--warp"/,
    },
    { name: 'check without files', argv: () => ['check', '--no-nvcc'], says: /no files given/ },
    {
      name: 'a missing file',
      argv: () => ['check', '--no-nvcc', path.join(dir, 'nope.cu')],
      says: /cannot read .*nope\.cu/,
    },
    {
      name: 'a dangling symlink',
      argv: () => ['check', '--no-nvcc', path.join(dir, 'dangling.cu')],
      says: /cannot read .*dangling\.cu/,
    },
    {
      name: 'a FIFO (a read would block forever)',
      argv: () => ['check', '--no-nvcc', path.join(dir, 'pipe.cu')],
      says: /cannot read .*pipe\.cu: not a regular file/,
    },
    {
      name: 'a directory with no CUDA files',
      argv: () => ['check', '--no-nvcc', path.join(dir, 'no-cuda')],
      says: /no CUDA files \(\.cu, \.cuh\) under/,
    },
    {
      name: 'a binary file',
      argv: () => ['check', '--no-nvcc', path.join(dir, 'binary.cu')],
      says: /binary\.cu is not a text file/,
    },
    {
      name: 'a binary file in a directory, in JSON mode',
      argv: () => ['check', '--no-nvcc', '--format', 'json', path.join(dir, 'with-binary')],
      says: /b\.cu is not a text file/,
    },
  ];

  for (const c of cases) {
    it(`answers ${c.name} with one line on stderr and exit 2`, async () => {
      assertOneLineError(await runCli(c.argv(), dir), c.says);
    });
  }

  it('answers an unreadable file with one line on stderr and exit 2', async function () {
    if (process.getuid?.() === 0) this.skip(); // root reads a mode-000 file
    const locked = path.join(dir, 'locked.cu');
    writeFileSync(locked, '__global__ void k() {}\n');
    chmodSync(locked, 0);
    try {
      assertOneLineError(await runCli(['check', '--no-nvcc', locked], dir), /cannot read .*locked\.cu: EACCES/);
    } finally {
      chmodSync(locked, 0o644);
    }
  });

  describe('--format json is always valid JSON', () => {
    let mutated: string;
    let count = 0;
    /** Files over the size limits (the 230,000-character line of 10,000 nested ifs): skipped with a line each. */
    let oversize: string[] = [];
    before(() => {
      // Mutated fixtures from a fixed seed plus the hostile documents (NUL-free ones: a NUL makes a file binary).
      mutated = path.join(dir, 'mutated');
      mkdirSync(mutated);
      const texts = [
        ...fc.sample(mutatedSource, { seed: 2024, numRuns: 60 }),
        ...hostileDocuments().map((d) => d.text),
      ].filter((t) => !t.includes('\0'));
      texts.forEach((text, k) => writeFileSync(path.join(mutated, `m${String(k).padStart(3, '0')}.cu`), text));
      oversize = texts.flatMap((text, k) => (tooLargeToAnalyse(text) ? [`m${String(k).padStart(3, '0')}.cu`] : []));
      count = texts.length - oversize.length;
    });

    for (const target of ['test/fixtures/sources', 'examples']) {
      it(`on ${target}`, async () => {
        const run = await runCli(['check', '--no-nvcc', '--format', 'json', '--fail-on', 'never', target], REPO_ROOT);
        assert.equal(run.code, 0, run.err);
        const json = JSON.parse(run.out) as { files: unknown[] };
        assert.ok(json.files.length >= 4);
      });
    }

    it('on a directory of mutated fixtures and hostile documents (json and sarif)', async () => {
      for (const format of ['json', 'sarif']) {
        const run = await runCli(['check', '--no-nvcc', '--format', format, '--fail-on', 'never', mutated], dir);
        assert.equal(run.code, 0, run.err);
        const json = JSON.parse(run.out) as { files?: unknown[]; runs?: unknown[] };
        if (format === 'json') assert.equal(json.files?.length, count);
        else assert.ok(Array.isArray(json.runs));
        assert.deepEqual(
          run.err
            .split('\n')
            .filter((l) => /too large to analyse/.test(l))
            .map((l) => /(m\d+\.cu)/.exec(l)?.[1]),
          oversize,
        );
      }
    });

    it('on any mutated or random source', async () => {
      const file = path.join(dir, 'case.cu');
      await checkProperty(
        'cli: check --format json of any source',
        [mutatedSource],
        async (text) => {
          writeFileSync(file, text.replace(/\0/g, ' '));
          const run = await runCli(['check', '--no-nvcc', '--format', 'json', file], dir);
          assert.notEqual(run.code, 2, run.err);
          const json = JSON.parse(run.out) as { files: Array<{ path: string }> };
          assert.deepEqual(
            json.files.map((f) => f.path),
            ['case.cu'],
          );
        },
        fuzzRuns(10, 0.02),
      );
    });
  });

  describe('the bundled CLI (dist/cli/cuda-occupancy.js)', () => {
    const spawnCli = (args: string[]) =>
      spawnSync(process.execPath, [CLI_BUNDLE, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });

    it('answers an unknown command and a binary file with one line on stderr and exit 2', () => {
      for (const [args, says] of [
        [['frobnicate'], /unknown command/],
        [['check', '--no-nvcc', 'binary.cu'], /binary\.cu is not a text file/],
        [['check', '--no-nvcc', 'pipe.cu'], /not a regular file/],
      ] as const) {
        const run = spawnCli([...args]);
        assertOneLineError({ code: run.status ?? -1, out: run.stdout, err: run.stderr }, says);
      }
    });

    it('prints valid JSON for the fixture corpus', () => {
      const run = spawnCli([
        'check',
        '--no-nvcc',
        '--format',
        'json',
        '--fail-on',
        'never',
        path.join(REPO_ROOT, 'test', 'fixtures', 'sources'),
      ]);
      assert.equal(run.status, 0, run.stderr);
      assert.ok((JSON.parse(run.stdout) as { files: unknown[] }).files.length >= 10);
    });
  });
});
