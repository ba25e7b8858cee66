/**
 * The server's thread's end of the answer thread (answer-thread.ts): a message reader and writer for
 * the connection, and the snapshots of completed analyses handed to the thread. Started for byte-stream
 * transports (stdio, socket, pipe); Node IPC delivers messages to the main thread only, and keeps
 * answering there.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
  type MessageWriter,
} from 'vscode-languageserver/node';
import type { AnswerSnapshot } from './answer-snapshots';
import type { FromServer, ToServer } from './answer-thread';
import { SnapshotEncoder } from './snapshot-delta';

export interface AnswerThread {
  reader: MessageReader;
  writer: MessageWriter;
  /** Hands a completed analysis to the thread, to answer from while the next one runs. */
  snapshot(snapshot: AnswerSnapshot): void;
  /** The document was closed: neither end keeps its snapshot's branches (see snapshot-delta.ts). */
  forget(uri: string): void;
  setDocumentLimit(bytes: number): void;
}

class ThreadReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | null = null;
  private readonly early: Message[] = [];

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    for (const message of this.early.splice(0)) callback(message);
    return { dispose: () => (this.callback = null) };
  }

  deliver(message: Message): void {
    if (this.callback) this.callback(message);
    else this.early.push(message);
  }

  closed(): void {
    this.fireClose();
  }

  failed(why: string): void {
    this.fireError(new Error(why));
  }
}

class ThreadWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(private readonly worker: Worker) {
    super();
  }

  write(message: Message): Promise<void> {
    this.worker.postMessage({ kind: 'lsp', message } satisfies FromServer);
    return Promise.resolve();
  }

  end(): void {}
}

/** The answer thread for `argv`'s transport, or null where it does not run (Node IPC, or no script beside this one). */
export function startAnswerThread(
  argv: readonly string[],
  script = path.join(__dirname, 'answer-thread.js'),
): AnswerThread | null {
  if (argv.includes('--node-ipc') || !existsSync(script)) return null;
  const worker = new Worker(script, { workerData: { argv: [...argv] } });
  const reader = new ThreadReader();
  worker.on('message', (message: ToServer) => {
    if (message.kind === 'lsp') reader.deliver(message.message);
    else if (message.kind === 'closed') reader.closed();
    else if (message.kind === 'unreadable') reader.failed(message.why);
  });
  worker.on('error', (error) => reader.failed(`the connection's thread failed: ${error.message}`));
  worker.on('exit', () => reader.closed());
  const encoder = new SnapshotEncoder();
  return {
    reader,
    writer: new ThreadWriter(worker),
    snapshot: (snapshot) =>
      worker.postMessage({ kind: 'snapshot', snapshot: encoder.encode(snapshot) } satisfies FromServer),
    forget: (uri) => {
      encoder.forget(uri);
      worker.postMessage({ kind: 'forget', uri } satisfies FromServer);
    },
    setDocumentLimit: (bytes) => worker.postMessage({ kind: 'documentLimit', bytes } satisfies FromServer),
  };
}
