/**
 * The shipped server on hostile documents (issue 9), in a workspace whose
 * folder and file names are not ASCII: every case gets its diagnostics
 * published and every request answered, nothing is logged as an error, the
 * process stays up, and the documents after it are still served.
 */
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { LspSession, fileUri } from '../support/lsp-session';
import { halfTyped, hostileDocuments, tenMegabyteSource } from '../support/fuzz-sources';

const SAFETY_NET_MS = 60_000;

describe('robust input: the server over LSP', function () {
  this.timeout(180_000);
  let session: LspSession;
  let root: string;
  let folder: string;
  let serial = 0;

  before(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'cuda-occ-робаст-'));
    folder = path.join(root, 'ワークスペース Ünïcødé', 'src ✨');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, '配置.h'), '#pragma once\nconstexpr int kThreads = 192;\n');
    writeFileSync(
      path.join(folder, 'カーネル.cu'),
      '#include "配置.h"\n__global__ void scale(float* p) { p[threadIdx.x] *= 2.0f; }\nvoid run(float* p) { scale<<<4, kThreads>>>(p); }\n',
    );
    session = await LspSession.start({
      rootDir: root,
      settings: { nvcc: { enabled: false } },
      initializationOptions: { cacheDir: null },
    });
  });
  after(async () => {
    await session?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  function assertHealthy(): void {
    assert.equal(session.process.exitCode, null, `the server exited: ${session.logs.slice(-5).join('\n')}`);
    assert.deepEqual(
      session.logs.filter((l) => /\[error\]/.test(l)),
      [],
      'the server logged errors',
    );
  }

  /** Open, wait for diagnostics, ask for hover, lenses and code actions; everything must be answered. */
  async function serve(text: string): Promise<{ uri: string; diagnostics: Diagnostic[] }> {
    const uri = fileUri(path.join(folder, `ケース ${++serial}.cu`));
    const started = Date.now();
    session.open(uri, text);
    const diagnostics = await session.waitForDiagnostics(uri, () => true, SAFETY_NET_MS);
    const lenses = await session.codeLenses(uri);
    assert.ok(Array.isArray(lenses));
    for (const position of [
      { line: 0, character: 0 },
      ...(lenses ?? []).slice(0, 5).map((l) => l.range.start),
      { line: 1_000_000, character: 5 },
    ]) {
      await session.hover(uri, position);
      await session.request('textDocument/codeAction', {
        textDocument: { uri },
        range: { start: position, end: position },
        context: { diagnostics },
      });
    }
    assert.ok(Date.now() - started < SAFETY_NET_MS, `took ${Date.now() - started} ms`);
    assertHealthy();
    return { uri, diagnostics };
  }

  for (const doc of hostileDocuments()) {
    it(`serves ${doc.name}`, async () => {
      const { uri } = await serve(doc.text);
      session.close(uri);
    });
  }

  it('serves a 10 MB file, and the next document after it', async () => {
    const big = await serve(tenMegabyteSource());
    const small = await serve(
      '__global__ void __launch_bounds__(64) k(float* p) {}\nvoid f(float* p) { k<<<1, 128>>>(p); }\n',
    );
    assert.deepEqual(
      small.diagnostics.map((d) => d.code),
      ['launch-exceeds-bounds'],
    );
    session.close(big.uri);
    session.close(small.uri);
  });

  it('serves a fixture typed line by line through didChange', async () => {
    const steps = halfTyped('gemm-tiled.cu');
    const { uri } = await serve('');
    let previous = '';
    for (const step of steps) {
      // Append what was typed since the last step at the end of the document.
      const lines = previous.split('\n');
      session.change(uri, [
        {
          range: {
            start: { line: lines.length - 1, character: lines[lines.length - 1].length },
            end: { line: lines.length - 1, character: lines[lines.length - 1].length },
          },
          text: step.text.slice(previous.length),
        },
      ]);
      previous = step.text;
      await session.hover(uri, { line: lines.length - 1, character: 2 });
    }
    await session.waitForDiagnostics(uri, () => true, SAFETY_NET_MS);
    assertHealthy();
    session.close(uri);
  });

  it('resolves a launch through a header in the non-ASCII workspace', async () => {
    const file = path.join(folder, 'カーネル.cu');
    const uri = fileUri(file);
    session.open(uri, readFileSync(file, 'utf8'));
    await session.waitForDiagnostics(uri, () => true, SAFETY_NET_MS);
    const lenses = (await session.codeLenses(uri)) ?? [];
    assert.ok(
      lenses.some((l) => l.command?.title.startsWith('192 threads')),
      JSON.stringify(lenses.map((l) => l.command?.title)),
    );
    assertHealthy();
    session.close(uri);
  });
});
