/**
 * Property-based fuzzing of the shipped server over LSP (dist/server/server.js
 * --stdio, spawned once per describe): random and mutated documents, random
 * incremental edits through didChange, random positions for hover, code lens,
 * code actions and the chart request. Zero crashes: the process stays alive,
 * every request is answered (null or [] allowed), diagnostics arrive for every
 * version, nothing is logged as an error, and a document edited incrementally
 * gets the same diagnostics and lenses as the same text opened fresh.
 *
 * Seed and counts as in fuzz-core.test.ts (FUZZ_SEED, FUZZ_RUNS).
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { LspSession, fileUri } from '../support/lsp-session';
import { anySource, applyEdit, checkProperty, edit, editRange, fuzzRuns, mutatedSource } from '../support/fuzz-sources';

const ANSWER_MS = 20000;

/** A request's answer, or a failure naming the request if none comes. */
async function answered<T>(what: string, request: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${what} within ${ANSWER_MS} ms`)), ANSWER_MS);
  });
  try {
    return await Promise.race([request, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const position = fc.record({ line: fc.integer({ min: 0, max: 80 }), character: fc.integer({ min: 0, max: 120 }) });

/** Every request a client sends about a document, at the given positions; all must be answered. */
async function askEverything(
  session: LspSession,
  uri: string,
  positions: Array<{ line: number; character: number }>,
  diagnostics: Diagnostic[],
): Promise<void> {
  for (const p of positions) {
    await answered('hover', session.hover(uri, p));
    await answered(
      'codeAction',
      session.request('textDocument/codeAction', {
        textDocument: { uri },
        range: { start: p, end: p },
        context: { diagnostics },
      }),
    );
    await answered('chartData', session.request('cudaOccupancy/chartData', { uri, kernel: '', line: p.line }));
  }
  const lenses = await answered('codeLens', session.codeLenses(uri));
  assert.ok(lenses === null || Array.isArray(lenses), `codeLens answered ${JSON.stringify(lenses)}`);
  for (const d of diagnostics)
    await answered(
      'codeAction',
      session.request('textDocument/codeAction', {
        textDocument: { uri },
        range: d.range,
        context: { diagnostics: [d] },
      }),
    );
}

function assertHealthy(session: LspSession): void {
  assert.equal(session.process.exitCode, null, `the server exited: ${session.logs.slice(-5).join('\n')}`);
  const errors = session.logs.filter((l) => /\[error\]/.test(l));
  assert.deepEqual(errors, [], 'the server logged errors');
}

/** Diagnostics and lenses with the document's URI taken out, for comparing two documents. */
function comparable(uri: string, value: unknown): string {
  return JSON.stringify(value).split(JSON.stringify(uri).slice(1, -1)).join('<uri>');
}

describe('fuzz: the server over LSP', function () {
  this.timeout(0);
  let session: LspSession;
  let dir: string;
  let serial = 0;
  const nextUri = (name: string) => fileUri(path.join(dir, `${name}-${++serial}.cu`));

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-fuzz-'));
    session = await LspSession.start({
      rootDir: dir,
      settings: { nvcc: { enabled: false } },
      initializationOptions: { cacheDir: null },
    });
  });
  after(async () => {
    await session?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every request on random documents and publishes their diagnostics', async () => {
    await checkProperty(
      'server: random documents',
      [anySource, fc.array(position, { minLength: 1, maxLength: 4 })],
      async (text, positions) => {
        const uri = nextUri('doc');
        session.open(uri, text);
        try {
          const diagnostics = await session.waitForDiagnostics(uri, () => true, ANSWER_MS);
          await askEverything(session, uri, positions, diagnostics);
          assertHealthy(session);
        } finally {
          session.close(uri);
        }
      },
      fuzzRuns(15, 0.1),
    );
  });

  it('gives a document edited through didChange the diagnostics and lenses of its final text opened fresh', async () => {
    const change = fc.tuple(edit, fc.integer({ min: 0, max: 9 }));
    await checkProperty(
      'server: incremental didChange = fresh open',
      [
        mutatedSource,
        fc.array(fc.tuple(fc.array(change, { minLength: 1, maxLength: 3 }), fc.option(position, { nil: undefined })), {
          minLength: 1,
          maxLength: 6,
        }),
      ],
      async (original, batches) => {
        const uri = nextUri('edited');
        const freshUri = nextUri('fresh');
        session.open(uri, original);
        let client = TextDocument.create(uri, 'cuda-cpp', 1, original);
        try {
          for (const [batch, hoverAt] of batches) {
            const changes = batch.map(([e, kind]) => {
              const text = client.getText();
              const { start, end } = editRange(text, e);
              const c =
                kind === 0
                  ? { text: applyEdit(text, e) }
                  : { range: { start: client.positionAt(start), end: client.positionAt(end) }, text: e.insert };
              client = TextDocument.update(client, [c], client.version + 1);
              return c;
            });
            session.change(uri, changes);
            // Hovers between keystrokes make the server analyse intermediate versions.
            if (hoverAt) await answered('hover', session.hover(uri, hoverAt));
          }
          const incremental = await session.waitForDiagnostics(uri, () => true, ANSWER_MS);
          const incrementalLenses = await answered('codeLens', session.codeLenses(uri));
          await askEverything(session, uri, [{ line: 0, character: 0 }], incremental);
          // One document open at a time, so the workspace index holds no other version of it.
          session.close(uri);
          session.open(freshUri, client.getText());
          const fresh = await session.waitForDiagnostics(freshUri, () => true, ANSWER_MS);
          assert.equal(comparable(uri, incremental), comparable(freshUri, fresh), 'diagnostics differ');
          assert.equal(
            comparable(uri, incrementalLenses),
            comparable(freshUri, await answered('codeLens', session.codeLenses(freshUri))),
            'code lenses differ',
          );
          assertHealthy(session);
        } finally {
          session.close(uri);
          session.close(freshUri);
        }
      },
      fuzzRuns(8, 0.05),
    );
  });
});
