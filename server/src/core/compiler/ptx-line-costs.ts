/**
 * PTX from `nvcc -ptx -lineinfo`, read for the divergence cost model: each
 * function's instructions with the source location (`.loc file line column`)
 * they were generated for. Instructions of inlined functions are attributed to
 * the call site (`inlined_at`), so a branch around a `__device__` call is
 * charged for the callee's body. A pure parser and mapper: the caller runs nvcc.
 */
import type { Span } from '../types';

export interface PtxLocation {
  file: number;
  /** 1-based, as PTX writes it. */
  line: number;
  /** 1-based; 0 when nvcc gave no column. */
  column: number;
}

export interface PtxInstruction {
  text: string;
  location: PtxLocation | null;
}

export interface PtxFunction {
  name: string;
  kind: 'entry' | 'func';
  instructions: PtxInstruction[];
  /** Each label (`$L__BB0_3`) and the index in `instructions` of the instruction after it (the loops: ptx-load-work.ts). */
  labels?: Map<string, number>;
}

export interface PtxModule {
  /** `.file` number to path. */
  files: Map<number, string>;
  functions: PtxFunction[];
}

const FUNCTION_HEADER = /^\s*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$%]*)/;
const LOC = /^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?/;
const FILE = /^\s*\.file\s+(\d+)\s+"([^"]*)"/;

export function parsePtx(text: string): PtxModule {
  const files = new Map<number, string>();
  const functions: PtxFunction[] = [];
  let current: PtxFunction | null = null;
  let depth = 0;
  let seenBody = false;
  let location: PtxLocation | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) continue;
    const file = FILE.exec(line);
    if (file) {
      files.set(Number(file[1]), file[2]);
      continue;
    }
    if (!current) {
      const header = FUNCTION_HEADER.exec(line);
      if (header && !/;\s*$/.test(line)) {
        current = { name: header[2], kind: header[1] as 'entry' | 'func', instructions: [], labels: new Map() };
        depth = 0;
        seenBody = false;
        location = null;
      }
      if (!current) continue;
    }
    for (const c of line) {
      if (c === '{') {
        depth++;
        seenBody = true;
      } else if (c === '}') depth--;
    }
    const loc = LOC.exec(line);
    const label = seenBody && !loc ? /^([$\w.]+):$/.exec(line) : null;
    if (label) current.labels!.set(label[1], current.instructions.length);
    else if (loc) {
      location = loc[4]
        ? { file: Number(loc[4]), line: Number(loc[5]), column: Number(loc[6]) }
        : { file: Number(loc[1]), line: Number(loc[2]), column: Number(loc[3]) };
    } else if (seenBody && isInstruction(line)) {
      current.instructions.push({ text: line, location });
    }
    if (seenBody && depth <= 0) {
      functions.push(current);
      current = null;
    }
  }
  return { files, functions };
}

function isInstruction(line: string): boolean {
  if (line.startsWith('.') || line.startsWith('{') || line.startsWith('}') || /^[$\w.]+:$/.test(line)) return false;
  return line.endsWith(';');
}

/** The `.file` table alone (number to path), without reading the functions. */
export function ptxFiles(text: string): Map<number, string> {
  const files = new Map<number, string>();
  for (const m of text.matchAll(/^\s*\.file\s+(\d+)\s+"([^"]*)"/gm)) files.set(Number(m[1]), m[2]);
  return files;
}

/** The `.file` numbers whose path ends with `path` (compared by its last components). */
export function fileIdsFor(module: { files: ReadonlyMap<number, string> }, path: string): Set<number> {
  const norm = (p: string) => p.replace(/\\/g, '/');
  const wanted = norm(path);
  const base = wanted.slice(wanted.lastIndexOf('/') + 1);
  const ids = new Set<number>();
  for (const [id, p] of module.files) {
    const f = norm(p);
    if (
      f === wanted ||
      f.endsWith('/' + wanted) ||
      wanted.endsWith('/' + f) ||
      f.slice(f.lastIndexOf('/') + 1) === base
    )
      ids.add(id);
  }
  return ids;
}

/** The `.entry` functions of a kernel: its plain (`extern "C"`) or Itanium-mangled name (`_Z6reducePfi`, `_ZN2ns6reduce...`). */
export function ptxEntriesFor(module: PtxModule, kernelName: string): PtxFunction[] {
  return module.functions.filter((f) => f.kind === 'entry' && entryNamesKernel(f.name, kernelName));
}

/** Whether a PTX entry's name is the kernel's: plain (`extern "C"`) or Itanium-mangled. */
export function entryNamesKernel(entryName: string, kernelName: string): boolean {
  const mangled = `${kernelName.length}${kernelName}`;
  return (
    entryName === kernelName ||
    new RegExp(`^_Z(?:N.*?)?(?:I.*?)?${mangled}(?![A-Za-z_])`).test(entryName) ||
    entryName.includes(mangled)
  );
}

/** Instructions of `functions` whose source location falls in one of `spans` (0-based spans, end exclusive). */
export function countInstructionsInSpans(
  functions: readonly PtxFunction[],
  fileIds: ReadonlySet<number>,
  spans: readonly Span[],
): number {
  let count = 0;
  for (const f of functions) {
    for (const ins of f.instructions) {
      const loc = ins.location;
      if (!loc || !fileIds.has(loc.file)) continue;
      if (spans.some((s) => inSpan(loc, s))) count++;
    }
  }
  return count;
}

function inSpan(loc: PtxLocation, span: Span): boolean {
  const line = loc.line - 1;
  if (loc.column === 0)
    return (line > span.start.line && line < span.end.line) || (line === span.start.line && line === span.end.line);
  const col = loc.column - 1;
  const afterStart = line > span.start.line || (line === span.start.line && col >= span.start.character);
  const beforeEnd = line < span.end.line || (line === span.end.line && col < span.end.character);
  return afterStart && beforeEnd;
}
