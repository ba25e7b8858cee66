/**
 * The server's connection to the client, on a thread of its own (started by answer-thread-port.ts):
 * it reads the client's messages (through the framing guard, transport.ts) and writes the server's.
 * Every message goes on to the server's thread, but for a hover, the code lenses or the code actions
 * of a document edited since its last completed analysis: those are answered here at once, from that
 * analysis's snapshot (answer-snapshots.ts), while the server's thread analyses the new version.
 *
 * To the server's thread: `{ kind: 'lsp', message }`, `{ kind: 'closed' }`, `{ kind: 'unreadable', why }`.
 * From it: `{ kind: 'lsp', message }` (written to the client), `{ kind: 'snapshot', snapshot }` (with
 * the branches it already holds by reference, snapshot-delta.ts), `{ kind: 'forget', uri }` (a
 * document closed), `{ kind: 'documentLimit', bytes }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type {
  CodeActionParams,
  CodeLensParams,
  DidChangeTextDocumentParams,
  DidCloseTextDocumentParams,
  DidOpenTextDocumentParams,
  HoverParams,
  Message,
  PublishDiagnosticsParams,
} from 'vscode-languageserver/node';
import { openTransport } from './transport';
import { AnswerSnapshots } from './answer-snapshots';
import { SnapshotDecoder, type WireSnapshot } from './snapshot-delta';

export type ToServer =
  { kind: 'lsp'; message: Message } | { kind: 'closed' } | { kind: 'unreadable'; why: string } | { kind: 'ready' };
export type FromServer =
  | { kind: 'lsp'; message: Message }
  | { kind: 'snapshot'; snapshot: WireSnapshot }
  | { kind: 'forget'; uri: string }
  | { kind: 'documentLimit'; bytes: number };

const port = parentPort;
if (port) {
  const send = (message: ToServer) => port.postMessage(message);
  const transport = openTransport((workerData as { argv: string[] }).argv, { threaded: true });
  if (!transport) send({ kind: 'unreadable', why: 'no transport on the command line' });
  else {
    const snapshots = new AnswerSnapshots();
    const decoder = new SnapshotDecoder();
    let shutdown = false;
    const answer = (id: number | string, result: unknown) =>
      void transport.writer.write({ jsonrpc: '2.0', id, result } as Message);
    transport.reader.onError((error) => send({ kind: 'unreadable', why: error.message }));
    transport.reader.onClose(() => send({ kind: 'closed' }));
    transport.reader.listen((message) => {
      const m = message as { id?: number | string | null; method?: unknown; params?: unknown };
      if (typeof m.method === 'string' && !shutdown) {
        if (m.method === 'textDocument/didOpen') {
          const p = m.params as DidOpenTextDocumentParams;
          snapshots.opened(p.textDocument.uri, p.textDocument.version);
        } else if (m.method === 'textDocument/didChange') {
          const p = m.params as DidChangeTextDocumentParams;
          snapshots.changed(p.textDocument.uri, p.textDocument.version, p.contentChanges);
        } else if (m.method === 'textDocument/didClose') {
          snapshots.closed((m.params as DidCloseTextDocumentParams).textDocument.uri);
        } else if (m.method === 'shutdown') shutdown = true;
        else if (
          m.id !== undefined &&
          m.id !== null &&
          answered(snapshots, m.method, m.params, (r) => answer(m.id!, r))
        )
          return;
      }
      send({ kind: 'lsp', message });
    });
    port.on('message', (message: FromServer) => {
      if (message.kind === 'lsp') {
        const m = message.message as { method?: string; params?: unknown };
        if (m.method === 'textDocument/publishDiagnostics') {
          const p = m.params as PublishDiagnosticsParams;
          snapshots.published(p.uri, p.version);
        }
        void transport.writer.write(message.message);
      } else if (message.kind === 'snapshot') {
        const snapshot = decoder.decode(message.snapshot);
        if (snapshot) snapshots.completed(snapshot);
      } else if (message.kind === 'forget') decoder.forget(message.uri);
      else if (message.kind === 'documentLimit') transport.setDocumentLimit(message.bytes);
    });
    send({ kind: 'ready' });
  }
}

/** Answers a request from the snapshots when they answer for its document; false to pass it on. */
function answered(
  snapshots: AnswerSnapshots,
  method: string,
  params: unknown,
  reply: (result: unknown) => void,
): boolean {
  const uri = (params as { textDocument?: { uri?: unknown } } | null)?.textDocument?.uri;
  if (typeof uri !== 'string' || !snapshots.answersFor(uri)) return false;
  try {
    if (method === 'textDocument/hover') reply(snapshots.hover(params as HoverParams));
    else if (method === 'textDocument/codeLens')
      reply(snapshots.codeLenses((params as CodeLensParams).textDocument.uri));
    else if (method === 'textDocument/codeAction') reply(snapshots.codeActions(params as CodeActionParams));
    else return false;
  } catch {
    // A snapshot that cannot answer: the server's thread will.
    return false;
  }
  return true;
}
