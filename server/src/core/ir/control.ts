/**
 * Control structure of a function IR: dominators, post-dominators, natural loops and control
 * dependence. The uniformity analysis reads them to know where paths of a branch join (a value
 * assigned on the paths of a thread-dependent branch differs between lanes after the join), which
 * branches a block runs under (its guards), and which values leave a loop whose lanes may leave at
 * different iterations.
 *
 * Dominators by the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance
 * Algorithm", 2001): a few passes in reverse post-order over graphs of a function's size.
 */
import type { FunctionIR } from './function-ir';
import { allSuccessors } from './dataflow';

export interface ControlInfo {
  /** Successors and predecessors of each block (unreachable blocks have none listed). */
  succs: number[][];
  preds: number[][];
  /** Blocks reachable from the entry, in reverse post-order. */
  order: number[];
  /** Immediate dominator (-1 for the entry and unreachable blocks). */
  idom: number[];
  /** Immediate post-dominator towards the exit (-1 where none: the exit, blocks that never return). */
  ipdom: number[];
  /** Loops by header: the blocks of each (header included) and its back edges' sources. */
  loops: Map<number, LoopBlocks>;
  /** The innermost loop header each block is in (-1: none). */
  loopOf: number[];
  /** For each block, the branches it runs under: (branch block, successor taken), nearest first. */
  controls: Array<Array<{ branch: number; via: number }>>;
}

export interface LoopBlocks {
  header: number;
  blocks: Set<number>;
  latches: number[];
}

export function controlInfo(ir: FunctionIR): ControlInfo {
  const n = ir.blocks.length;
  // A `return` goes to the exit block, where every path of the function ends.
  const succs = ir.blocks.map((b) => (b.exit.k === 'return' ? [ir.exit] : allSuccessors(b.exit)));
  const order = reversePostOrder(succs, 0, n);
  const reachable = new Set(order);
  const preds: number[][] = Array.from({ length: n }, () => []);
  for (const b of order) for (const s of succs[b]) preds[s].push(b);
  const idom = dominators(order, preds, n);

  // Post-dominators: dominators of the reversed graph rooted at the exit (blocks that cannot reach
  // the exit, an endless loop, have none).
  const rsuccs = preds.map((p) => p.filter((x) => reachable.has(x)));
  const rorder = reversePostOrder(rsuccs, ir.exit, n).filter((b) => reachable.has(b));
  const rpreds: number[][] = Array.from({ length: n }, () => []);
  for (const b of rorder) for (const s of rsuccs[b]) rpreds[s].push(b);
  const ipdom = reachable.has(ir.exit) ? dominators(rorder, rpreds, n) : new Array<number>(n).fill(-1);

  const loops = naturalLoops(order, succs, preds, idom);
  const loopOf = new Array<number>(n).fill(-1);
  // Inner loops are smaller: assign outer first so that inner ones overwrite.
  for (const loop of [...loops.values()].sort((a, b) => b.blocks.size - a.blocks.size))
    for (const b of loop.blocks) loopOf[b] = loop.header;

  return { succs, preds, order, idom, ipdom, loops, loopOf, controls: controlDependence(order, succs, ipdom, n) };
}

function reversePostOrder(succs: number[][], root: number, n: number): number[] {
  const seen = new Uint8Array(n);
  const post: number[] = [];
  // Iterative depth-first search: bodies nest deep enough to overflow a recursive one.
  const stack: Array<[number, number]> = [[root, 0]];
  seen[root] = 1;
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const [b, i] = top;
    if (i < succs[b].length) {
      top[1]++;
      const s = succs[b][i];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push([s, 0]);
      }
    } else {
      post.push(b);
      stack.pop();
    }
  }
  return post.reverse();
}

