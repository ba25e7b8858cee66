/**
 * Figures from what a build already produced: `cuobjdump --dump-resource-usage` of its objects,
 * libraries and fatbins, and the `-Xptxas -v` / `--resource-usage` lines of its logs. Each figure
 * keeps where it came from (the file and when it was written).
 *
 * One mangled name and architecture can appear many times: the object, then the library and the
 * shared object it was linked into, or a log and the object of the same compile. When every
 * appearance agrees on the figures occupancy depends on (registers and static shared memory),
 * they are one figure; when they disagree (two targets built the kernel with other flags, a log
 * from an older build) nothing says which one a launch runs, so the figure is not shown: it is
 * unknown, with a note that names the values and the files.
 *
 * Pure: the adapters walk the build directory, run cuobjdump and read the logs, and hand the text in.
 */
import { parseResourceUsage } from './cuobjdump-resources';
import { newFigures, parsePtxasOutput, type PtxasFunctionFigures } from './ptxas-output';
import { readDeviceCode, type CubinFunctionFigures } from './cubin-resources';
import { unknownResources, type BuildOrigin, type ResourceFigures } from './kernel-resources';

export type { BuildOrigin, FigureOrigin } from './kernel-resources';

interface Candidate {
  entry: PtxasFunctionFigures;
  origin: BuildOrigin;
  /** A log says spills; cuobjdump and the ELF do not. */
  knowsSpills: boolean;
  /** A log and the ELF say barriers; cuobjdump does not. */
  knowsBarriers: boolean;
}

/** What a conflict note lists of the disagreeing figures. */
const MAX_LISTED = 3;

export class BuildFigures {
  private readonly byKey = new Map<string, Candidate[]>();
  private readonly origins: BuildOrigin[] = [];

  /** The ptxas lines of a build log; returns how many entry figures it held (0: no ptxas output). */
  addLog(origin: Omit<BuildOrigin, 'kind'>, text: string): number {
    // A log can hold the same kernel twice (two targets, two builds appended): each report is a candidate.
    return this.add({ ...origin, kind: 'log' }, allEntries(text), { knowsSpills: true, knowsBarriers: true });
  }

  /** `cuobjdump --dump-resource-usage` output of one file; returns how many function figures it held. */
  addObjectDump(origin: Omit<BuildOrigin, 'kind'>, text: string): number {
    const entries = parseResourceUsage(text).map((f): PtxasFunctionFigures => ({
      // cuobjdump lists device functions too; only names that demangle to a __global__ of the source are used.
      ...newFigures(f.name, f.arch, true, 0),
      numRegs: f.registers,
      sharedSizeBytes: f.sharedBytes,
      constBytes: f.constantBytes,
      stackFrameBytes: f.stackBytes,
      localBytes: f.localBytes,
    }));
    return this.add({ ...origin, kind: 'object', via: 'cuobjdump' }, entries, {
      knowsSpills: false,
      knowsBarriers: false,
    });
  }

  /** Kernels read from device code without cuobjdump (cubin-resources.ts); returns how many. */
  addDeviceCode(origin: Omit<BuildOrigin, 'kind'>, figures: readonly CubinFunctionFigures[]): number {
    const entries = figures.map((f): PtxasFunctionFigures => ({
      ...newFigures(f.name, f.arch, true, 0),
      numRegs: f.registers,
      barriers: f.barriers,
      sharedSizeBytes: f.sharedBytes,
      stackFrameBytes: f.stackFrameBytes ?? 0,
    }));
    return this.add({ ...origin, kind: 'object', via: 'elf' }, entries, { knowsSpills: false, knowsBarriers: true });
  }

  /**
   * Kernels read from the bytes of a cubin, fatbin, object, archive or shared object, without
   * cuobjdump; returns how many, and how many device code entries were compressed and not read.
   */
  addDeviceCodeBytes(
    origin: Omit<BuildOrigin, 'kind'>,
    bytes: Uint8Array,
  ): { kernels: number; compressed: number; uncertain: number } {
    const read = readDeviceCode(bytes);
    return {
      kernels: this.addDeviceCode(origin, read.figures),
      compressed: read.compressedEntries,
      uncertain: read.uncertainKernels,
    };
  }

  /** The files that gave figures. */
  get files(): readonly BuildOrigin[] {
    return this.origins;
  }

  get size(): number {
    return this.byKey.size;
  }

