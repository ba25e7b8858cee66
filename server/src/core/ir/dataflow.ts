/**
 * A forward data-flow solver over the function IR: each block's state is the join of what its
 * predecessors leave, a block's statements transform it, and the edges taken out of a block are
 * those its exit can take in that state (a branch on a known condition takes one arm). Loops run
 * to a fixed point, widened after a few rounds so that the answer comes in bounded time.
 */
import type { Block, Exit, FunctionIR } from './function-ir';

export interface Analysis<S> {
  /** The state at the entry. */
  entry: S;
  join(a: S, b: S): S;
  equal(a: S, b: S): boolean;
  /** `next` with everything that still changes between rounds made unknown (loops). */
  widen(previous: S, next: S): S;
  /** The state after the block's statements (the exit's expression included, evaluated for its effects). */
  transfer(block: Block, state: S): S;
  /** The successors the exit can reach in `state` (after `transfer`); default: all of them. */
  successors?(exit: Exit, state: S): number[];
  /** The state on the edge to `to` (a branch may refine it); default: `state`. */
  edge?(exit: Exit, to: number, state: S): S;
}

/** Rounds through a loop's head before its incoming state is widened. */
const WIDEN_AFTER = 3;
/** Rounds through any other block before it is (a cycle made with `goto`). */
const WIDEN_ANYWHERE_AFTER = 12;
/** Visits in all: past this, the solver stops and what it has is widened everywhere it is still changing. */
const MAX_VISITS_PER_BLOCK = 40;

export interface Solution<S> {
  /** The state at the start of each block; undefined where no path reaches. */
  in: Array<S | undefined>;
  /** The state after each block's statements. */
  out: Array<S | undefined>;
}

export function allSuccessors(exit: Exit): number[] {
  switch (exit.k) {
    case 'goto':
      return [exit.to];
    case 'branch':
      return exit.then === exit.else ? [exit.then] : [exit.then, exit.else];
    case 'switch':
      return [...new Set(exit.cases.map((c) => c.to))];
    default:
      return [];
  }
}

export function solveForward<S>(ir: FunctionIR, analysis: Analysis<S>): Solution<S> {
  const n = ir.blocks.length;
  const inStates: Array<S | undefined> = new Array(n);
  const outStates: Array<S | undefined> = new Array(n);
  const visits = new Array<number>(n).fill(0);
  inStates[0] = analysis.entry;
  // Blocks in order of their ids follow the body's order, loops' bodies after their headers.
  const queued = new Set<number>([0]);
  const queue = [0];
  const budget = n * MAX_VISITS_PER_BLOCK;
  let steps = 0;
  while (queue.length > 0) {
    // The lowest id first (the queue holds each once): found in one pass, not sorted each time.
    let lowest = 0;
    for (let k = 1; k < queue.length; k++) if (queue[k] < queue[lowest]) lowest = k;
    const id = queue.splice(lowest, 1)[0];
    queued.delete(id);
    if (++steps > budget) break;
    const block = ir.blocks[id];
    const state = inStates[id]!;
    const out = analysis.transfer(block, state);
    outStates[id] = out;
    const next = analysis.successors ? analysis.successors(block.exit, out) : allSuccessors(block.exit);
    for (const to of next) {
      const arriving = analysis.edge ? analysis.edge(block.exit, to, out) : out;
      const before = inStates[to];
      let merged = before === undefined ? arriving : analysis.join(before, arriving);
      // Widened where a cycle closes: at a loop's head (or anywhere, past many rounds: a cycle of `goto`s).
      if (before !== undefined && ++visits[to] > (ir.blocks[to].loop ? WIDEN_AFTER : WIDEN_ANYWHERE_AFTER))
        merged = analysis.widen(before, merged);
      if (before === undefined || !analysis.equal(before, merged)) {
        inStates[to] = merged;
        if (!queued.has(to)) {
          queued.add(to);
          queue.push(to);
        }
      }
    }
  }
  return { in: inStates, out: outStates };
}
