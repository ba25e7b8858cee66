/**
 * The uncoalesced-access findings cross-checked against the compiled code: the global loads or
 * stores the PTX (`nvcc -ptx -lineinfo`) has on the access's line, in the kernel's entries, and the
 * bytes each lane moves in them (`ld.global.v4.f32`: 16). Where they agree with the source's width
 * the finding says so; where the compiler already merged neighbouring scalar accesses into a vector
 * one, or split a vector access, it says that instead. A line with no such instruction (inlined
 * elsewhere, or removed) says nothing.
 */
import type { MemoryRecord } from '../body/memory-rules';
import { fileIdsFor, parsePtx, ptxEntriesFor, type PtxModule } from './ptx-line-costs';

/** `ld.global.nc.v4.f32`: the operation, the state space, then qualifiers, a vector count and a type. */
const GLOBAL_ACCESS = /^\s*(?:@!?%\w+\s+)?((ld|st)\.global(?:\.[a-z0-9_]+)*)\b/;
const TYPE_BYTES: Readonly<Record<string, number>> = {
  b8: 1,
  u8: 1,
  s8: 1,
  b16: 2,
  u16: 2,
  s16: 2,
  f16: 2,
  bf16: 2,
  b32: 4,
  u32: 4,
  s32: 4,
  f32: 4,
  f16x2: 4,
  bf16x2: 4,
  b64: 8,
  u64: 8,
  s64: 8,
  f64: 8,
  b128: 16,
};

/** The bytes one lane moves in a PTX global access (`ld.global.v2.u64`: 16), or null. */
export function ptxAccessBytes(opcode: string): number | null {
  const parts = opcode.split('.');
  const vector = parts.find((p) => /^v[248]$/.test(p));
  const type = [...parts].reverse().find((p) => TYPE_BYTES[p] !== undefined);
  if (!type) return null;
  return TYPE_BYTES[type] * (vector ? Number(vector.slice(1)) : 1);
}

export function crossCheckAccesses(
  records: readonly MemoryRecord[],
  ptx: PtxModule | string,
  filePath: string,
): MemoryRecord[] {
  if (!records.some((r) => r.access)) return [...records];
  const module = typeof ptx === 'string' ? parsePtx(ptx) : ptx;
  const fileIds = fileIdsFor(module, filePath);
  if (fileIds.size === 0) return [...records];
  return records.map((r) => {
    if (r.rule !== 'uncoalesced-access' || !r.access) return r;
    const op = r.access.store ? 'st' : 'ld';
    const opcodes = new Set<string>();
    for (const entry of ptxEntriesFor(module, r.kernel))
      for (const ins of entry.instructions) {
        const at = ins.location;
        if (!at || !fileIds.has(at.file) || at.line - 1 < r.span.start.line || at.line - 1 > r.span.end.line) continue;
        const m = GLOBAL_ACCESS.exec(ins.text);
        if (m && m[2] === op) opcodes.add(m[1]);
      }
    const instructions = [...opcodes].sort();
    const bytes = instructions.map(ptxAccessBytes).filter((b): b is number => b !== null);
    if (instructions.length === 0 || bytes.length !== instructions.length) return r;
    const source = r.access.bytes;
    const listed = instructions.map((i) => `\`${i}\``).join(', ');
    const note = bytes.every((b) => b === source)
      ? `The PTX agrees: ${listed}, ${source} bytes a lane.`
      : bytes.every((b) => b > source)
        ? `The compiler already merged this lane's neighbouring accesses: ${listed}, ${bytes.join(' or ')} bytes a lane where the source moves ${source}.`
        : `The compiler does not move it in one access: ${listed}, ${bytes.join(' or ')} bytes a lane where the source moves ${source}.`;
    return { ...r, message: `${r.message} ${note}`, compiled: { instructions, bytes } };
  });
}
