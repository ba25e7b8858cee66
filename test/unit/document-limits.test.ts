/** The size limits on what is analysed (issue 25, case 8): one verdict for the server and the CLI. */
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { longestLine, tooLargeAfterEdit, tooLargeToAnalyse } from '../../server/src/document-limits';
import { runCli } from '../support/cli-run';

describe('document size limits', () => {
  it('passes ordinary documents', () => {
    assert.equal(tooLargeToAnalyse('__global__ void k() {}\n'.repeat(10_000)), null);
    assert.equal(tooLargeToAnalyse(''), null);
  });

  it('says why a document over the size limit is not analysed', () => {
    assert.equal(
      tooLargeToAnalyse('x'.repeat(3 * 1024 * 1024), { maxBytes: 2 * 1024 * 1024, maxLineLength: 1e9 }),
      'too large to analyse: 3 MB, over the 2 MB limit (cudaOccupancy.limits.documentMB)',
    );
    // Bytes, not characters: 'é' is two bytes of UTF-8.
    assert.match(
      tooLargeToAnalyse('é\n'.repeat(700_000), { maxBytes: 2 * 1024 * 1024, maxLineLength: 1e9 }) ?? '',
      /^too large to analyse: 2 MB, over the 2 MB limit/,
    );
    assert.equal(tooLargeToAnalyse('é\n'.repeat(300_000), { maxBytes: 1024 * 1024, maxLineLength: 1e9 }), null);
  });

  it('says which line is too long, with every kind of line end', () => {
    const long = 'k<<<1, 32>>>(p); '.repeat(10_000);
    for (const end of ['\n', '\r\n', '\r']) {
      assert.equal(
        tooLargeToAnalyse(`a${end}b${end}${long}${end}c`),
        `too large to analyse: line 3 is ${long.length.toLocaleString('en-US')} characters long, over the 100,000-character limit (cudaOccupancy.limits.lineLength)`,
        JSON.stringify(end),
      );
    }
    assert.deepEqual(longestLine('ab\r\ncd\nefgh', 3), { line: 2, length: 4 });
    assert.equal(longestLine('ab\r\ncd\nefg', 3), null);
  });

  it('after an edit, looks only at the lines it wrote, and finds the same verdict', () => {
    const line = 'x'.repeat(60_000);
    const before = `a\n${line}\nb\n${line}\nc\n`;
    // Deleting the newline between two long lines joins them into one of 120,001 characters.
    const joinAt = before.indexOf('\nb\n');
    const after = before.slice(0, joinAt) + before.slice(joinAt + 3);
    assert.equal(tooLargeAfterEdit(after, joinAt, joinAt), tooLargeToAnalyse(after));
    assert.match(tooLargeAfterEdit(after, joinAt, joinAt) ?? '', /line 2 is 120,000 characters long/);
    assert.equal(tooLargeAfterEdit(before, 0, 1), null);
    const typed = `${before}${'y'.repeat(100_001)}`;
    assert.equal(tooLargeAfterEdit(typed, before.length, typed.length), tooLargeToAnalyse(typed));
  });

  it('skips, in the CLI, a 50 MB file and a 3.4 MB line with one line each, and checks the rest', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-limits-'));
    try {
      writeFileSync(
        path.join(dir, 'big.cu'),
        `__global__ void k(float* p) {}\n${'// padding padding padding padding padding padding padding\n'.repeat(900_000)}`,
      );
      writeFileSync(
        path.join(dir, 'line.cu'),
        `__global__ void k(float* p) {}\nvoid f(float* p) { ${'k<<<1, 32>>>(p); '.repeat(200_000)} }\n`,
      );
      writeFileSync(path.join(dir, 'ok.cu'), '__global__ void k(float* p) {}\nvoid f(float* p) { k<<<1, 32>>>(p); }\n');
      const started = Date.now();
      const run = await runCli(['check', '--no-nvcc', '--format', 'json', dir], dir);
      assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
      assert.equal(run.code, 0, run.err);
      assert.deepEqual(
        (JSON.parse(run.out) as { files: Array<{ path: string }> }).files.map((f) => f.path),
        ['ok.cu'],
      );
      assert.deepEqual(run.err.trim().split('\n'), [
        'cuda-occupancy: big.cu: too large to analyse: 51 MB, over the 4 MB limit (cudaOccupancy.limits.documentMB); skipped',
        'cuda-occupancy: line.cu: too large to analyse: line 2 is 3,400,021 characters long, over the 100,000-character limit (cudaOccupancy.limits.lineLength); skipped',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
