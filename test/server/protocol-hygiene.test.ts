/**
 * The base protocol and the lifecycle, on the shipped server over raw stdio (issue 25, case 9): a framing
 * error closes the connection and the process exits non-zero (for the client to restart it); a second
 * initialize is an error and the open documents stay; -32002 before initialize, -32600 after shutdown;
 * a change to an older version is ignored.
 */
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import * as path from 'node:path';
import { launchOf, REPO_ROOT, SERVER_BUNDLE } from '../support/lsp-session';

interface Raw {
  child: ChildProcessWithoutNullStreams;
  /** Sends one framed message. */
  send(message: object): void;
  /** Sends bytes as they are. */
  write(bytes: string | Buffer): void;
  /** The next message answering `id`, or the next notification of `method`. */
  next(match: { id?: number; method?: string }, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited(timeoutMs?: number): Promise<number | null>;
  stderr(): string;
}

function startRaw(): Raw {
  const launch = launchOf(SERVER_BUNDLE);
  const child = spawn(process.execPath, [...launch.args, SERVER_BUNDLE, '--stdio'], {
    env: { ...process.env, ...launch.env },
    stdio: 'pipe',
  });
  let buffer = Buffer.alloc(0);
  let errors = '';
  const messages: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  child.stderr.on('data', (d) => (errors += String(d)));
  child.stdout.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) break;
      const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]);
      if (buffer.length < end + 4 + length) break;
      messages.push(JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString('utf8')));
      buffer = buffer.subarray(end + 4 + length);
    }
    for (const w of waiters.splice(0)) w();
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    send: (message) => {
      const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
      child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
    },
    write: (bytes) => child.stdin.write(bytes),
    next: async (match, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const k = messages.findIndex((m) =>
          match.id !== undefined ? m.id === match.id && m.method === undefined : m.method === match.method,
        );
        if (k >= 0) return messages.splice(k, 1)[0];
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`no message ${JSON.stringify(match)} within ${timeoutMs} ms; stderr: ${errors.slice(-500)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    exited: (timeoutMs = 10_000) =>
      Promise.race([
        exit,
        new Promise<number | null>((_, reject) =>
          setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms`)), timeoutMs),
        ),
      ]),
    stderr: () => errors,
  };
}

const INITIALIZE = {
  processId: process.pid,
  rootUri: pathToFileURL(path.join(REPO_ROOT, 'examples')).href,
  capabilities: {},
  initializationOptions: { cacheDir: null },
};
const KERNEL = '__global__ void __launch_bounds__(64) k(float* p) {}\nvoid f(float* p) { k<<<1, 128>>>(p); }\n';

