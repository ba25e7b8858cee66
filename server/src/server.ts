/**
 * `cuda-occupancy-lsp`: the language server's entry point. Speaks LSP over
 * stdio (`--stdio`), Node IPC (`--node-ipc`) or a socket, as
 * vscode-languageserver's createConnection reads from the arguments.
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { CudaOccupancyServer } from './lsp/cuda-occupancy-server';
import { VERSION } from './version';

const args = process.argv.slice(2);
if (args.includes('--version')) {
  process.stdout.write(`cuda-occupancy-lsp ${VERSION}\n`);
  process.exit(0);
}
if (args.includes('--help') || !args.some((a) => a === '--stdio' || a === '--node-ipc' || a.startsWith('--socket') || a.startsWith('--pipe'))) {
  process.stderr.write('usage: cuda-occupancy-lsp --stdio | --node-ipc | --socket=PORT | --pipe=NAME\n');
  process.exit(args.includes('--help') ? 0 : 2);
}

const connection = createConnection(ProposedFeatures.all);
let server: CudaOccupancyServer | undefined;
connection.onInitialize(async (params) => {
  server = await CudaOccupancyServer.initialize(connection, params);
  return { capabilities: server.capabilities(), serverInfo: { name: 'cuda-occupancy-lsp', version: VERSION } };
});
process.on('uncaughtException', (error) => connection.console.error(`[error] uncaught: ${error.stack ?? error.message}`));
process.on('unhandledRejection', (reason) => connection.console.error(`[error] unhandled rejection: ${String(reason)}`));
connection.listen();
