/**
 * Fresh parses of open documents on a worker thread (fresh-parse-thread.ts). Near a parse error
 * an incremental parse may differ from a fresh one; parsing 10k lines again on the server's
 * thread took 200-400 ms of every such keystroke. The server answers from the incremental parse
 * and asks here for the fresh tree's shape: one document at a time, only its latest version, the
 * thread started when first needed and stopped when idle (its parser's memory goes with it).
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

/** A thread idle this long is stopped: a 10k-line tree's WebAssembly memory never shrinks. */
const IDLE_STOP_MS = 30_000;

export interface FreshParsesOptions {
  /** The fresh tree's shape of `version` of `uri`; null when the thread failed (then parse it on the server's thread). */
  onShape: (uri: string, version: number, shape: string | null) => void;
  log: (message: string) => void;
  /** The thread's script; default: beside this module (dist/server/ in the bundle). */
  script?: string;
  idleStopMs?: number;
}

export class FreshParses {
  private worker: Worker | null = null;
  /** The latest version asked for, per document, not yet sent. */
  private readonly waiting = new Map<string, { version: number; text: string }>();
  private inFlight: { id: number; uri: string; version: number } | null = null;
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;
  /** The thread could not run: every request is answered with null at once. */
  private broken = false;

  constructor(private readonly options: FreshParsesOptions) {}

  request(uri: string, version: number, text: string): void {
    if (this.inFlight?.uri === uri && this.inFlight.version === version) return;
    this.waiting.set(uri, { version, text });
    this.next();
  }

  /** The document closed: nothing more to parse for it. */
  forget(uri: string): void {
    this.waiting.delete(uri);
  }

  dispose(): void {
    clearTimeout(this.idleTimer);
    this.waiting.clear();
    void this.worker?.terminate();
    this.worker = null;
  }

  private next(): void {
    if (this.inFlight) return;
    const [entry] = this.waiting;
    if (!entry) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => this.stop(), this.options.idleStopMs ?? IDLE_STOP_MS);
      this.idleTimer.unref();
      return;
    }
    const [uri, { version, text }] = entry;
    this.waiting.delete(uri);
    if (this.broken) {
      this.options.onShape(uri, version, null);
      return this.next();
    }
    clearTimeout(this.idleTimer);
    const worker = this.started();
    if (!worker) return this.next();
    this.inFlight = { id: this.nextId++, uri, version };
    worker.postMessage({ id: this.inFlight.id, text });
  }

  private started(): Worker | null {
    if (this.worker) return this.worker;
    try {
      const worker = new Worker(this.options.script ?? path.join(__dirname, 'fresh-parse-thread.js'));
      worker.unref();
      worker.on('message', (m: { id: number; shape?: string; error?: string }) => this.answered(m));
      worker.on('error', (error) => this.fail(`fresh parse thread failed: ${String(error)}`));
      worker.on('exit', (code) => {
        if (this.worker === worker) this.worker = null;
        if (code !== 0 && this.inFlight) this.fail(`fresh parse thread exited with code ${code}`);
      });
      this.worker = worker;
      return worker;
    } catch (error) {
      this.fail(`cannot start the fresh parse thread: ${String(error)}`);
      return null;
    }
  }

  private answered(message: { id: number; shape?: string; error?: string }): void {
    const flight = this.inFlight;
    if (!flight || flight.id !== message.id) return;
    this.inFlight = null;
    if (message.error !== undefined) this.options.log(`fresh parse of ${flight.uri} failed: ${message.error}`);
    this.options.onShape(flight.uri, flight.version, message.shape ?? null);
    this.next();
  }

  private fail(message: string): void {
    if (!this.broken) this.options.log(`${message}; incremental parses near errors are checked on the server's thread`);
    this.broken = true;
    void this.worker?.terminate();
    this.worker = null;
    const flight = this.inFlight;
    this.inFlight = null;
    if (flight) this.options.onShape(flight.uri, flight.version, null);
    this.next();
  }

  private stop(): void {
    if (this.inFlight || this.waiting.size > 0) return;
    void this.worker?.terminate();
    this.worker = null;
  }
}
