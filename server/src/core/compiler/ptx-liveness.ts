/**
 * Register pressure from PTX: which virtual registers are live at each instruction of a kernel,
 * by a liveness pass over the kernel's control-flow graph, and how many 32-bit registers they
 * would take, mapped to source lines through `.loc` (`nvcc -ptx -lineinfo`).
 *
 * This is an estimate of what ptxas has to fit, before it allocates registers: ptxas reorders
 * instructions, rematerializes values and shares registers between values whose lives do not
 * overlap, so its count differs (docs/register-pressure.md gives the typical ratio measured on real
 * kernels). Predicates live in their own register file and are counted apart.
 */
import { demangle } from './demangle';

/** 32-bit registers a PTX virtual register takes, by its name's prefix (nvcc's naming). */
function registerWidth(name: string): number {
  const prefix = /^%([a-z]+)/.exec(name)![1];
  if (prefix === 'p') return 0;
  if (prefix === 'rd' || prefix === 'fd') return 2;
  return 1;
}

/** nvcc's virtual registers: `%r12`, `%rd3`, `%f1`, `%fd2`, `%rs1`, `%h1`, `%hh1`, `%p1`, `%b1`. */
const VIRTUAL = /%(?:rd|rs|fd|hh|r|f|h|p|b)\d+\b/g;
/** Opcodes whose first operand is read, not written. */
const NO_DESTINATION =
  /^(st|red|bra|brx|ret|exit|bar|barrier|membar|fence|trap|call|prefetch|prefetchu|cp\.async\.commit_group|cp\.async\.wait|cp\.async\.bulk\.commit|cp\.async\.bulk\.wait|discard|applypriority|nanosleep|pmevent|elect|griddepcontrol|setmaxnreg|mbarrier\.init|mbarrier\.arrive_drop|wmma\.store|stmatrix|tensormap|multimem\.st|multimem\.red|cp\.async(?!\.wait)|cp\.reduce|st\.async|red\.async)\b/;

export interface PressureInstruction {
  text: string;
  /** Source line (1-based) and file number in the kernel's own code: for inlined code, the call's. */
  line: number | null;
  file: number | null;
  /** For code inlined into the kernel: the function called on `line`, and where in it the code was written. */
  inlinedFrom: { function: string | null; file: number; line: number } | null;
  /** 32-bit registers live right after it (values it defines included), and predicates. */
  liveRegisters: number;
  livePredicates: number;
}

export interface KernelPressure {
  /** The PTX entry's (mangled) name. */
  name: string;
  instructions: PressureInstruction[];
  /** The most 32-bit registers live at once, and the first instruction where it is reached. */
  peak: number;
  peakLine: number | null;
  /** Per source line: the most registers live at an instruction of that line (1-based lines). */
  lines: Map<number, number>;
}

interface Parsed {
  text: string;
  label: string | null;
  opcode: string;
  guard: string | null;
  defs: string[];
  uses: string[];
  /** Branch targets; null for an instruction that falls through only. */
  targets: string[] | null;
  /** Ends the function (`ret`, `exit`, `trap`). */
  ends: boolean;
  /** Unconditional branch: no fall-through. */
  jumps: boolean;
  line: number | null;
  file: number | null;
  inlinedFrom: PressureInstruction['inlinedFrom'];
}

