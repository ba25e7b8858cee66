// A minimal LSP client for the benchmark: spawns a server over stdio and times notifications and requests
// with performance.now(). Same wiring as test/support/lsp-session.ts, in plain JavaScript.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { launchFromShebang } from '../server-launch.cjs';

const require = createRequire(import.meta.url);
const {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
} = require('vscode-languageserver-protocol/node');

export class LspClient {
  /** Latest publishDiagnostics per uri, with the time it arrived. */
  diagnostics = new Map();
  logs = [];
  #waiters = [];

  /**
   * Spawn and initialize. `waitReady`: also wait for the server's first status notification, which it
   * sends once it has read the settings (so that a document opened next is analysed once, with them).
   */
  static async start({ serverPath, rootDir, nodeArgs = [], settings = {}, waitReady = false }) {
    const client = new LspClient();
    client.spawnedAt = performance.now();
    // As the server ships: with the environment and Node options its shebang names, then the caller's options (profiling).
    const launch = launchFromShebang(readFileSync(serverPath, 'utf8').split('\n', 1)[0]);
    const child = spawn(process.execPath, [...launch.args, ...nodeArgs, serverPath, '--stdio'], {
      env: { ...process.env, ...launch.env },
      stdio: 'pipe',
    });
    client.process = child;
    const connection = createProtocolConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    client.connection = connection;
    child.stderr.on('data', (d) => client.logs.push(String(d)));
    connection.onNotification('textDocument/publishDiagnostics', (p) => {
      client.diagnostics.set(p.uri, { ...p, at: performance.now() });
      for (const w of client.#waiters.splice(0)) w();
    });
    connection.onNotification('window/logMessage', (p) => client.logs.push(p.message));
    let ready;
    const readyPromise = new Promise((resolve) => (ready = resolve));
    connection.onNotification('cudaOccupancy/status', (status) => {
      client.status = status;
      ready();
    });
    connection.onRequest('workspace/configuration', (p) => p.items.map(() => settings));
    connection.onRequest('workspace/codeLens/refresh', () => null);
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onRequest('client/registerCapability', () => null);
    connection.listen();
    const rootUri = pathToFileURL(rootDir).href;
    await connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'bench' }],
      capabilities: {
        workspace: { configuration: true, codeLens: { refreshSupport: true } },
        textDocument: { hover: { contentFormat: ['markdown'] }, publishDiagnostics: { versionSupport: true } },
      },
    });
    await connection.sendNotification('initialized', {});
    if (waitReady) await Promise.race([readyPromise, new Promise((resolve) => setTimeout(resolve, 5000))]);
    return client;
  }

  /** Until the server says no document waits for its background analysis (its status notification). */
  async waitForIdle(timeoutMs = 120000) {
    const until = performance.now() + timeoutMs;
    while ((this.status?.analysing ?? 0) > 0) {
      if (performance.now() > until) throw new Error(`the server was still analysing after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  open(uri, text, version = 1) {
    return this.connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'cuda-cpp', version, text },
    });
  }

  change(uri, version, contentChanges) {
    return this.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges,
    });
  }

  hover(uri, position) {
    return this.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position });
  }

  /** Resolves with the publishDiagnostics for `version` of `uri` (and its arrival time). */
  async waitForDiagnostics(uri, version, timeoutMs = 60000) {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const current = this.diagnostics.get(uri);
      if (current && current.version === version) return current;
      const left = deadline - performance.now();
      if (left <= 0)
        throw new Error(
          `no diagnostics for ${uri} version ${version} within ${timeoutMs} ms (last: ${current?.version})`,
        );
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The server's own account of its memory (cudaOccupancy/memoryUsage). */
  memoryUsage() {
    return this.connection.sendRequest('cudaOccupancy/memoryUsage', null);
  }

  /** Resident and peak resident memory of the server process, in MB, from /proc. */
  memory() {
    const status = readFileSync(`/proc/${this.process.pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  }

  /** shutdown + exit, so that a server run with --cpu-prof writes its profile; killed if it lingers. */
  async stop(timeoutMs = 5000) {
    const exited = new Promise((resolve) => {
      // A server killed by a signal has a null exitCode and has already emitted 'exit'.
      if (this.process.exitCode !== null || this.process.signalCode !== null) resolve();
      else this.process.once('exit', resolve);
    });
    try {
      await Promise.race([this.connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, timeoutMs))]);
      await this.connection.sendNotification('exit');
    } catch {
      // already gone
    }
    const timer = setTimeout(() => this.process.kill(), timeoutMs);
    await exited;
    clearTimeout(timer);
    this.connection.dispose();
  }
}
