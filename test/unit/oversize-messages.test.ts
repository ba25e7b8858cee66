/**
 * Messages too large to hold a document the server would analyse are not decoded (issue 34, case 5): the framing
 * guard passes a stand-in without the text, and the document store keeps such a document, and one grown far past
 * the budget, without its text until a change replaces the whole of it.
 */
import * as assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { framingGuard, OVERSIZE_FIELD } from '../../server/src/lsp/framing-guard';
import { DocumentStore } from '../../server/src/lsp/document-store';
import { getCudaParser } from '../support/grammar';

const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** What the guard passes on for `input`, fed in chunks of `chunk` bytes; the messages, decoded. */
async function through(input: string, passed: number, chunk = 7919): Promise<unknown[]> {
  const bytes = Buffer.from(input);
  const pieces = Array.from({ length: Math.ceil(bytes.length / chunk) }, (_, k) =>
    bytes.subarray(k * chunk, (k + 1) * chunk),
  );
  const out: Buffer[] = [];
  const guard = framingGuard(1024 * 1024 * 1024, () => passed);
  await new Promise<void>((resolve, reject) => {
    guard.on('data', (d: Buffer) => out.push(d));
    guard.on('end', resolve);
    guard.on('error', reject);
    Readable.from(pieces).pipe(guard);
  });
  const messages: unknown[] = [];
  let rest = Buffer.concat(out).toString('utf8');
  while (rest.length > 0) {
    const m = /^Content-Length: (\d+)\r\n\r\n/.exec(rest)!;
    const body = Buffer.from(rest.slice(m[0].length)).subarray(0, Number(m[1])).toString('utf8');
    messages.push(JSON.parse(body));
    rest = rest.slice(m[0].length + body.length);
  }
  return messages;
}

const didOpen = (text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'textDocument/didOpen',
    params: { textDocument: { uri: 'file:///a%20b/k.cu', languageId: 'cuda-cpp', version: 3, text } },
  });

describe('messages over the analysis budget', () => {
  it('passes messages within the limit whole', async () => {
    const small = didOpen('__global__ void k() {}\n');
    assert.deepEqual(await through(frame(small) + frame('{"jsonrpc":"2.0","method":"initialized"}'), 1 << 20), [
      JSON.parse(small),
      { jsonrpc: '2.0', method: 'initialized' },
    ]);
  });

  it('passes a stand-in for a didOpen or didChange over the limit, without its text, and the next message whole', async () => {
    const text = 'float table = 0; // "quoted" and \\ escaped\n'.repeat(50_000);
    const change = JSON.stringify({
      jsonrpc: '2.0',
      method: 'textDocument/didChange',
      params: { textDocument: { uri: 'file:///k.cu', version: 9 }, contentChanges: [{ text }] },
    });
    const messages = await through(
      frame(didOpen(text)) + frame(change) + frame('{"jsonrpc":"2.0","id":1,"method":"shutdown"}'),
      1 << 20,
    );
    assert.deepEqual(messages, [
      {
        jsonrpc: '2.0',
        method: 'textDocument/didOpen',
        params: {
          textDocument: { uri: 'file:///a%20b/k.cu', languageId: 'cuda-cpp', version: 3, text: '' },
          [OVERSIZE_FIELD]: Buffer.byteLength(didOpen(text)),
        },
      },
      {
        jsonrpc: '2.0',
        method: 'textDocument/didChange',
        params: {
          textDocument: { uri: 'file:///k.cu', version: 9 },
          contentChanges: [],
          [OVERSIZE_FIELD]: Buffer.byteLength(change),
        },
      },
      { jsonrpc: '2.0', id: 1, method: 'shutdown' },
    ]);
  });

  it('fails the framing for another message over the limit, or one whose document its first bytes do not name', async () => {
    const big = 'x'.repeat(2 << 20);
    await assert.rejects(
      through(
        frame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'textDocument/hover', params: { pad: big } })),
        1 << 20,
      ),
      /\(textDocument\/hover\) is over the size the document limit allows/,
    );
    const textFirst = `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"text":"${big}","uri":"file:///k.cu","version":1}}}`;
    await assert.rejects(
      through(frame(textFirst), 1 << 20),
      /does not name its document and version in its first 65536 bytes/,
    );
  });
});

describe('documents whose text is not kept', () => {
  const URI = 'file:///budget.cu';
  const KERNEL = '__global__ void k(float* p) { p[threadIdx.x] = 1; }\n';
  const limits = () => ({ maxBytes: 64 * 1024, maxLineLength: 100_000 });
  async function store(): Promise<DocumentStore> {
    const parser = await getCudaParser();
    return new DocumentStore({
      parser: {
        parse: (t, old) => parser.parse(t, old),
        parseApart: (t) => parser.parseApart(t),
        dispose: () => undefined,
      },
      limits,
    });
  }

  it('ignores the edits of a document opened without its text, until a change replaces the whole text', async () => {
    const documents = await store();
    documents.openWithoutText(URI, 'cuda-cpp', 1, 300 * 1024 * 1024);
    assert.match(
      documents.tooLarge(URI)!,
      /^too large to analyse: 300 MB, over the 0\.1 MB limit .*its text is not kept/,
    );
    const edit = { range: { start: { line: 5, character: 0 }, end: { line: 5, character: 0 } }, text: 'x' };
    assert.equal(documents.change(URI, 2, [edit]), true);
    assert.equal(documents.text(URI), '');
    assert.ok(documents.tooLarge(URI));
    assert.equal(documents.change(URI, 3, [edit, { text: KERNEL }, edit]), true);
    assert.equal(documents.tooLarge(URI), null);
    assert.equal(
      documents.text(URI),
      `${KERNEL}x`,
      'the edits after the whole text apply to it (past its end: at its end)',
    );
    assert.equal(documents.facts(URI)?.kernels.length, 1);
  });

  it('drops the text of a document edited to more than twice the limit', async () => {
    const documents = await store();
    documents.open(URI, 'cuda-cpp', 1, KERNEL);
    const grow = {
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      text: `// ${'x'.repeat(100_000)}\n`,
    };
    documents.change(URI, 2, [grow]);
    assert.match(
      documents.tooLarge(URI)!,
      /^too large to analyse: 0\.1 MB, over the 0\.1 MB limit \(cudaOccupancy\.limits\.documentMB\)$/,
    );
    assert.ok(documents.text(URI)!.length > 100_000, 'a document over the limit is still kept');
    documents.change(URI, 3, [grow]);
    assert.match(documents.tooLarge(URI)!, /its text is not kept/);
    assert.equal(documents.text(URI), '');
  });
});
