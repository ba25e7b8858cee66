/**
 * The LSP lifecycle, enforced on every incoming message before the connection dispatches it: before the
 * initialize request is answered, requests get ServerNotInitialized (-32002) and notifications other than
 * `exit` are dropped; a second initialize is an InvalidRequest (-32600), never a second server that would drop
 * every open document; after shutdown, requests get InvalidRequest and notifications other than `exit` are
 * dropped. Responses to the server's own requests always pass. A message that is not a JSON-RPC 2.0 request,
 * notification or response (a number, an array, an object without a method or an id) cannot be answered: the
 * gate reports it, and the entry point ends the process non-zero, for the client to restart it, as it does on a
 * framing error.
 */
import type {
  DataCallback,
  Disposable,
  Message,
  MessageReader,
  MessageWriter,
  ResponseMessage,
} from 'vscode-languageserver/node';

export type LifecycleState = 'new' | 'initializing' | 'running' | 'shutdown';

export const SERVER_NOT_INITIALIZED = -32002;
export const INVALID_REQUEST = -32600;

export interface LifecycleStep {
  state: LifecycleState;
  /** Hand the message to the connection. */
  pass: boolean;
  /** An error to answer the request with instead. */
  reply?: { code: number; message: string };
}

/** What the lifecycle makes of one incoming message. Pure. */
export function lifecycleStep(state: LifecycleState, message: Message): LifecycleStep {
  const m = message as { id?: unknown; method?: unknown };
  const method = typeof m.method === 'string' ? m.method : null;
  if (method === null) return { state, pass: true }; // a response to one of our requests
  const isRequest = m.id !== undefined && m.id !== null;
  if (!isRequest) {
    if (method === 'exit') return { state, pass: true };
    return { state, pass: state === 'running' };
  }
  if (method === 'initialize') {
    if (state === 'new') return { state: 'initializing', pass: true };
    return {
      state,
      pass: false,
      reply: { code: INVALID_REQUEST, message: 'initialize was already received: it may be sent once' },
    };
  }
  if (state === 'new' || state === 'initializing')
    return {
      state,
      pass: false,
      reply: { code: SERVER_NOT_INITIALIZED, message: `${method} before the initialize request was answered` },
    };
  if (state === 'shutdown')
    return { state, pass: false, reply: { code: INVALID_REQUEST, message: `${method} after shutdown` } };
  if (method === 'shutdown') return { state: 'shutdown', pass: true };
  return { state, pass: true };
}

/** Why `message` is not a JSON-RPC 2.0 request, notification or response, or null when it is one. Pure. */
export function malformedMessage(message: unknown): string | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    return `a message is ${Array.isArray(message) ? 'an array' : message === null ? 'null' : `a ${typeof message}`}, not an object`;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return 'a message does not say "jsonrpc": "2.0"';
  const id = m.id;
  const idOk = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (m.method !== undefined) {
    if (typeof m.method !== 'string') return 'a message has a method that is not a string';
    if (id !== undefined && !idOk) return `${m.method}: its id is not a number or a string`;
    if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null))
      return `${m.method}: its params are not an object or an array`;
    return null;
  }
  if (!idOk && id !== null) return 'a message has neither a method nor an id';
  if (!('result' in m) && !('error' in m)) return 'a response has neither a result nor an error';
  return null;
}

/** A MessageReader that lets through what the lifecycle allows and answers the rest itself. */
export class LifecycleGate implements MessageReader {
  private state: LifecycleState = 'new';

  constructor(
    private readonly inner: MessageReader,
    private readonly writer: MessageWriter,
    /** Told of a malformed message (malformedMessage), which is not passed on. */
    private readonly onMalformed: (why: string) => void = () => undefined,
  ) {}

  get onError() {
    return this.inner.onError;
  }

  get onClose() {
    return this.inner.onClose;
  }

  get onPartialMessage() {
    return this.inner.onPartialMessage;
  }

  get shutdownReceived(): boolean {
    return this.state === 'shutdown';
  }

  /** The initialize request is answered (call just before its result is returned): requests are served from now on. */
  initialized(): void {
    if (this.state === 'initializing') this.state = 'running';
  }

  /** The initialize request failed: a client may send another. */
  initializeFailed(): void {
    if (this.state === 'initializing') this.state = 'new';
  }

  listen(callback: DataCallback): Disposable {
    return this.inner.listen((message) => {
      const malformed = malformedMessage(message);
      if (malformed !== null) {
        this.onMalformed(malformed);
        return;
      }
      const step = lifecycleStep(this.state, message);
      this.state = step.state;
      if (step.pass) callback(message);
      else if (step.reply) {
        const response: ResponseMessage = {
          jsonrpc: '2.0',
          id: (message as unknown as { id: number | string }).id,
          error: step.reply,
        };
        void this.writer.write(response).catch(() => undefined);
      }
    });
  }

  dispose(): void {
    this.inner.dispose();
  }
}
