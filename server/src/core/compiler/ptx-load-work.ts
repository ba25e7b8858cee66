/**
 * What the latency model needs of a kernel's compiled code, read from its PTX: per iteration of
 * its main loop (the loop that issues its global loads, or the whole kernel when none does), how
 * many global loads a warp keeps in flight per wait (`I` in N = L·Θ / (S·I)), and how many
 * instructions it issues (the work that fills the gap: a register-tiled GEMM does hundreds of FMAs
 * per load and has little gap to fill).
 *
 * Loads wait where the code can no longer issue past them: ptxas schedules the independent loads
 * of a straight-line stretch of code first (a store to shared memory does not hold a global load
 * back), and stops at a label, a branch, a barrier, a fence, an atomic or a global store. In each
 * such stretch, a load whose address needs another load's value waits one more time. So
 * I = loads / waits, over the loop's stretches. A loop nested in the measured one is counted once:
 * the work is then a lower bound (`atLeast`), and the warps the model asks for an upper bound.
 * Pure: it reads parsePtx's functions.
 */
import type { PtxFunction } from './ptx-line-costs';

export interface LoadWork {
  /**
   * I: what a warp has in flight per wait (lines / waits), per iteration, in 128-byte lines: a load
   * of 4 bytes per thread is one line per warp, a 16-byte vector load (float4) four.
   */
  loadsInFlight: number;
  /** Global loads per iteration (instructions, `cp.async` copies included), the 128-byte lines they move per warp, and the waits they make. */
  loads: number;
  lines: number;
  waits: number;
  /** n: instructions a warp issues per iteration, the loads included. */
  instructions: number;
  /** A loop inside the measured one is counted once (or the source estimate met a loop it could not count): n is at least this. */
  atLeast: boolean;
  /** The measured loop (its first source line, 1-based, where the PTX or the source says), or null: the kernel runs straight through. */
  loop: { line: number | null } | null;
  source: 'ptx' | 'source';
}

const GLOBAL_LOAD =
  /^(?:(?:ld|ldu)(?:\.global|(?!\.(?:param|shared|local|const|tex)\b))(?:\.[\w:]+)*|cp\.async\.(?:ca|cg)\.shared(?:::cta)?\.global(?:\.[\w:]+)*|cp\.async\.bulk(?!\.(?:wait|commit))(?:\.[\w:]+)*)$/;
const TYPE_BYTES: Record<string, number> = { 8: 1, 16: 2, 32: 4, 64: 8, 128: 16 };

/** 128-byte lines one warp's load moves: its bytes per thread (vector width × element, or a copy's size) × 32 / 128, at least 1. */
function linesOf(p: Parsed, text: string): number {
  const copy = /^cp\.async\.(?:ca|cg)/.test(p.opcode) ? /,\s*(\d+)\s*(?:,[^;]*)?;?\s*$/.exec(text) : null;
  const element = /\.[bfsu](8|16|32|64|128)\b/.exec(p.opcode);
  const vector = /\.v(2|4|8)\b/.exec(p.opcode);
  const bytes = copy ? Number(copy[1]) : (element ? TYPE_BYTES[element[1]] : 4) * (vector ? Number(vector[1]) : 1);
  return Math.max(1, Math.round((bytes * 32) / 128));
}
/** Where issuing stops: the loads above must be sent before it. */
const BOUNDARY =
  /^(?:bra|brx|ret|exit|call|bar|barrier|membar|fence|atom|red|st\.global|st(?!\.(?:shared|local|param)\b)(?:\.[\w]+)*$|cp\.async\.wait|cp\.async\.bulk\.wait|mbarrier\.(?:try_)?wait|trap)\b/;

interface Parsed {
  opcode: string;
  dests: string[];
  sources: string[];
  /** `bra $L__BB0_3`: the label. */
  target: string | null;
}

