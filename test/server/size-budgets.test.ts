/**
 * Caps that hold below the cap (issue 34, case 5), on the shipped server. A 15 MB document (under the old 16 MB
 * limit) published nothing, and a hover timed out at 30 s; a 300 MB `didOpen` (under the 1 GiB frame cap) took
 * 1.3 GB; 2,000 edits of 100 KB in a burst took 2.7 GB and left the server unanswering. Now documents over the
 * analysis budget (limits.documentMB, 4 MB) get one diagnostic at once, a message too large to hold such a
 * document is not decoded (a stand-in without its text takes its place), and a document grown far past the
 * budget is no longer kept as text.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { LspSession } from '../support/lsp-session';

/** The server's peak resident memory so far, in MB. */
function peakRssMB(session: LspSession): number {
  const status = readFileSync(`/proc/${session.process.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function within<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)),
  ]);
}

const LINE = '__global__ void k(float* p) { p[threadIdx.x] = 1; }  // a generated file, line after line\n';
const KERNEL = '__global__ void __launch_bounds__(64) k(float* p) {}\nvoid f(float* p) { k<<<1, 128>>>(p); }\n';

describe('documents and messages over the analysis budget', function () {
  this.timeout(120_000);
  if (process.platform !== 'linux') return;
  let session: LspSession;
  beforeEach(async () => {
    session = await LspSession.start({
      initializationOptions: { cacheDir: null },
      settings: { nvcc: { enabled: false } },
    });
  });
  afterEach(() => session.stop());

  it('reports a 15 MB document too large at once, and answers a hover at once', async () => {
    const uri = 'file:///budget/fifteen.cu';
    const started = Date.now();
    session.open(uri, LINE.repeat(Math.ceil((15 * 1024 * 1024) / LINE.length)));
    const [only] = await within(
      'diagnostics',
      10_000,
      session.waitForDiagnostics(uri, (d) => d.length > 0),
    );
    assert.equal(only.code, 'too-large-to-analyse');
    assert.match(only.message, /^too large to analyse: 15 MB, over the 4 MB limit/);
    assert.equal(await within('a hover', 2000, session.hover(uri, { line: 1, character: 20 })), null);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  });

  it('does not decode a 100 MB didOpen: the document is reported too large, and the server stays small', async () => {
    const uri = 'file:///budget/hundred.cu';
    session.open(uri, LINE.repeat(Math.ceil((100 * 1024 * 1024) / LINE.length)));
    const [only] = await within(
      'diagnostics',
      30_000,
      session.waitForDiagnostics(uri, (d) => d.length > 0),
    );
    assert.match(only.message, /^too large to analyse: 10\d MB, over the 4 MB limit .*its text is not kept/);
    assert.ok(peakRssMB(session) < 300, `peak RSS ${peakRssMB(session)} MB (a decoded 100 MB message takes 450)`);
    // A change that replaces the whole text brings it back.
    session.change(uri, [{ text: KERNEL }]);
    await within(
      'diagnostics',
      10_000,
      session.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'launch-exceeds-bounds')),
    );
  });

  it('stays answering, and small, through 2,000 edits of 100 KB in a burst', async () => {
    const uri = 'file:///budget/burst.cu';
    session.open(uri, KERNEL);
    await session.waitForDiagnostics(uri, (d) => d.length > 0);
    const started = Date.now();
    for (let k = 0; k < 2000; k++)
      session.change(uri, [
        {
          range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
          text: `// ${'x'.repeat(100_000)}\n`,
        },
      ]);
    const [only] = await within(
      'diagnostics',
      60_000,
      session.waitForDiagnostics(uri, (d) => d.length === 1 && d[0].code === 'too-large-to-analyse'),
    );
    assert.match(only.message, /its text is not kept/);
    assert.equal(await within('a hover', 30_000, session.hover(uri, { line: 1, character: 20 })), null);
    assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
    assert.ok(peakRssMB(session) < 700, `peak RSS ${peakRssMB(session)} MB (it was 2.7 GB)`);
  });
});
