/**
 * Kernel figures read straight from device code, for when the toolkit has no cuobjdump: a cubin
 * (`nvcc -cubin`), or the cubins inside the fatbins that objects, libraries and shared objects
 * embed (`.nv_fatbin`). Per kernel, as this toolkit (CUDA 13) writes them and as checked against
 * `ptxas -v` of the same compiles (test/unit/cubin-resources.test.ts):
 *
 * - registers: EIATTR_REGCOUNT (0x2f) of `.nv.info` for the kernel's symbol (a linked cubin also has
 *   them in the high byte of `.text.<kernel>`'s `sh_info`; a relocatable sm_90 one does not);
 * - static shared memory: the size of `.nv.shared.<kernel>` (none: 0). Where the cubin has a
 *   `.nv.shared.reserved.*` section (sm_90 objects), a kernel's section also holds reserved shared
 *   memory (1 KB more than ptxas says for kernels with a barrier, even with no `__shared__` of their
 *   own), by a rule not documented: such a kernel with a shared section or a barrier is not read;
 * - stack frame: EIATTR_FRAME_SIZE (0x11) of `.nv.info`, for the kernel's symbol;
 * - barriers: EIATTR 0x4c of `.nv.info.<kernel>` (none: 0);
 * - a kernel (not a device function) is one with a `.nv.info.<kernel>` section.
 *
 * Spills are not in the ELF: they stay unknown. A fatbin entry that is compressed (`-compress-mode`,
 * flag bits 0x2000 or 0x8000) is counted and skipped: it is not decompressed here. Pure: bytes in.
 */
export interface CubinFunctionFigures {
  /** `sm_80`; an `a`/`f` variant reads as its base (the ELF does not tell them apart). */
  arch: string;
  name: string;
  registers: number;
  sharedBytes: number;
  stackFrameBytes: number | null;
  barriers: number;
}

export interface CubinRead {
  figures: CubinFunctionFigures[];
  /** Device code entries that were compressed and not read. */
  compressedEntries: number;
  /** Kernels not read because their shared memory cannot be told apart from reserved shared memory. */
  uncertainKernels: number;
}

const FATBIN_MAGIC = 0xba55ed50;
const EM_CUDA = 190;
const SHT_NOBITS = 8;
const EIATTR_FRAME_SIZE = 0x11;
const EIATTR_REGCOUNT = 0x2f;
const EIATTR_BARRIERS = 0x4c;
const COMPRESSED = 0x2000n | 0x8000n;
/** A fatbin's offsets are checked against the bytes; more entries than this in one is not a fatbin. */
const MAX_ENTRIES = 100_000;

/** Figures of every kernel in `bytes`: a cubin, a fatbin, or any file that embeds fatbins (an object, an archive, a shared object). */
export function readDeviceCode(bytes: Uint8Array): CubinRead {
  const out: CubinRead = { figures: [], compressedEntries: 0, uncertainKernels: 0 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isCudaElf(view, 0)) {
    addCubin(out, bytes);
    return out;
  }
  // Fatbins sit 8-byte aligned in `.nv_fatbin`, but an archive's members are only 2-byte aligned: every offset is tried.
  for (let at = bytes.indexOf(0x50); at >= 0 && at + 16 <= bytes.length; at = bytes.indexOf(0x50, at + 1)) {
    if (view.getUint32(at, true) !== FATBIN_MAGIC) continue;
    const next = readFatbin(bytes, view, at, out);
    if (next > at) at = next - 1;
  }
  return out;
}

/** Reads the fatbin at `at`; returns where it ends (or `at` when it is not a valid one). */
function readFatbin(bytes: Uint8Array, view: DataView, at: number, out: CubinRead): number {
  const version = view.getUint16(at + 4, true);
  const headerSize = view.getUint16(at + 6, true);
  const size = Number(view.getBigUint64(at + 8, true));
  if (version !== 1 || headerSize !== 16 || size <= 0 || at + headerSize + size > bytes.length) return at;
  const end = at + headerSize + size;
  let p = at + headerSize;
  for (let n = 0; p + 64 <= end && n < MAX_ENTRIES; n++) {
    const kind = view.getUint16(p, true);
    const entryHeader = view.getUint32(p + 4, true);
    const payload = Number(view.getBigUint64(p + 8, true));
    if (entryHeader < 64 || p + entryHeader + payload > end) return at;
    const flags = view.getBigUint64(p + 0x28, true);
    if (kind === 2) {
      const start = p + entryHeader;
      if ((flags & COMPRESSED) !== 0n) out.compressedEntries++;
      else if (isCudaElf(view, start)) addCubin(out, bytes.subarray(start, start + payload));
    }
    p += entryHeader + payload;
  }
  return end;
}

function addCubin(out: CubinRead, bytes: Uint8Array): void {
  const read = readCubin(bytes);
  out.figures.push(...read.figures);
  out.uncertainKernels += read.uncertain;
}

function isCudaElf(view: DataView, at: number): boolean {
  return (
    at + 64 <= view.byteLength &&
    view.getUint32(at, false) === 0x7f454c46 &&
    view.getUint8(at + 4) === 2 && // 64-bit
    view.getUint8(at + 5) === 1 && // little-endian
    view.getUint16(at + 0x12, true) === EM_CUDA
  );
}

interface Section {
  name: string;
  type: number;
  offset: number;
  size: number;
  info: number;
}

