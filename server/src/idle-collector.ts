/**
 * Full garbage collections at moments no request waits for. Left to itself, V8
 * starts marking the old generation while a keystroke's analysis allocates, and
 * finishes in a task of its own that runs as soon as the event loop is free:
 * right after the diagnostics go out, when the editor's next request (a hover)
 * arrives. That pause (3-12 ms at 10k lines, plus marking steps) was behind most
 * hovers slower than 10 ms. So the server collects in the windows it knows are
 * idle (an edit's debounce, the end of a background analysis), once the old
 * generation has grown enough since the last collection that V8 would soon start
 * on its own; V8 then seldom has to.
 *
 * Needs `gc` (node --expose-gc, as the server's shebang and the VS Code client
 * start it); without it this does nothing and V8 collects as it always does.
 */
import { getHeapSpaceStatistics } from 'node:v8';

export interface IdleCollectorOptions {
  /** A full collection; default: `globalThis.gc` when Node exposes it. */
  collect?: (() => void) | null;
  /** Bytes in use in the old generation; default: from V8's heap space statistics. */
  oldGenerationBytes?: () => number;
  /** Runs the collection a little later (default: after IDLE_DELAY_MS). */
  defer?: (run: () => void) => { cancel(): void };
  /** Collect once the old generation grew by this share of what it held after the last collection... */
  growthRatio?: number;
  /** ...and by at least this many bytes. */
  minGrowthBytes?: number;
}

/**
 * How long after the window opens the collection runs: the requests an editor sends right after an
 * edit (code actions for the new cursor, a hover) come first, and it still ends well within the
 * 150 ms debounce (a full collection takes 10-40 ms at 10k-35k lines).
 */
const IDLE_DELAY_MS = 50;
/** V8 starts marking at about half again what was live (under the server's 1 GB cap); a quarter is well before. */
const GROWTH_RATIO = 0.25;
const MIN_GROWTH_BYTES = 4 << 20;

export class IdleCollector {
  private readonly collect: (() => void) | null;
  private readonly oldGenerationBytes: () => number;
  private readonly defer: NonNullable<IdleCollectorOptions['defer']>;
  private readonly growthRatio: number;
  private readonly minGrowthBytes: number;
  /** The least the old generation held since the last collection (V8's own collections lower it too). */
  private baseline: number;
  private scheduled: { cancel(): void } | null = null;
  /** Collections run so far (reported by the memoryUsage request). */
  collections = 0;

  constructor(options: IdleCollectorOptions = {}) {
    this.collect = options.collect === undefined ? exposedGc() : options.collect;
    this.oldGenerationBytes = options.oldGenerationBytes ?? oldGenerationBytes;
    this.defer = options.defer ?? deferBriefly;
    this.growthRatio = options.growthRatio ?? GROWTH_RATIO;
    this.minGrowthBytes = options.minGrowthBytes ?? MIN_GROWTH_BYTES;
    this.baseline = this.oldGenerationBytes();
  }

  /** False when Node does not expose `gc`: then V8 alone decides when to collect. */
  get enabled(): boolean {
    return this.collect !== null;
  }

  /** An idle window starts: collect in it if the old generation grew enough since the last collection. */
  idle(): void {
    if (!this.collect || this.scheduled) return;
    const used = this.oldGenerationBytes();
    this.baseline = Math.min(this.baseline, used);
    if (used - this.baseline < Math.max(this.minGrowthBytes, this.growthRatio * this.baseline)) return;
    const collect = this.collect;
    this.scheduled = this.defer(() => {
      this.scheduled = null;
      try {
        collect();
        this.collections++;
      } catch {
        // Left to V8: a collection that failed must not take the server down.
      }
      this.baseline = this.oldGenerationBytes();
    });
  }

  dispose(): void {
    this.scheduled?.cancel();
    this.scheduled = null;
  }
}

function exposedGc(): (() => void) | null {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? () => (gc as () => void)() : null;
}

function oldGenerationBytes(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (!space.space_name.startsWith('new_')) used += space.space_used_size;
  return used;
}

function deferBriefly(run: () => void): { cancel(): void } {
  const handle = setTimeout(run, IDLE_DELAY_MS);
  handle.unref(); // never what keeps the process alive
  return { cancel: () => clearTimeout(handle) };
}