  /**
   * One entry per mangled name and architecture (the agreeing figures; for a conflict, the first,
   * to be replaced by `figuresOf`), for the mapper to group into kernel instances.
   */
  entries(): PtxasFunctionFigures[] {
    return [...this.byKey.values()].map((c) => chosen(c).entry);
  }

  /** The figures to show for a mangled name on an architecture, with their origin; unknown with a note on a conflict. */
  figuresOf(mangledName: string, arch: string): ResourceFigures | null {
    const candidates = this.byKey.get(keyOf(mangledName, arch));
    if (!candidates) return null;
    const distinct = new Map<string, Candidate[]>();
    for (const c of candidates) {
      const k = `${c.entry.numRegs}/${c.entry.sharedSizeBytes}`;
      distinct.set(k, [...(distinct.get(k) ?? []), c]);
    }
    if (distinct.size > 1) {
      const listed = [...distinct.values()].slice(0, MAX_LISTED).map((group) => {
        const e = group[0].entry;
        const more = group.length > 1 ? ` and ${group.length - 1} more` : '';
        return `${e.numRegs} registers, ${e.sharedSizeBytes} B smem in ${baseName(group[0].origin.path)}${more}`;
      });
      const others = distinct.size > MAX_LISTED ? `; ${distinct.size - MAX_LISTED} more` : '';
      const conflict = `the build's files disagree on ${arch}: ${listed.join('; ')}${others}`;
      return { ...unknownResources(`${conflict}; not shown, since a launch may run either`), conflict };
    }
    const pick = chosen(candidates);
    const e = pick.entry;
    const newest = candidates.reduce((a, b) => ((b.origin.modifiedAt ?? 0) > (a.origin.modifiedAt ?? 0) ? b : a));
    const spills = candidates.find((c) => c.knowsSpills);
    const barriers = candidates.find((c) => c.knowsBarriers);
    return {
      numRegs: e.numRegs,
      sharedSizeBytes: e.sharedSizeBytes,
      // cuobjdump's LOCAL holds spills and local arrays together: spills are known only from a log.
      spillStoreBytes: spills ? spills.entry.spillStoreBytes : null,
      spillLoadBytes: spills ? spills.entry.spillLoadBytes : null,
      stackFrameBytes: e.stackFrameBytes,
      barriers: barriers ? barriers.entry.barriers : null,
      source: 'log',
      producedAt: newest.origin.modifiedAt,
      origin: { ...newest.origin, files: new Set(candidates.map((c) => c.origin.path)).size },
    };
  }

  private add(
    origin: BuildOrigin,
    entries: readonly PtxasFunctionFigures[],
    knows: Pick<Candidate, 'knowsSpills' | 'knowsBarriers'>,
  ): number {
    let count = 0;
    for (const entry of entries) {
      if (!entry.isEntry || entry.arch === null || entry.numRegs === null) continue;
      const key = keyOf(entry.mangledName, entry.arch);
      const list = this.byKey.get(key) ?? [];
      list.push({ entry, origin, ...knows });
      this.byKey.set(key, list);
      count++;
    }
    if (count) this.origins.push(origin);
    return count;
  }
}

function keyOf(mangledName: string, arch: string): string {
  return `${mangledName}\u0000${arch}`;
}

/** A log's candidate first (it knows spills and barriers), else the first. */
function chosen(candidates: readonly Candidate[]): Candidate {
  return candidates.find((c) => c.knowsSpills) ?? candidates[0];
}

/**
 * Every entry report of a log, repeats included: the parser keeps the last report of a name and
 * architecture, and a log can hold two (two targets compiled the kernel, two builds appended).
 * Each compile's block, from one `Compiling ... function` line to the next, is parsed apart.
 */
function allEntries(text: string): PtxasFunctionFigures[] {
  const lines = text.split(/\r\n|\r|\n/);
  const found: PtxasFunctionFigures[] = [];
  let start = 0;
  const flush = (end: number) => {
    if (end > start) found.push(...parsePtxasOutput(lines.slice(start, end).join('\n')).entries);
    start = end;
  };
  for (let i = 0; i < lines.length; i++) if (COMPILING.test(lines[i])) flush(i);
  flush(lines.length);
  return found;
}

const COMPILING = /ptxas\s+info\s*:\s*Compiling (?:entry )?function '/;

function baseName(path: string): string {
  return path.slice(path.replace(/\\/g, '/').lastIndexOf('/') + 1);
}