/** The kernels of one cubin (64-bit little-endian CUDA ELF); nothing when a field does not validate. */
export function readCubin(bytes: Uint8Array): { figures: CubinFunctionFigures[]; uncertain: number } {
  const none = { figures: [], uncertain: 0 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isCudaElf(view, 0)) return none;
  const arch = archOf(view);
  if (!arch) return none;
  const sections = sectionsOf(bytes, view);
  if (!sections) return none;
  const reserved = sections.some((s) => s.name.startsWith('.nv.shared.reserved.'));
  let uncertain = 0;
  const byName = new Map(sections.map((s) => [s.name, s]));
  const frames = perSymbol(view, byName.get('.nv.info'), EIATTR_FRAME_SIZE);
  const regcounts = perSymbol(view, byName.get('.nv.info'), EIATTR_REGCOUNT);
  const found: CubinFunctionFigures[] = [];
  for (const s of sections) {
    if (!s.name.startsWith('.text.')) continue;
    const name = s.name.slice('.text.'.length);
    const info = byName.get(`.nv.info.${name}`);
    if (!info) continue; // a device function
    // EIATTR_REGCOUNT; a linked cubin also keeps it in sh_info's high byte (a relocatable sm_90 one does not).
    const registers = regcounts.get(s.info & 0xffffff) ?? s.info >>> 24;
    if (registers === 0 || registers > 255) continue;
    const shared = byName.get(`.nv.shared.${name}`);
    const barriers = attributeValue(view, info, EIATTR_BARRIERS) ?? 0;
    if (reserved && (shared || barriers > 0)) {
      uncertain++;
      continue;
    }
    found.push({
      arch,
      name,
      registers,
      sharedBytes: shared && shared.type === SHT_NOBITS ? shared.size : 0,
      stackFrameBytes: frames.get(s.info & 0xffffff) ?? null,
      barriers,
    });
  }
  return { figures: found, uncertain };
}

/** `sm_80` from e_flags: bits 8-15 in the ELF ABI of CUDA 12.8 and later (OSABI 0x41), the low byte before (0x33). */
function archOf(view: DataView): string | null {
  const osabi = view.getUint8(7);
  const flags = view.getUint32(0x30, true);
  const sm = osabi === 0x41 ? (flags >>> 8) & 0xff : osabi === 0x33 ? flags & 0xff : 0;
  return sm >= 30 && sm < 256 ? `sm_${sm}` : null;
}

function sectionsOf(bytes: Uint8Array, view: DataView): Section[] | null {
  const shoff = Number(view.getBigUint64(0x28, true));
  const entSize = view.getUint16(0x3a, true);
  const count = view.getUint16(0x3c, true);
  const strIndex = view.getUint16(0x3e, true);
  if (entSize < 64 || shoff + entSize * count > bytes.length || strIndex >= count) return null;
  const raw = Array.from({ length: count }, (_, i) => {
    const at = shoff + i * entSize;
    return {
      nameOffset: view.getUint32(at, true),
      type: view.getUint32(at + 4, true),
      offset: Number(view.getBigUint64(at + 0x18, true)),
      size: Number(view.getBigUint64(at + 0x20, true)),
      info: view.getUint32(at + 0x2c, true),
    };
  });
  const strtab = raw[strIndex];
  if (strtab.offset + strtab.size > bytes.length) return null;
  const names = bytes.subarray(strtab.offset, strtab.offset + strtab.size);
  const sections: Section[] = [];
  for (const s of raw) {
    if (s.type !== SHT_NOBITS && s.offset + s.size > bytes.length) return null;
    const zero = names.indexOf(0, s.nameOffset);
    if (s.nameOffset >= names.length || zero < 0) return null;
    sections.push({ ...s, name: latin1(names.subarray(s.nameOffset, zero)) });
  }
  return sections;
}

/** The attributes of an `.nv.info` section: `[format, attribute, ...]`, 4 bytes, or 4 + size for format 4. */
function* attributes(
  view: DataView,
  s: Section,
): Generator<{ attr: number; at: number; size: number; format: number }> {
  let p = s.offset;
  const end = s.offset + s.size;
  while (p + 4 <= end) {
    const format = view.getUint8(p);
    const attr = view.getUint8(p + 1);
    if (format === 4) {
      const size = view.getUint16(p + 2, true);
      if (p + 4 + size > end) return;
      yield { attr, at: p + 4, size, format };
      p += 4 + size;
    } else if (format >= 1 && format <= 3) {
      yield { attr, at: p + 2, size: 2, format };
      p += 4;
    } else return;
  }
}

function attributeValue(view: DataView, s: Section, attr: number): number | null {
  for (const a of attributes(view, s)) {
    if (a.attr !== attr) continue;
    if (a.format === 2) return view.getUint8(a.at);
    if (a.format === 3) return view.getUint16(a.at, true);
  }
  return null;
}

/** An `.nv.info` attribute given per function (`[symbol index, value]`: EIATTR_REGCOUNT, EIATTR_FRAME_SIZE), by symbol index. */
function perSymbol(view: DataView, s: Section | undefined, attr: number): Map<number, number> {
  const values = new Map<number, number>();
  if (!s) return values;
  for (const a of attributes(view, s))
    if (a.attr === attr && a.format === 4 && a.size === 8)
      values.set(view.getUint32(a.at, true), view.getUint32(a.at + 4, true));
  return values;
}

function latin1(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return text;
}
