/** The uniformity analysis of the kernels of a `.cu` text, read as the server reads a document (its unit, its IR). */
import * as assert from 'node:assert/strict';
import { getCudaParser } from './grammar';
import { documentView } from '../../server/src/core/incremental/unit-facts';
import { UnitProgram, type TemplateBinding } from '../../server/src/core/program/program';
import { kernelScope } from '../../server/src/core/facts/kernel-reader';
import { analyzeKernelUniformity, type KernelUniformity } from '../../server/src/core/uniformity/thread-uniformity';
import type { Dim3 } from '../../server/src/core/types';

export interface KernelRead extends KernelUniformity {
  kernel: string;
  /** The text read (for the line of an offset). */
  text: string;
}

/**
 * Each kernel of `text` (or the one named), with its template parameters bound to `args` (by
 * position; unknown where absent) and launched with `shapes`.
 */
export async function uniformities(
  text: string,
  options: { kernel?: string; shapes?: Dim3[]; args?: Array<TemplateBinding | undefined> } = {},
): Promise<KernelRead[]> {
  const parser = await getCudaParser();
  const doc = documentView('/t.cu', text, undefined);
  const tree = parser.parse(doc.parseView);
  const program = new UnitProgram(doc.unit, parser, [{ path: doc.path, view: doc.parseView, tree }]);
  try {
    const out: KernelRead[] = [];
    for (const fn of program.outline(doc.path).functions) {
      if (!fn.global || !fn.bodyAt || (options.kernel && fn.name !== options.kernel)) continue;
      const pf = { file: doc.path, fn };
      const read = analyzeKernelUniformity({
        program,
        fn: pf,
        bindings: kernelScope(pf, options.args).bindings,
        shapes: options.shapes ?? [],
        file: doc.path,
      });
      out.push({ ...read, kernel: fn.name, text });
    }
    return out;
  } finally {
    program.dispose();
    tree.delete();
  }
}

export async function uniformityOf(
  text: string,
  options: { kernel?: string; shapes?: Dim3[]; args?: Array<TemplateBinding | undefined> } = {},
): Promise<KernelRead> {
  const [first] = await uniformities(text, options);
  assert.ok(first, 'no kernel');
  return first;
}

/** The 0-based line of an offset of the text read. */
export function lineOf(read: { text: string }, offset: number): number {
  return read.text.slice(0, offset).split('\n').length - 1;
}
