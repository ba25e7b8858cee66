/**
 * The processes of one compiler run, however they tried to leave it: every process whose parent chain leads
 * to the run's first process, and every process that carries the run's marker in its environment (which a
 * child that calls setsid, or forks twice and lets its parent exit, still has). Linux reads /proc; elsewhere
 * only the process group is known (nvcc-runner.ts kills it), and this finds nothing more.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/** The environment variable that marks a run's processes. */
export const RUN_MARKER_VARIABLE = 'CUDA_OCCUPANCY_LENS_RUN';

/** A fresh marker value for one run. */
export function newRunMarker(): string {
  return `${process.pid}-${randomBytes(12).toString('hex')}`;
}

const hasProc = process.platform === 'linux';

/** The processes of the run started as `rootPid` with `marker` (the root itself included when alive). */
export function runProcesses(rootPid: number | undefined, marker: string): number[] {
  if (!hasProc) return [];
  const found = new Set<number>();
  const needle = Buffer.from(`${RUN_MARKER_VARIABLE}=${marker}\0`);
  const parents = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const ppid = parentOf(pid);
    if (ppid !== null) {
      const children = parents.get(ppid);
      if (children) children.push(pid);
      else parents.set(ppid, [pid]);
    }
    try {
      if (readFileSync(`/proc/${pid}/environ`).includes(needle)) found.add(pid);
    } catch {
      // gone, or another user's
    }
  }
  // Descendants of the root and of every marked process (a child that cleared its environment).
  const queue = [...(rootPid !== undefined ? [rootPid] : []), ...found];
  while (queue.length) {
    const pid = queue.pop()!;
    for (const child of parents.get(pid) ?? []) {
      if (!found.has(child) && child !== process.pid) {
        found.add(child);
        queue.push(child);
      }
    }
  }
  if (rootPid !== undefined && parentOf(rootPid) !== null) found.add(rootPid);
  found.delete(process.pid);
  return [...found];
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses; it ends at the last `)`.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(rest[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/** Sends `signal` to each process; ones already gone are skipped. */
export function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
