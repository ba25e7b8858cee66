/**
 * The server's end of the connection, from its command line (`--stdio`, `--node-ipc`, `--socket=PORT`,
 * `--pipe=NAME`), as vscode-languageserver would open it, except that byte streams pass the framing guard
 * first (framing-guard.ts), and the caller gets the reader and writer to put the lifecycle gate between them.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import {
  IPCMessageReader,
  IPCMessageWriter,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageReader,
  type MessageWriter,
} from 'vscode-languageserver/node';
import { framingGuard, MAX_CONTENT_LENGTH } from './framing-guard';
import { DEFAULT_DOCUMENT_LIMITS } from '../document-limits';

export interface Transport {
  reader: MessageReader;
  writer: MessageWriter;
  /** The byte stream read, when there is one (its end is the connection's end). */
  input: NodeJS.ReadableStream | null;
  kind: 'stdio' | 'node-ipc' | 'socket' | 'pipe';
  /**
   * The largest document analysed, in bytes (limits.documentMB): a message body more than twice as large, plus a
   * megabyte, is not decoded (framing-guard.ts). Node IPC delivers messages decoded: there it changes nothing.
   */
  setDocumentLimit(bytes: number): void;
}

/**
 * `threaded`: opened on a thread other than the process's main one (answer-thread.ts), which reads and
 * writes the standard streams by their file descriptors: a worker's `process.stdin` and `process.stdout`
 * would pass through the main thread, and wait whenever it is busy.
 */
export function openTransport(argv: readonly string[], { threaded = false } = {}): Transport | null {
  const value = argumentValue(argv);
  if (argv.includes('--node-ipc'))
    return {
      reader: new IPCMessageReader(process),
      writer: new IPCMessageWriter(process),
      input: null,
      kind: 'node-ipc',
      setDocumentLimit: () => undefined,
    };
  if (argv.includes('--stdio'))
    return threaded
      ? fromStreams(streamOf(0, 'read'), streamOf(1, 'write'), 'stdio')
      : fromStreams(process.stdin, process.stdout, 'stdio');
  const port = value('--socket');
  if (port !== null && /^\d+$/.test(port)) {
    const socket = net.createConnection(Number(port), '127.0.0.1');
    return fromStreams(socket, socket, 'socket');
  }
  const pipe = value('--pipe');
  if (pipe) {
    const socket = net.createConnection(pipe);
    return fromStreams(socket, socket, 'pipe');
  }
  return null;
}

function fromStreams(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, kind: Transport['kind']): Transport {
  let passed = passedLength(DEFAULT_DOCUMENT_LIMITS.maxBytes);
  const guarded = framingGuard(MAX_CONTENT_LENGTH, () => passed);
  input.pipe(guarded);
  return {
    reader: new StreamMessageReader(guarded),
    writer: new StreamMessageWriter(output),
    input,
    kind,
    setDocumentLimit: (bytes) => (passed = passedLength(bytes)),
  };
}

/** The largest body decoded for a document limit: the document JSON-escaped (about 1.05 times; 2 leaves room), and the rest of its message. */
function passedLength(documentBytes: number): number {
  return 2 * documentBytes + 1024 * 1024;
}

/** Whether the command line names a transport openTransport can open (without opening it). */
openTransport.accepts = (argv: readonly string[]): boolean => {
  const value = argumentValue(argv);
  const port = value('--socket');
  return (
    argv.includes('--node-ipc') ||
    argv.includes('--stdio') ||
    (port !== null && /^\d+$/.test(port)) ||
    !!value('--pipe')
  );
};

function argumentValue(argv: readonly string[]): (name: string) => string | null {
  return (name) => {
    for (let i = 0; i < argv.length; i++) {
      if (argv[i] === name) return argv[i + 1] ?? null;
      if (argv[i].startsWith(`${name}=`)) return argv[i].slice(name.length + 1);
    }
    return null;
  };
}

/** A standard stream by its file descriptor: a socket over a pipe or socket, else a file stream. */
function streamOf(fd: 0, how: 'read'): NodeJS.ReadableStream;
function streamOf(fd: 1, how: 'write'): NodeJS.WritableStream;
function streamOf(fd: number, how: 'read' | 'write'): NodeJS.ReadableStream | NodeJS.WritableStream {
  const stat = fs.fstatSync(fd);
  if (stat.isFIFO() || stat.isSocket())
    return new net.Socket({ fd, readable: how === 'read', writable: how === 'write' });
  return how === 'read'
    ? fs.createReadStream('', { fd, autoClose: false })
    : fs.createWriteStream('', { fd, autoClose: false });
}
