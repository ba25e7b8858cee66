/**
 * Register pressure from SASS, where the user's toolkit has nvdisasm: `nvdisasm
 * --print-life-ranges --print-line-info` prints, beside each instruction, the registers live there
 * (a `#` count column for the general-purpose registers, another for predicates) and, above runs of
 * instructions, the source line they come from. This is the real allocation, where the PTX
 * estimate (ptx-liveness.ts) is what ptxas had to fit. Local-memory spills show as `STL`/`LDL`
 * instructions. The format, as NVIDIA's CUDA Binary Utilities documentation shows it: a
 * `.text.NAME:` label per function, `//## File "/src/k.cu", line 12` before the instructions of a
 * line, and each instruction after its offset comment (`/` `*0010*` `/`), then
 * `// |  2 ^:       |      |`: the live general-purpose registers, their ranges, the live
 * predicates. Code inlined from a device function says where it was inlined:
 * `//## File "/src/k.cu", line 3 inlined at "/src/k.cu", line 12`; such an instruction is put at
 * the last (outermost) place, the call in the kernel, as the PTX pass puts it (`inlinedFrom`
 * keeps the line it is written on).
 *
 * Pure: the adapter runs nvdisasm and hands the text in.
 */

export interface SassInstruction {
  offset: number;
  text: string;
  /** Source line and file of the instruction (from the last `//## File` comment; inlined code at its call), or null. */
  line: number | null;
  file: string | null;
  /** For inlined code: the file and line it is written on. */
  inlinedFrom: { file: string; line: number } | null;
  /** General-purpose registers live at the instruction (the `#` column), or null where none was printed. */
  liveRegisters: number | null;
  livePredicates: number | null;
  /** A store to or load from local memory (a spill, or a local array). */
  local: 'store' | 'load' | null;
}

export interface SassFunction {
  name: string;
  instructions: SassInstruction[];
  peak: number;
  peakLine: number | null;
  /** Per source line: the most registers live at an instruction of it. */
  lines: Map<number, number>;
  /** Source lines with local-memory stores and loads. */
  spillLines: Map<number, { stores: number; loads: number }>;
}

const FUNCTION = /^\s*\.text\.([^\s:]+):/;
const LINE_INFO = /^\s*\/\/##\s*File\s+"([^"]*)",\s*line\s+(\d+)/;
const INLINED_AT = /inlined at\s+"([^"]*)",\s*line\s+(\d+)/g;
const INSTRUCTION = /^\s*\/\*([0-9a-f]{4,})\*\/\s+([^;]*;)\s*(?:\/\/\s*(.*))?$/i;

export function parseSassLifeRanges(text: string): SassFunction[] {
  const functions: SassFunction[] = [];
  let current: SassFunction | null = null;
  let place: { file: string; line: number; inlinedFrom: { file: string; line: number } | null } | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const fn = FUNCTION.exec(raw);
    if (fn) {
      current = { name: fn[1], instructions: [], peak: 0, peakLine: null, lines: new Map(), spillLines: new Map() };
      functions.push(current);
      place = null;
      continue;
    }
    if (!current) continue;
    const info = LINE_INFO.exec(raw);
    if (info) {
      const written = { file: info[1], line: Number(info[2]) };
      const calls = [...raw.matchAll(INLINED_AT)];
      const outer = calls[calls.length - 1];
      place = outer
        ? { file: outer[1], line: Number(outer[2]), inlinedFrom: written }
        : { ...written, inlinedFrom: null };
      continue;
    }
    const ins = INSTRUCTION.exec(raw);
    if (!ins) continue;
    const columns = (ins[3] ?? '').split('|').slice(1, -1);
    const count = (column: string | undefined) => {
      const m = column ? /^\s*(\d+)/.exec(column) : null;
      return m ? Number(m[1]) : null;
    };
    const opcode = ins[2].replace(/^@!?U?P\w+\s+/, '').split(/[\s.]/)[0];
    const local = opcode === 'STL' ? 'store' : opcode === 'LDL' ? 'load' : null;
    const instruction: SassInstruction = {
      offset: parseInt(ins[1], 16),
      text: ins[2].trim(),
      line: place?.line ?? null,
      file: place?.file ?? null,
      inlinedFrom: place?.inlinedFrom ?? null,
      liveRegisters: count(columns[0]),
      livePredicates: count(columns[1]),
      local,
    };
    current.instructions.push(instruction);
    const live = instruction.liveRegisters;
    if (live !== null && instruction.line !== null)
      current.lines.set(instruction.line, Math.max(current.lines.get(instruction.line) ?? 0, live));
    if (live !== null && live > current.peak) {
      current.peak = live;
      current.peakLine = instruction.line;
    }
    if (local && instruction.line !== null) {
      const s = current.spillLines.get(instruction.line) ?? { stores: 0, loads: 0 };
      if (local === 'store') s.stores++;
      else s.loads++;
      current.spillLines.set(instruction.line, s);
    }
  }
  return functions;
}
