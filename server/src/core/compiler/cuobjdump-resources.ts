/**
 * `cuobjdump --dump-resource-usage` output, read for the figures of kernels a build already
 * compiled (objects, libraries, executables, fatbins): registers, stack, shared and local memory
 * per function and architecture, with no recompile. The format, as NVIDIA's CUDA Binary Utilities
 * documentation shows it:
 *
 *     Fatbin elf code:
 *     ================
 *     arch = sm_80
 *     ...
 *     Resource usage:
 *      Common:
 *       GLOBAL:0
 *      Function _Z6kernelPfi:
 *       REG:10 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:368 TEXTURE:0 SURFACE:0 SAMPLER:0
 *
 * cuobjdump reports no spills apart: LOCAL holds spill space and local arrays together.
 * Pure: the adapter runs cuobjdump (when the toolkit has it) and hands the text in.
 */
export interface ObjectFunctionFigures {
  arch: string;
  /** The function's name as the object holds it (mangled). */
  name: string;
  registers: number;
  stackBytes: number;
  sharedBytes: number;
  localBytes: number;
  constantBytes: number;
}

const INT = /^\d{1,9}$/;

/** Every function's figures, per architecture section; lines it cannot read are skipped. */
export function parseResourceUsage(text: string): ObjectFunctionFigures[] {
  const found: ObjectFunctionFigures[] = [];
  let arch: string | null = null;
  let fn: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const a = /^arch\s*=\s*(sm_\d+[a-z]?)$/.exec(line);
    if (a) {
      arch = a[1];
      fn = null;
      continue;
    }
    const f = /^Function\s+([^\s:]+)\s*:$/.exec(line);
    if (f) {
      fn = f[1];
      continue;
    }
    if (!fn || !arch || !/^REG:/.test(line)) continue;
    const fields = new Map<string, number>();
    for (const m of line.matchAll(/([A-Z]+(?:\[\d+\])?):(\S+)/g)) if (INT.test(m[2])) fields.set(m[1], Number(m[2]));
    const registers = fields.get('REG');
    // A register count outside what any architecture allows is not a figure to trust.
    if (registers === undefined || registers > 255) {
      fn = null;
      continue;
    }
    const constant = [...fields].filter(([k]) => k.startsWith('CONSTANT')).reduce((s, [, v]) => s + v, 0);
    found.push({
      arch,
      name: fn,
      registers,
      stackBytes: fields.get('STACK') ?? 0,
      sharedBytes: fields.get('SHARED') ?? 0,
      localBytes: fields.get('LOCAL') ?? 0,
      constantBytes: constant,
    });
    fn = null;
  }
  return found;
}
