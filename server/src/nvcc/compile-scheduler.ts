/**
 * When to compile: per document, a debounce after each save; a new request cancels the document's run
 * in flight; at most `maxParallel` runs at once (the rest wait in a queue); nothing for a closed document.
 * A missing nvcc is reported once and switches the feature off until `enable()`. A failed compile keeps
 * the last figures, marked stale, with the compiler's first error. Readers (hovers) call `latest(uri)`,
 * which answers at once with the last known figures.
 */
import type { ArchFigures, CompileResourcesResult, CompilerMessage } from './compile-resources';

export interface CompileRequest {
  readonly uri: string;
  /** The saved file nvcc compiles. */
  readonly path: string;
  /** The document's text when the request was made (passed through to `compile`, e.g. for the cache). */
  readonly text?: string;
}

/** Runs one compile; must stop soon after `signal` aborts. The server passes `compileResources` here. */
export type CompileFunction = (request: CompileRequest, signal: AbortSignal) => Promise<CompileResourcesResult>;

export interface DocumentFigures {
  readonly uri: string;
  readonly path: string;
  /** Figures per arch: the newest successful ones. */
  readonly perArch: readonly ArchFigures[];
  /** True when the last compile failed (or timed out) and `perArch` are older figures. */
  readonly stale: boolean;
  /** The failing compile's first error, when stale. */
  readonly error: CompilerMessage | null;
  /** The last compile's result (ok or not). */
  readonly last: CompileResourcesResult;
  /** When the result arrived, ms since epoch. */
  readonly updatedAt: number;
}

export interface CompileSchedulerOptions {
  readonly compile: CompileFunction;
  /** Delay after the last request of a document before compiling. Default 500 ms. */
  readonly debounceMs?: number;
  /** Compiles running at once. Default 2. */
  readonly maxParallel?: number;
  /** Whether a document is still open; requests and queued runs of closed documents are dropped. */
  readonly isOpen?: (uri: string) => boolean;
  /**
   * Work that follows an accepted result (the PTX compile), run in the same slot and under the same
   * signal: a newer save cancels it as it would the compile, and it counts against `maxParallel`.
   * The result's listeners have already been told when it starts.
   */
  readonly afterCompile?: (
    request: CompileRequest,
    result: CompileResourcesResult,
    signal: AbortSignal,
  ) => Promise<void>;
  readonly now?: () => number;
}

export interface Disposable {
  dispose(): void;
}

type Listener<T> = (value: T) => void;

interface DocumentState {
  request: CompileRequest;
  timer: NodeJS.Timeout | null;
  queued: boolean;
  running: AbortController | null;
  /** A request arrived while running: compile again when the run ends. */
  again: boolean;
  closed: boolean;
}

export class CompileScheduler {
  private readonly documents = new Map<string, DocumentState>();
  private readonly queue: string[] = [];
  private readonly results = new Map<string, DocumentFigures>();
  private readonly resultListeners = new Set<Listener<DocumentFigures>>();
  private readonly missingListeners = new Set<Listener<CompileResourcesResult>>();
  private readonly startListeners = new Set<Listener<CompileRequest>>();
  private readonly endListeners = new Set<Listener<CompileRequest>>();
  private readonly debounceMs: number;
  private readonly maxParallel: number;
  private readonly now: () => number;
  private runningCount = 0;
  private disabledReason: string | null = null;
  private disposed = false;

  constructor(private readonly options: CompileSchedulerOptions) {
    this.debounceMs = Math.max(0, options.debounceMs ?? 500);
    this.maxParallel = Math.max(1, Math.floor(options.maxParallel ?? 2));
    this.now = options.now ?? Date.now;
  }

  /**
   * Asks for a compile of a saved document; repeated requests within the debounce make one compile.
   * False when it will not compile (nvcc missing, the document closed).
   */
  request(uri: string, document: { path: string; text?: string }): boolean {
    if (this.disposed || this.disabledReason !== null || !this.isOpen(uri)) return false;
    const request: CompileRequest = { uri, path: document.path, text: document.text };
    let state = this.documents.get(uri);
    if (!state) {
      state = { request, timer: null, queued: false, running: null, again: false, closed: false };
      this.documents.set(uri, state);
    }
    state.request = request;
    if (state.timer) clearTimeout(state.timer);
    // A newer save makes the run in flight pointless: cancel it now, compile again after the debounce.
    if (state.running) {
      state.running.abort();
      state.again = false;
    }
    state.timer = setTimeout(() => {
      state!.timer = null;
      this.enqueue(uri);
    }, this.debounceMs);
    return true;
  }

  /** A compile of the document is asked for and not finished: in its debounce, queued or running. */
  isPending(uri: string): boolean {
    const state = this.documents.get(uri);
    return !!state && (state.timer !== null || state.queued || state.running !== null || state.again);
  }

  /** Compiles asked for whose debounce has not run out yet. */
  get waitingCount(): number {
    let n = 0;
    for (const state of this.documents.values()) if (state.timer !== null) n++;
    return n;
  }

  /** Cancels the document's pending and running compiles (its last figures stay). */
  cancel(uri: string): void {
    const state = this.documents.get(uri);
    if (!state) return;
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    state.again = false;
    state.running?.abort();
    this.dequeue(uri);
  }

  /** The document was closed: cancel everything and forget its figures. */
  close(uri: string): void {
    this.cancel(uri);
    const state = this.documents.get(uri);
    if (state) state.closed = true;
    this.documents.delete(uri);
    this.results.delete(uri);
  }

