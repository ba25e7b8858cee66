/** When the client restarts a crashed server. */
import * as assert from 'node:assert/strict';
import { CRASH_WINDOW_MS, decideRestart } from '../../client/src/restart-backoff';

describe('restart backoff', () => {
  it('doubles the delay with each crash in the window and gives up after five', () => {
    let crashes: number[] = [];
    const delays: Array<number | null> = [];
    for (let i = 0; i < 6; i++) {
      const next = decideRestart(crashes, 1000 + i * 1000);
      crashes = next.crashes;
      delays.push(next.decision.delayMs);
    }
    assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000, null]);
  });

  it('forgets crashes older than the window', () => {
    const old = [0, 1, 2, 3, 4];
    const { decision } = decideRestart(old, CRASH_WINDOW_MS + 10);
    assert.deepEqual(decision, { crashes: 1, delayMs: 500 });
  });
});