const ENTRY = /^\s*(?:\.(?:visible|weak)\s+)*\.entry\s+([A-Za-z_$%][\w$%]*)/;
const LOC = /^\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?function_name\s+([$\w]+))?(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?/;
const LABEL = /^([$\w.]+):$/;

/** The register pressure of every `.entry` in `ptx`. */
export function ptxPressure(ptx: string): KernelPressure[] {
  const names = debugStrings(ptx);
  return entries(ptx).map(({ name, body }) => kernelPressure(name, parseBody(body, names)));
}

/** `$L__info_stringN: .b8 95,90,...,0` in `.debug_str`: the (mangled) names of inlined functions. */
function debugStrings(ptx: string): Map<string, string> {
  const names = new Map<string, string>();
  const section =
    ptx.indexOf('.section\t.debug_str') >= 0 ? ptx.indexOf('.section\t.debug_str') : ptx.indexOf('.section .debug_str');
  if (section < 0) return names;
  const label = /(\$L__info_string\d+):\s*((?:\.b8[^\n]*\n?\s*)+)/g;
  label.lastIndex = section;
  for (let m = label.exec(ptx); m; m = label.exec(ptx)) {
    const bytes = [...m[2].replace(/\.b8/g, '').matchAll(/\d+/g)].map((b) => Number(b[0]));
    const end = bytes.indexOf(0);
    names.set(m[1], String.fromCharCode(...(end >= 0 ? bytes.slice(0, end) : bytes)));
  }
  return names;
}

interface Loc {
  file: number;
  line: number;
  column: number;
  /** The function the location is in, for inlined code (a `.debug_str` label). */
  fn: string | null;
  inlinedAt: { file: number; line: number; column: number } | null;
}

const locKey = (l: { file: number; line: number; column: number }) => `${l.file}:${l.line}:${l.column}`;

/**
 * Where inlined code sits in the kernel's own source: follow `inlined_at` from call site to call
 * site (a `.loc` of the caller says where that caller was itself inlined) up to code of the kernel.
 */
function kernelPlace(
  loc: Loc,
  known: ReadonlyMap<string, Loc>,
  names: ReadonlyMap<string, string>,
): Pick<Parsed, 'line' | 'file' | 'inlinedFrom'> {
  let at = loc;
  for (let depth = 0; at.inlinedAt && depth < 64; depth++) {
    const caller = known.get(locKey(at.inlinedAt));
    if (!caller || !caller.inlinedAt) {
      const mangled = at.fn ? names.get(at.fn) : undefined;
      const fn = mangled ? (demangle(mangled)?.scopedName ?? mangled) : null;
      return {
        file: at.inlinedAt.file,
        line: at.inlinedAt.line || null,
        inlinedFrom: { function: fn, file: at.file, line: at.line },
      };
    }
    at = caller;
  }
  return { file: loc.file, line: loc.line || null, inlinedFrom: null };
}

function entries(ptx: string): Array<{ name: string; body: string[] }> {
  const found: Array<{ name: string; body: string[] }> = [];
  const lines = ptx.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const header = ENTRY.exec(lines[i]);
    if (!header || /;\s*$/.test(lines[i])) continue;
    let depth = 0;
    let seen = false;
    const body: string[] = [];
    for (let j = i; j < lines.length; j++) {
      const line = lines[j].replace(/\/\/.*$/, '').trim();
      for (const c of line) {
        if (c === '{') {
          depth++;
          seen = true;
        } else if (c === '}') depth--;
      }
      if (seen) body.push(line);
      if (seen && depth <= 0) {
        i = j;
        break;
      }
    }
    found.push({ name: header[1], body });
  }
  return found;
}

function parseBody(body: readonly string[], names: ReadonlyMap<string, string>): Parsed[] {
  const parsed: Parsed[] = [];
  const known = new Map<string, Loc>();
  let loc: Loc | null = null;
  const places: Array<Loc | null> = [];
  let pendingLabel: string | null = null;
  for (const raw of body) {
    // Scope braces stand on lines of their own; a line can hold several statements.
    for (const piece of raw.split(';')) {
      let text = piece.trim();
      if (!text || text === '{' || text === '}') continue;
      const l = LOC.exec(text);
      if (l) {
        loc = {
          file: Number(l[1]),
          line: Number(l[2]),
          column: Number(l[3]),
          fn: l[4] ?? null,
          inlinedAt: l[5] ? { file: Number(l[5]), line: Number(l[6]), column: Number(l[7]) } : null,
        };
        if (loc.inlinedAt && !known.has(locKey(loc))) known.set(locKey(loc), loc);
        continue;
      }
      const label = /^([$\w.]+):\s*(.*)$/.exec(text);
      if (label && !text.startsWith('.')) {
        pendingLabel = label[1];
        text = label[2].trim();
        if (!text) continue;
      }
      if (text.startsWith('.') || LABEL.test(text)) continue;
      parsed.push({ ...parseInstruction(text), label: pendingLabel, line: null, file: null, inlinedFrom: null });
      places.push(loc);
      pendingLabel = null;
    }
  }
  // Places resolved once every `.loc` is known: a caller's own `.loc` may come later.
  parsed.forEach((ins, k) => {
    const place = places[k];
    if (place)
      Object.assign(
        ins,
        place.inlinedAt
          ? kernelPlace(place, known, names)
          : { file: place.file, line: place.line || null, inlinedFrom: null },
      );
  });
  return parsed;
}

