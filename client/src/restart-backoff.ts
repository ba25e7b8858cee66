/**
 * When to restart a crashed server: 0.5 s, 1 s, 2 s, ... up to 30 s, counting
 * the crashes of the last three minutes; after five there, stop and say so
 * rather than crash-loop. Pure, so it is tested without VS Code.
 */
export const CRASH_WINDOW_MS = 3 * 60 * 1000;
export const MAX_CRASHES_IN_WINDOW = 5;

export interface RestartDecision {
  /** Crashes counted in the window, this one included. */
  crashes: number;
  /** Delay before the restart, or null: give up. */
  delayMs: number | null;
}

export function decideRestart(
  previousCrashes: readonly number[],
  now: number,
): { decision: RestartDecision; crashes: number[] } {
  const crashes = [...previousCrashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
  const n = crashes.length;
  const delayMs = n > MAX_CRASHES_IN_WINDOW ? null : Math.min(30_000, 500 * 2 ** (n - 1));
  return { decision: { crashes: n, delayMs }, crashes };
}
