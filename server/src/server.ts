/**
 * `cuda-occupancy-lsp`: the language server's entry point. Speaks LSP over
 * stdio (`--stdio`), Node IPC (`--node-ipc`) or a socket, with the framing
 * checked (lsp/framing-guard.ts: a framing error closes the connection and the
 * process exits non-zero, for the client to restart it) and the lifecycle
 * enforced (lsp/lifecycle-gate.ts).
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { CudaOccupancyServer } from './lsp/cuda-occupancy-server';
import { openTransport } from './lsp/transport';
import { startAnswerThread } from './lsp/answer-thread-port';
import { LifecycleGate } from './lsp/lifecycle-gate';
import { VERSION } from './version';
import { endRunsWithProcess } from './nvcc/nvcc-runner';

const args = process.argv.slice(2);
if (args.includes('--version')) {
  process.stdout.write(`cuda-occupancy-lsp ${VERSION}\n`);
  process.exit(0);
}
const valid = !args.includes('--help') && openTransport.accepts(args);
// The connection's own thread answers from completed analyses while this one analyses (answer-thread.ts);
// where it cannot run (Node IPC), this thread reads the connection itself.
const thread = valid ? startAnswerThread(args) : null;
const transport = !valid ? null : (thread ?? openTransport(args));
if (!transport) {
  process.stderr.write('usage: cuda-occupancy-lsp --stdio | --node-ipc | --socket=PORT | --pipe=NAME\n');
  process.exit(args.includes('--help') ? 0 : 2);
}
if (args.includes('--stdio')) {
  // stdout carries the protocol: anything printed goes to stderr.
  for (const name of ['log', 'info', 'warn', 'error', 'debug'] as const)
    console[name] = (...items: unknown[]) => process.stderr.write(`${items.map(String).join(' ')}\n`);
}

const exit = (code: number) => {
  // The protocol's exit code: 0 after a shutdown request, 1 otherwise.
  process.exit(code);
};
/** A message that cannot be read or answered: the connection cannot go on, and the client restarts the server. */
const unreadable = (why: string) => {
  process.stderr.write(
    `[error] cuda-occupancy-lsp: cannot read the client's messages (${why}): closing the connection\n`,
  );
  exit(1);
};
const gate = new LifecycleGate(transport.reader, transport.writer, unreadable);
transport.reader.onError((error) => unreadable(error.message));
transport.reader.onClose(() => exit(gate.shutdownReceived ? 0 : 1));

const connection = createConnection(ProposedFeatures.all, gate, transport.writer);
let server: CudaOccupancyServer | undefined;
connection.onInitialize(async (params) => {
  try {
    server = await CudaOccupancyServer.initialize(connection, params, {
      onDocumentLimit: (bytes) => transport.setDocumentLimit(bytes),
      onSnapshot: thread ? (snapshot) => thread.snapshot(snapshot) : undefined,
      onClosed: thread ? (uri) => thread.forget(uri) : undefined,
    });
  } catch (error) {
    gate.initializeFailed();
    throw error;
  }
  gate.initialized();
  return { capabilities: server.capabilities(), serverInfo: { name: 'cuda-occupancy-lsp', version: VERSION } };
});
// A signal or an uncaught error ends the server with its compiles (their processes and temporary directories);
// after an uncaught error its state is unknown, and the client restarts it.
endRunsWithProcess({
  uncaughtExitCode: 1,
  onUncaught: (error) =>
    process.stderr.write(
      `[error] cuda-occupancy-lsp: uncaught: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    ),
});
process.on('unhandledRejection', (reason) =>
  connection.console.error(`[error] unhandled rejection: ${String(reason)}`),
);
connection.listen();