function parseInstruction(text: string): Omit<Parsed, 'label' | 'line' | 'file' | 'inlinedFrom'> {
  let rest = text;
  let guard: string | null = null;
  const g = /^@!?(%p\d+)\s+/.exec(rest);
  if (g) {
    guard = g[1];
    rest = rest.slice(g[0].length);
  }
  const space = rest.search(/\s/);
  const opcode = space < 0 ? rest : rest.slice(0, space);
  const operands = space < 0 ? '' : rest.slice(space + 1);
  const base = opcode.split('.')[0];
  const targets =
    base === 'bra'
      ? [operands.trim().split(/[\s,]+/)[0]]
      : base === 'brx'
        ? [...operands.matchAll(/\$[\w]+/g)].map((m) => m[0])
        : null;
  const registers = (s: string) => [...s.matchAll(VIRTUAL)].map((m) => m[0]);
  let defs: string[] = [];
  let uses: string[];
  if (NO_DESTINATION.test(opcode) || !operands) {
    uses = registers(operands);
  } else {
    // The destination is the first operand: a register, `%p1|%p2`, or a vector `{%f1, %f2}`.
    const first = /^\s*(\{[^}]*\}|[^,]+)/.exec(operands)![1];
    defs = registers(first);
    uses = registers(operands.slice(operands.indexOf(first) + first.length));
    // A store-like first operand in brackets is an address, read.
    if (first.trim().startsWith('[')) {
      uses.push(...defs);
      defs = [];
    }
  }
  if (guard) uses.push(guard);
  return {
    text,
    opcode,
    guard,
    defs,
    uses,
    targets,
    ends: base === 'ret' || base === 'exit' || base === 'trap',
    jumps: (base === 'bra' || base === 'brx') && guard === null,
  };
}

function kernelPressure(name: string, code: Parsed[]): KernelPressure {
  // Basic blocks: a new one at each labelled instruction and after each branch or end.
  const starts = new Set<number>([0]);
  const labelAt = new Map<string, number>();
  code.forEach((ins, k) => {
    if (ins.label) {
      starts.add(k);
      labelAt.set(ins.label, k);
    }
    if ((ins.targets || ins.ends) && k + 1 < code.length) starts.add(k + 1);
  });
  const blockStarts = [...starts].filter((k) => k < code.length).sort((a, b) => a - b);
  const blockOf = new Map<number, number>();
  blockStarts.forEach((s, b) => blockOf.set(s, b));
  const blocks = blockStarts.map((start, b) => ({
    start,
    end: b + 1 < blockStarts.length ? blockStarts[b + 1] : code.length,
  }));
  const successors = blocks.map(({ end }) => {
    const last = code[end - 1];
    const next: number[] = [];
    if (!last) return next;
    for (const t of last.targets ?? []) {
      const at = labelAt.get(t);
      if (at !== undefined) next.push(blockOf.get(at)!);
    }
    if (!last.ends && !last.jumps && end < code.length) next.push(blockOf.get(end)!);
    return next;
  });
  // Backward dataflow: live-in = uses ∪ (live-out − defs), to a fixed point.
  const liveIn = blocks.map(() => new Set<string>());
  const liveOut = blocks.map(() => new Set<string>());
  let changed = true;
  while (changed) {
    changed = false;
    for (let b = blocks.length - 1; b >= 0; b--) {
      const out = new Set<string>();
      for (const s of successors[b]) for (const r of liveIn[s]) out.add(r);
      const live = new Set(out);
      for (let k = blocks[b].end - 1; k >= blocks[b].start; k--) step(live, code[k]);
      if (live.size !== liveIn[b].size || [...live].some((r) => !liveIn[b].has(r))) {
        liveIn[b] = live;
        changed = true;
      }
      liveOut[b] = out;
    }
  }
  // Live right after each instruction: what is live out of it, plus what it defines (a value
  // defined and never read still takes a register at that point).
  const instructions: PressureInstruction[] = new Array(code.length);
  const lines = new Map<number, number>();
  let peak = 0;
  let peakLine: number | null = null;
  blocks.forEach(({ start, end }, b) => {
    const live = new Set(liveOut[b]);
    for (let k = end - 1; k >= start; k--) {
      const ins = code[k];
      const after = new Set(live);
      for (const d of ins.defs) after.add(d);
      let registers = 0;
      let predicates = 0;
      for (const r of after) {
        const w = registerWidth(r);
        if (w === 0) predicates++;
        else registers += w;
      }
      instructions[k] = {
        text: ins.text,
        line: ins.line,
        file: ins.file,
        inlinedFrom: ins.inlinedFrom,
        liveRegisters: registers,
        livePredicates: predicates,
      };
      step(live, ins);
    }
  });
  instructions.forEach((ins) => {
    if (ins.line !== null) lines.set(ins.line, Math.max(lines.get(ins.line) ?? 0, ins.liveRegisters));
    if (ins.liveRegisters > peak) {
      peak = ins.liveRegisters;
      peakLine = ins.line;
    }
  });
  return { name, instructions, peak, peakLine, lines };
}

/** Liveness backwards over one instruction: its definitions end lives (unless it is predicated), its uses start them. */
function step(live: Set<string>, ins: Parsed): void {
  if (!ins.guard) for (const d of ins.defs) live.delete(d);
  for (const u of ins.uses) live.add(u);
}