function parse(text: string): Parsed {
  const body = text.replace(/^@!?%\w+\s+/, '').replace(/;\s*$/, '');
  const space = body.search(/\s/);
  const opcode = space < 0 ? body : body.slice(0, space);
  const operands = space < 0 ? [] : splitOperands(body.slice(space + 1));
  const registers = (s: string) => s.match(/%[\w.]+/g) ?? [];
  const guard = /^@!?(%\w+)/.exec(text)?.[1];
  const target = /^bra(?:\.uni)?$/.test(opcode) ? (operands[0]?.trim() ?? null) : null;
  // Stores, branches and barriers write no register: every operand is read.
  const writes = operands.length > 1 && !/^(?:st|red|bar|barrier|membar|fence|bra|call|ret|exit|trap)\b/.test(opcode);
  const dests = writes ? registers(operands[0]) : [];
  const sources = [...(writes ? operands.slice(1) : operands).flatMap(registers), ...(guard ? [guard] : [])];
  return { opcode, dests, sources, target };
}

/** Operands split at top-level commas (not those inside `{...}` or `[...]`). */
function splitOperands(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

/** The load work of one kernel entry, or null when it issues no global load the model could count. */
export function ptxLoadWork(fn: PtxFunction): LoadWork | null {
  const parsed = fn.instructions.map((i) => parse(i.text));
  const labels = fn.labels ?? new Map<string, number>();
  // Loops: a branch back to a label at or before it.
  const loops: Array<{ start: number; end: number }> = [];
  parsed.forEach((p, j) => {
    const at = p.target !== null ? labels.get(p.target) : undefined;
    if (at !== undefined && at <= j) loops.push({ start: at, end: j });
  });
  const loadsIn = (start: number, end: number) => {
    let n = 0;
    for (let k = start; k <= end; k++) if (GLOBAL_LOAD.test(parsed[k].opcode)) n++;
    return n;
  };
  const withLoads = loops.filter((l) => loadsIn(l.start, l.end) > 0);
  // The innermost loops that load; of those, the one that loads most.
  const innermost = withLoads.filter(
    (l) => !withLoads.some((m) => m !== l && m.start >= l.start && m.end <= l.end && m.end - m.start < l.end - l.start),
  );
  const loop = innermost.sort(
    (a, b) => loadsIn(b.start, b.end) - loadsIn(a.start, a.end) || b.end - b.start - (a.end - a.start),
  )[0];
  const start = loop ? loop.start : 0;
  const end = loop ? loop.end : parsed.length - 1;
  const breaks = new Set([...labels.values()].filter((k) => k > start && k <= end));
  let loads = 0;
  let lines = 0;
  let waits = 0;
  let taint = new Map<string, number>();
  let deepest = 0;
  const close = () => {
    waits += deepest;
    deepest = 0;
    taint = new Map();
  };
  for (let k = start; k <= end; k++) {
    if (breaks.has(k)) close();
    const p = parsed[k];
    const level = Math.max(0, ...p.sources.map((r) => taint.get(r) ?? 0));
    if (GLOBAL_LOAD.test(p.opcode)) {
      loads++;
      lines += linesOf(p, fn.instructions[k].text);
      deepest = Math.max(deepest, level + 1);
      for (const d of p.dests) taint.set(d, level + 1);
    } else {
      for (const d of p.dests)
        if (level > 0) taint.set(d, level);
        else taint.delete(d);
    }
    if (BOUNDARY.test(p.opcode)) close();
  }
  close();
  if (loads === 0 || waits === 0) return null;
  const nested = loops.some((l) => l !== loop && l.start >= start && l.end <= end && (l.start > start || l.end < end));
  const line = loop
    ? (fn.instructions.slice(loop.start, loop.end + 1).find((i) => (i.location?.line ?? 0) > 0)?.location?.line ?? null)
    : null;
  return {
    loadsInFlight: lines / waits,
    loads,
    lines,
    waits,
    instructions: end - start + 1,
    atLeast: nested,
    loop: loop ? { line } : null,
    source: 'ptx',
  };
}
