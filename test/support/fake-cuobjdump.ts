/** The fake cuobjdump of test/fixtures/fake-cuobjdump, and objects it reads (the documented `--dump-resource-usage` format). */
import * as path from 'node:path';

/** A folder laid out like a toolkit with only bin/cuobjdump: point $CUDA_HOME at it. */
export const FAKE_CUDA_HOME = path.resolve(__dirname, '../../../test/fixtures/fake-cuobjdump');
export const FAKE_CUOBJDUMP = path.join(FAKE_CUDA_HOME, 'bin', 'cuobjdump');

/**
 * An object as the fake cuobjdump reads it: `FAKE-OBJECT`, then the output NVIDIA's CUDA Binary
 * Utilities documentation shows for `cuobjdump --dump-resource-usage`, for these functions per arch.
 */
export function fakeObject(
  archs: Record<string, Record<string, { reg: number; shared?: number; stack?: number }>>,
): string {
  let text = 'FAKE-OBJECT\n';
  for (const [arch, functions] of Object.entries(archs)) {
    text += `\nFatbin elf code:\n================\narch = ${arch}\ncode version = [1,8]\nhost = linux\ncompile_size = 64bit\n\nResource usage:\n Common:\n  GLOBAL:0\n`;
    for (const [name, f] of Object.entries(functions))
      text += ` Function ${name}:\n  REG:${f.reg} STACK:${f.stack ?? 0} SHARED:${f.shared ?? 0} LOCAL:0 CONSTANT[0]:368 TEXTURE:0 SURFACE:0 SAMPLER:0\n`;
  }
  return text;
}
