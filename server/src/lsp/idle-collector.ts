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
 * Once the server has settled (a background analysis finished: every open
 * document's diagnostics are out), the collection also compacts the old
 * generation when much of it is free: V8 evacuates only pages that are mostly
 * empty, a few MB at a time, and otherwise keeps the pages a burst of analyses
 * grew (50 of 107 MB free with 20 open 10k-line files after each was analysed
 * again). Compacting moves every live object, so it waits for a settled server,
 * never an edit's debounce.
 *
 * Needs `gc` (node --expose-gc, as the server's shebang and the VS Code client
 * start it); without it this does nothing and V8 collects as it always does.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

export interface IdleCollectorOptions {
  /** A full collection, compacting the old generation when asked; default: `globalThis.gc` when Node exposes it. */
  collect?: ((compact: boolean) => void) | null;
  /** Bytes in use in the old generation; default: from V8's heap space statistics. */
  oldGenerationBytes?: () => number;
  /** Bytes the old generation's pages hold free (what compacting gives back); default: from V8's heap space statistics. */
  oldGenerationFreeBytes?: () => number;
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
/** A settled server compacts when the old generation's pages hold this share of what is in use free... */
const FREE_RATIO = 0.25;
/** ...and at least this many bytes. */
const MIN_FREE_BYTES = 16 << 20;

export class IdleCollector {
  private readonly collect: ((compact: boolean) => void) | null;
  private readonly oldGenerationBytes: () => number;
  private readonly oldGenerationFreeBytes: () => number;
  private readonly defer: NonNullable<IdleCollectorOptions['defer']>;
  private readonly growthRatio: number;
  private readonly minGrowthBytes: number;
  /** The least the old generation held since the last collection (V8's own collections lower it too). */
  private baseline: number;
  private scheduled: { cancel(): void; settled: boolean } | null = null;
  /** Collections run so far, compacting ones included (reported by the memoryUsage request). */
  collections = 0;
  /** Compacting collections run so far. */
  compactions = 0;

  constructor(options: IdleCollectorOptions = {}) {
    this.collect = options.collect === undefined ? exposedGc() : options.collect;
    this.oldGenerationBytes = options.oldGenerationBytes ?? oldGenerationBytes;
    this.oldGenerationFreeBytes = options.oldGenerationFreeBytes ?? oldGenerationFreeBytes;
    this.defer = options.defer ?? deferBriefly;
    this.growthRatio = options.growthRatio ?? GROWTH_RATIO;
    this.minGrowthBytes = options.minGrowthBytes ?? MIN_GROWTH_BYTES;
    this.baseline = this.oldGenerationBytes();
  }

  /** False when Node does not expose `gc`: then V8 alone decides when to collect. */
  get enabled(): boolean {
    return this.collect !== null;
  }

  /** An idle window starts (an edit's debounce): collect in it if the old generation grew enough since the last collection. */
  idle(): void {
    if (this.grew()) this.schedule(false);
  }

  /**
   * The server settled (a background analysis finished): a little later, collect as in idle(), then
   * compact the old generation if its pages hold a quarter of what is in use (and 16 MB) free. Both
   * are decided when the time comes: a collection V8 finishes meanwhile changes what is free.
   */
  settled(): void {
    this.schedule(true);
  }

  /** The old generation grew enough since the last collection (measured from the least it held since). */
  private grew(): boolean {
    if (!this.collect) return false;
    const used = this.oldGenerationBytes();
    this.baseline = Math.min(this.baseline, used);
    return used - this.baseline >= Math.max(this.minGrowthBytes, this.growthRatio * this.baseline);
  }

  private fragmented(): boolean {
    return this.oldGenerationFreeBytes() >= Math.max(MIN_FREE_BYTES, FREE_RATIO * this.oldGenerationBytes());
  }

  /** One task at a time: a settled server's, asked for while an edit's waits, takes its place. */
  private schedule(settled: boolean): void {
    const collect = this.collect;
    if (!collect) return;
    if (this.scheduled) {
      if (this.scheduled.settled || !settled) return;
      this.scheduled.cancel();
    }
    const handle = this.defer(() => {
      this.scheduled = null;
      if (!settled || this.grew()) this.run(collect, false);
      if (settled && this.fragmented()) this.run(collect, true);
    });
    this.scheduled = { cancel: () => handle.cancel(), settled };
  }

  private run(collect: (compact: boolean) => void, compact: boolean): void {
    try {
      collect(compact);
      this.collections++;
      if (compact) this.compactions++;
    } catch {
      // Left to V8: a collection that failed must not take the server down.
    }
    this.baseline = this.oldGenerationBytes();
  }

  dispose(): void {
    this.scheduled?.cancel();
    this.scheduled = null;
  }
}

function exposedGc(): ((compact: boolean) => void) | null {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') return null;
  return (compact) => {
    if (!compact) return (gc as () => void)();
    // V8 reads this flag at each full collection: this one evacuates every fragmented page. Node
    // keeps V8's flags settable at run time (v8.setFlagsFromString is its API: it starts V8 with
    // --no-freeze-flags-after-init), and idle-collector.test.ts checks that this one compacts.
    setFlagsFromString('--compact-on-every-full-gc');
    try {
      (gc as () => void)();
    } finally {
      setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

function oldGenerationBytes(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (!space.space_name.startsWith('new_')) used += space.space_used_size;
  return used;
}

/** Free bytes in the old space's pages (large objects have pages of their own, freed whole). */
function oldGenerationFreeBytes(): number {
  const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
  return old ? old.space_size - old.space_used_size : 0;
}

function deferBriefly(run: () => void): { cancel(): void } {
  const handle = setTimeout(run, IDLE_DELAY_MS);
  handle.unref(); // never what keeps the process alive
  return { cancel: () => clearTimeout(handle) };
}