function dominators(order: number[], preds: number[][], n: number): number[] {
  const idom = new Array<number>(n).fill(-1);
  const rank = new Array<number>(n).fill(-1);
  order.forEach((b, i) => (rank[b] = i));
  const root = order[0];
  idom[root] = root;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (rank[a] > rank[b]) a = idom[a];
      while (rank[b] > rank[a]) b = idom[b];
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (const b of order) {
      if (b === root) continue;
      let d = -1;
      for (const p of preds[b]) {
        if (rank[p] < 0 || idom[p] < 0) continue;
        d = d < 0 ? p : intersect(p, d);
      }
      if (d >= 0 && idom[b] !== d) {
        idom[b] = d;
        changed = true;
      }
    }
  }
  idom[root] = -1;
  return idom;
}

/** Whether `a` dominates `b` (every block dominates itself). */
export function dominates(idom: readonly number[], a: number, b: number): boolean {
  for (let x = b, guard = 0; x >= 0 && guard < idom.length + 1; x = idom[x], guard++) if (x === a) return true;
  return false;
}

function naturalLoops(order: number[], succs: number[][], preds: number[][], idom: number[]): Map<number, LoopBlocks> {
  const loops = new Map<number, LoopBlocks>();
  for (const b of order)
    for (const h of succs[b]) {
      if (!dominates(idom, h, b)) continue;
      // A back edge b → h: the loop is h and every block that reaches b without passing h.
      let loop = loops.get(h);
      if (!loop) {
        loop = { header: h, blocks: new Set([h]), latches: [] };
        loops.set(h, loop);
      }
      loop.latches.push(b);
      const work = [b];
      while (work.length > 0) {
        const x = work.pop()!;
        if (loop.blocks.has(x)) continue;
        loop.blocks.add(x);
        for (const p of preds[x]) work.push(p);
      }
    }
  return loops;
}

/**
 * Control dependence (Ferrante, Ottenstein and Warren): a block depends on the edge b → s when
 * it post-dominates s but not b; it runs only where the branch at b goes to s.
 */
function controlDependence(
  order: number[],
  succs: number[][],
  ipdom: number[],
  n: number,
): Array<Array<{ branch: number; via: number }>> {
  const controls: Array<Array<{ branch: number; via: number }>> = Array.from({ length: n }, () => []);
  for (const b of order) {
    if (succs[b].length < 2) continue;
    for (const s of new Set(succs[b])) {
      const stop = ipdom[b];
      for (let x = s, guard = 0; x >= 0 && x !== stop && guard <= n; x = ipdom[x], guard++) {
        controls[x].push({ branch: b, via: s });
        if (ipdom[x] === x) break;
      }
    }
  }
  return controls;
}

/**
 * The blocks where paths from different successors of `branch` first meet (the branch's join
 * points: a value assigned differently on its paths is a choice between them there). Found by
 * labelling each successor and carrying labels forward along edges that are not loop back edges;
 * a block reached by two labels is a join and carries a label of its own onward.
 */
export function joinPoints(info: ControlInfo, branch: number): number[] {
  const succs = [...new Set(info.succs[branch])];
  if (succs.length < 2) return [];
  const rank = new Map<number, number>();
  info.order.forEach((b, i) => rank.set(b, i));
  const label = new Map<number, number>();
  const joins: number[] = [];
  const stop = info.ipdom[branch];
  succs.forEach((s, i) => label.set(s, -1 - i));
  // Successors that are themselves reached from another successor are joins (`if (c) x = 1;`: the
  // else edge goes straight to the join).
  const queue = [...succs].sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  const seen = new Set<number>();
  while (queue.length > 0) {
    queue.sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
    const b = queue.shift()!;
    if (seen.has(b)) continue;
    seen.add(b);
    if (b === stop) continue;
    const mine = label.get(b)!;
    for (const s of info.succs[b]) {
      if ((rank.get(s) ?? -1) <= (rank.get(b) ?? -1)) continue; // a back edge
      if (s === branch) continue;
      const had = label.get(s);
      if (had === undefined) {
        label.set(s, mine);
        queue.push(s);
      } else if (had !== mine && !joins.includes(s)) {
        joins.push(s);
        label.set(s, s);
        if (seen.has(s)) seen.delete(s);
        queue.push(s);
      }
    }
  }
  return joins;
}