describe('protocol hygiene (raw stdio)', function () {
  this.timeout(60_000);
  const started: Raw[] = [];
  const start = () => {
    const raw = startRaw();
    started.push(raw);
    return raw;
  };
  afterEach(() => {
    for (const raw of started.splice(0)) if (raw.child.exitCode === null) raw.child.kill('SIGKILL');
  });

  async function initialized(raw: Raw): Promise<void> {
    raw.send({ id: 1, method: 'initialize', params: INITIALIZE });
    const answer = await raw.next({ id: 1 });
    assert.ok(answer.result, JSON.stringify(answer));
    raw.send({ method: 'initialized', params: {} });
  }

  it('answers a request before initialize with -32002, and then initializes', async () => {
    const raw = start();
    raw.send({
      id: 7,
      method: 'textDocument/hover',
      params: { textDocument: { uri: 'file:///x.cu' }, position: { line: 0, character: 0 } },
    });
    const early = await raw.next({ id: 7 });
    assert.equal((early.error as { code: number }).code, -32002);
    await initialized(raw);
  });

  it('refuses a second initialize, and keeps serving the documents already open', async () => {
    const raw = start();
    await initialized(raw);
    const uri = pathToFileURL(path.join(REPO_ROOT, 'examples', 'second-init.cu')).href;
    raw.send({
      method: 'textDocument/didOpen',
      params: { textDocument: { uri, languageId: 'cuda-cpp', version: 1, text: KERNEL } },
    });
    raw.send({ id: 2, method: 'initialize', params: INITIALIZE });
    const again = await raw.next({ id: 2 });
    assert.equal((again.error as { code: number }).code, -32600);
    raw.send({ id: 3, method: 'textDocument/codeLens', params: { textDocument: { uri } } });
    const lenses = await raw.next({ id: 3 });
    assert.ok(Array.isArray(lenses.result) && lenses.result.length > 0, JSON.stringify(lenses));
  });

  it('answers requests after shutdown with -32600, and exits 0 on exit', async () => {
    const raw = start();
    await initialized(raw);
    raw.send({ id: 2, method: 'shutdown' });
    assert.equal((await raw.next({ id: 2 })).result, null);
    raw.send({
      id: 3,
      method: 'textDocument/hover',
      params: { textDocument: { uri: 'file:///x.cu' }, position: { line: 0, character: 0 } },
    });
    assert.equal(((await raw.next({ id: 3 })).error as { code: number }).code, -32600);
    raw.send({ id: 4, method: 'shutdown' });
    assert.equal(((await raw.next({ id: 4 })).error as { code: number }).code, -32600);
    raw.send({ method: 'exit' });
    assert.equal(await raw.exited(), 0);
  });

  it("ignores a change to a version not newer than the document's", async () => {
    const raw = start();
    await initialized(raw);
    const uri = pathToFileURL(path.join(REPO_ROOT, 'examples', 'versions.cu')).href;
    raw.send({
      method: 'textDocument/didOpen',
      params: { textDocument: { uri, languageId: 'cuda-cpp', version: 5, text: KERNEL } },
    });
    raw.send({
      method: 'textDocument/didChange',
      params: { textDocument: { uri, version: 3 }, contentChanges: [{ text: '' }] },
    });
    raw.send({
      method: 'textDocument/didChange',
      params: { textDocument: { uri, version: 5 }, contentChanges: [{ text: '' }] },
    });
    raw.send({ id: 2, method: 'textDocument/codeLens', params: { textDocument: { uri } } });
    const lenses = await raw.next({ id: 2 });
    assert.ok(Array.isArray(lenses.result) && lenses.result.length === 2, JSON.stringify(lenses));
    const published = await raw.next({ method: 'textDocument/publishDiagnostics' });
    assert.equal((published.params as { version: number }).version, 5);
  });

  const framingErrors: Array<[string, string]> = [
    ['a header without Content-Length', 'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}'],
    ['a Content-Length that is not a number', 'Content-Length: lots\r\n\r\n{}'],
    ['a Content-Length of a terabyte', `Content-Length: ${2 ** 40}\r\n\r\n{}`],
    ['a header line without a name', 'garbage\r\n\r\n'],
    ['a header that never ends', 'Content-Length: 2\r\n' + 'X-Pad: y\r\n'.repeat(2000)],
  ];
  for (const [name, bytes] of framingErrors) {
    it(`closes the connection and exits non-zero on ${name}`, async () => {
      const raw = start();
      await initialized(raw);
      raw.write(bytes);
      const code = await raw.exited();
      assert.notEqual(code, 0);
      assert.match(raw.stderr(), /cannot read the client's messages/);
    });
  }

  const malformedMessages: Array<[string, string]> = [
    ['malformed JSON', '{"jsonrpc":"2.0","method":'],
    ['a number', '42'],
    ['an array', '[{"jsonrpc":"2.0","method":"initialized"}]'],
    ['null', 'null'],
    ['a string', '"textDocument/hover"'],
    ['an object without "jsonrpc": "2.0"', '{"method":"initialized","params":{}}'],
    ['an object with neither a method nor an id', '{"jsonrpc":"2.0","params":{}}'],
    ['a response with neither a result nor an error', '{"jsonrpc":"2.0","id":5}'],
    ['a request whose id is an object', '{"jsonrpc":"2.0","id":{},"method":"shutdown"}'],
  ];
  for (const [name, body] of malformedMessages) {
    it(`closes the connection and exits non-zero on ${name} after initialize, with a document open`, async () => {
      const raw = start();
      await initialized(raw);
      const uri = pathToFileURL(path.join(REPO_ROOT, 'examples', 'malformed.cu')).href;
      raw.send({
        method: 'textDocument/didOpen',
        params: { textDocument: { uri, languageId: 'cuda-cpp', version: 1, text: KERNEL } },
      });
      await raw.next({ method: 'textDocument/publishDiagnostics' });
      raw.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      const code = await raw.exited();
      assert.ok(code !== 0 && code !== null, `exit status ${code}`);
      assert.match(raw.stderr(), /cannot read the client's messages \(.+\): closing the connection/);
    });
  }

  it('exits non-zero when the client goes away without shutdown', async () => {
    const raw = start();
    await initialized(raw);
    raw.child.stdin.end();
    assert.equal(await raw.exited(), 1);
  });
});
