/** The shipped server, spawned from dist/ and spoken to over stdio. */
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LspSession, SERVER_BUNDLE, REPO_ROOT, withCursor, fileUri, launchOf } from '../support/lsp-session';
import { MEMORY_USAGE_REQUEST, type MemoryUsage } from '../../server/src/protocol';

const uri = fileUri(path.join(REPO_ROOT, 'test', 'virtual', 'scale.cu'));

describe('bundled server over stdio', function () {
  let session: LspSession;
  before(async () => {
    session = await LspSession.start();
  });
  after(async () => {
    await session.stop();
  });

  it('initializes with hover, code lens and incremental sync', () => {
    const caps = session.initializeResult.capabilities;
    assert.equal(caps.hoverProvider, true);
    assert.ok(caps.codeLensProvider);
    assert.deepEqual(
      caps.textDocumentSync && typeof caps.textDocumentSync === 'object' ? caps.textDocumentSync.change : null,
      2,
    );
    assert.equal(session.initializeResult.serverInfo?.name, 'cuda-occupancy-lsp');
  });

  it('reports a launch above __launch_bounds__ as an error pointing at the bound', async () => {
    const { text } = withCursor(`__global__ void __launch_bounds__(128) scale_rows(float* m) {}
void run(float* m) {
  |scale_rows<<<64, 256>>>(m);
}
`);
    session.open(uri, text);
    const diagnostics = await session.waitForDiagnostics(uri, (d) => d.length > 0);
    const bound = diagnostics.find((d) => d.code === 'launch-exceeds-bounds');
    assert.ok(bound, JSON.stringify(diagnostics));
    assert.equal(bound.severity, 1);
    assert.equal(bound.range.start.line, 2);
    assert.equal(bound.relatedInformation?.[0].location.range.start.line, 0);
    session.close(uri);
  });

  it('answers how much memory it uses, for benchmarks and bug reports', async () => {
    session.open(uri, '__global__ void k() {}\n');
    const usage = await session.request<MemoryUsage>(MEMORY_USAGE_REQUEST, null);
    assert.equal(usage.openDocuments, 1);
    assert.ok(
      usage.rssMb > 10 &&
        usage.heapUsedMb > 0 &&
        usage.heapUsedMb <= usage.heapTotalMb &&
        usage.heapTotalMb < usage.rssMb,
      JSON.stringify(usage),
    );
    session.close(uri);
  });

  it('runs with the heap cap its shebang gives it, which keeps V8 from growing the heap to 4x what is live', async () => {
    assert.deepEqual(launchOf(SERVER_BUNDLE), {
      env: { MALLOC_TRIM_THRESHOLD_: '131072' },
      args: ['--max-old-space-size=1024', '--expose-gc', '--max-semi-space-size=8'],
    });
    const usage = await session.request<MemoryUsage>(MEMORY_USAGE_REQUEST, null);
    // 1024 MB of old generation plus the young generation's 8 MB semi-spaces (1048 MB; 1072 MB with 16 MB ones).
    assert.ok(usage.heapLimitMb >= 1024 && usage.heapLimitMb < 1060, JSON.stringify(usage));
  });

  it('can collect garbage in idle windows (its shebang exposes gc), so that V8 seldom pauses a request for its own collections', async () => {
    const usage = await session.request<MemoryUsage>(MEMORY_USAGE_REQUEST, null);
    assert.equal(typeof usage.idleCollections, 'number', JSON.stringify(usage));
    assert.equal(typeof usage.idleCompactions, 'number', JSON.stringify(usage));
  });
});

describe('a bundle that lost its wasm', function () {
  it('fails to initialize with a message that names the missing file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-nowasm-'));
    try {
      cpSync(path.dirname(SERVER_BUNDLE), path.join(dir, 'dist', 'server'), { recursive: true });
      await assert.rejects(
        LspSession.start({ serverPath: path.join(dir, 'dist', 'server', 'server.js'), rootDir: dir }),
        /tree-sitter-cuda\.wasm/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