  /** The last known figures for a document, at once; undefined before the first result. */
  latest(uri: string): DocumentFigures | undefined {
    return this.results.get(uri);
  }

  /** Runs pending or in flight, for a status display. */
  get activeCount(): number {
    return this.runningCount;
  }

  get queuedCount(): number {
    return this.queue.length;
  }

  /** Why the feature is off (nvcc missing), or null. */
  get disabled(): string | null {
    return this.disabledReason;
  }

  /** Switches the feature back on (after the nvcc path setting changed). */
  enable(): void {
    this.disabledReason = null;
  }

  onResult(listener: Listener<DocumentFigures>): Disposable {
    return this.listen(this.resultListeners, listener);
  }

  /** Called once when nvcc turns out to be missing; the scheduler then stops compiling. */
  onNvccMissing(listener: Listener<CompileResourcesResult>): Disposable {
    return this.listen(this.missingListeners, listener);
  }

  /** Called as each compile starts (for a busy indicator). */
  onCompileStart(listener: Listener<CompileRequest>): Disposable {
    return this.listen(this.startListeners, listener);
  }

  /** Called as each run ends (its follow-up included), whatever the outcome, once `activeCount` no longer counts it. */
  onCompileEnd(listener: Listener<CompileRequest>): Disposable {
    return this.listen(this.endListeners, listener);
  }

  dispose(): void {
    this.disposed = true;
    for (const uri of [...this.documents.keys()]) this.cancel(uri);
    this.documents.clear();
    this.queue.length = 0;
    this.resultListeners.clear();
    this.missingListeners.clear();
    this.startListeners.clear();
    this.endListeners.clear();
  }

  private listen<T>(set: Set<Listener<T>>, listener: Listener<T>): Disposable {
    set.add(listener);
    return { dispose: () => set.delete(listener) };
  }

  private isOpen(uri: string): boolean {
    return this.options.isOpen ? this.options.isOpen(uri) : true;
  }

  private enqueue(uri: string): void {
    const state = this.documents.get(uri);
    if (!state || this.disposed || this.disabledReason !== null) return;
    if (!this.isOpen(uri)) {
      this.close(uri);
      return;
    }
    if (state.running) {
      state.again = true; // still stopping after a cancel: compile as soon as it has
      return;
    }
    if (!state.queued) {
      state.queued = true;
      this.queue.push(uri);
    }
    this.pump();
  }

  private dequeue(uri: string): void {
    const index = this.queue.indexOf(uri);
    if (index >= 0) this.queue.splice(index, 1);
    const state = this.documents.get(uri);
    if (state) state.queued = false;
  }

  private pump(): void {
    while (this.runningCount < this.maxParallel && this.queue.length > 0 && !this.disposed) {
      const uri = this.queue.shift()!;
      const state = this.documents.get(uri);
      if (!state) continue;
      state.queued = false;
      if (!this.isOpen(uri)) {
        this.close(uri);
        continue;
      }
      void this.run(uri, state);
    }
  }

  private async run(uri: string, state: DocumentState): Promise<void> {
    const controller = new AbortController();
    state.running = controller;
    this.runningCount++;
    const request = state.request;
    for (const listener of this.startListeners) safely(() => listener(request));
    let result: CompileResourcesResult | null;
    try {
      result = await this.options.compile(request, controller.signal);
    } catch {
      result = null; // a compile that throws is a compile that gave nothing
    } finally {
      this.runningCount--;
      state.running = null;
    }
    const live = () => !this.disposed && !state.closed && !controller.signal.aborted;
    if (live() && result && this.accept(uri, request, result) && this.options.afterCompile && live()) {
      // The follow-up takes the slot and the signal back (nothing ran in between: no await since the compile).
      state.running = controller;
      this.runningCount++;
      try {
        await this.options.afterCompile(request, result, controller.signal);
      } catch (error) {
        void error; // the figures stand without it
      } finally {
        this.runningCount--;
        state.running = null;
      }
    }
    for (const listener of this.endListeners) safely(() => listener(request));
    if (this.documents.get(uri) === state && state.again && !this.disposed) {
      state.again = false;
      this.enqueue(uri);
    }
    this.pump();
  }

  /** Stores and announces a result; true when it was taken as the document's figures. */
  private accept(uri: string, request: CompileRequest, result: CompileResourcesResult): boolean {
    if (result.status === 'cancelled') return false;
    if (result.status === 'missing') {
      if (this.disabledReason === null) {
        this.disabledReason = result.firstError?.message ?? 'nvcc not found';
        for (const state of this.documents.values()) {
          if (state.timer) clearTimeout(state.timer);
          state.timer = null;
        }
        this.queue.length = 0;
        for (const listener of this.missingListeners) safely(() => listener(result));
      }
      return false;
    }
    if (!this.isOpen(uri)) return false;
    const previous = this.results.get(uri);
    const ok = result.status === 'ok';
    // Archs that failed keep their previous figures (stale); archs that succeeded take the new ones.
    const fresh = new Map(result.perArch.map((a) => [a.arch, a]));
    const kept = (previous?.perArch ?? []).filter((a) => !fresh.has(a.arch));
    const figures: DocumentFigures = {
      uri,
      path: request.path,
      perArch: [...result.perArch, ...kept],
      stale: !ok,
      error: ok ? null : result.firstError,
      last: result,
      updatedAt: this.now(),
    };
    this.results.set(uri, figures);
    for (const listener of this.resultListeners) safely(() => listener(figures));
    return true;
  }
}

function safely(action: () => void): void {
  try {
    action();
  } catch {
    // A listener's failure must not stop the scheduler.
  }
}
