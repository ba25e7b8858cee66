// CPU profiles (.cpuprofile, as `node --cpu-prof` and the inspector's Profiler write them) summarised per
// function: self time, and inclusive time (counted once per sample even under recursion), as a share of
// the time the process was busy (idle and program samples left out).
import { Session } from 'node:inspector/promises';

/** Runs `work` under the in-process inspector's sampling profiler and returns its .cpuprofile object. */
export async function profileInProcess(work, { intervalUs = 200 } = {}) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  let profile;
  try {
    await work();
  } finally {
    ({ profile } = await session.post('Profiler.stop'));
    await session.post('Profiler.disable');
    session.disconnect();
  }
  return profile;
}

const IDLE = new Set(['(idle)', '(program)']);

/**
 * Top functions of a profile. `locate(line, column)` maps a bundle position to `{ file, line }` in the
 * sources (see bundle.mjs); `bundleUrl` says which script it applies to (others are shown by their url).
 * `within` (a function name) restricts the busy time to samples under that function, for a phase.
 */
export function summarizeProfile(profile, { locate, bundleUrl, top = 15, within } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = new Map();
  const describe = new Map();
  for (const n of profile.nodes) {
    const f = n.callFrame;
    let where = f.url ? f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'node_modules/') : '';
    let line = f.lineNumber + 1;
    if (locate && f.url && bundleUrl && f.url.endsWith(bundleUrl) && f.lineNumber >= 0) {
      const loc = locate(f.lineNumber, f.columnNumber);
      if (loc) ({ file: where, line } = loc);
    }
    const name = f.functionName || '(anonymous)';
    const key = `${name}|${where}|${where ? line : ''}`;
    keyOf.set(n.id, key);
    describe.set(key, { function: name, file: where || (f.url ? f.url : '(native)'), line: where ? line : null });
  }
  const durations = new Map();
  const deltas = profile.timeDeltas ?? [];
  profile.samples.forEach((id, k) => {
    // timeDeltas[k + 1] is the time until the next sample: the time this sample stands for.
    const dt = deltas[k + 1] ?? deltas[k] ?? 0;
    durations.set(id, (durations.get(id) ?? 0) + dt);
  });
  const self = new Map();
  const inclusive = new Map();
  let busy = 0;
  for (const [id, dt] of durations) {
    const leafName = byId.get(id).callFrame.functionName;
    if (IDLE.has(leafName)) continue;
    const stack = [];
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) stack.push(cur);
    if (within && !stack.some((s) => byId.get(s).callFrame.functionName === within)) continue;
    busy += dt;
    const leaf = keyOf.get(id);
    self.set(leaf, (self.get(leaf) ?? 0) + dt);
    const seen = new Set();
    for (const s of stack) {
      const key = keyOf.get(s);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
    }
  }
  const rows = (map) =>
    [...map.entries()]
      .filter(
        ([key]) =>
          !describe.get(key).function.startsWith('(root)') && !/(^|\/)scripts\/bench/.test(describe.get(key).file),
      )
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => ({ ...describe.get(key), ms: round(us / 1000), share: busy ? round((100 * us) / busy) : 0 }));
  return { busyMs: round(busy / 1000), self: rows(self), inclusive: rows(inclusive) };
}

function round(x) {
  return Math.round(x * 10) / 10;
}

export function formatProfileRows(rows) {
  return rows
    .map(
      (r) =>
        `    ${String(r.share.toFixed(1)).padStart(5)}%  ${String(r.ms.toFixed(1)).padStart(8)} ms  ${r.function}  ${r.file}${r.line ? `:${r.line}` : ''}`,
    )
    .join('\n');
}
