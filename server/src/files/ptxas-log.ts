/** Figures from an existing build log that holds `nvcc -Xptxas -v` output (CMake builds often do). */
import { readFileSync, statSync } from 'node:fs';
import type { Kernel } from '../core/types';
import { parsePtxasOutput, type PtxasOutput } from '../core/compiler/ptxas-output';
import { mapKernelResources, type KernelResources } from '../core/compiler/kernel-resources';

const MAX_LOG_BYTES = 64 * 1024 * 1024;

export interface LogFigures {
  kernels: Array<KernelResources<Kernel>>;
  output: PtxasOutput;
  producedAt: number;
}

/** Read and map a log; throws an Error with a one-line message when it cannot be read. */
export function readPtxasLog(file: string, kernels: readonly Kernel[]): LogFigures {
  let stat;
  try {
    stat = statSync(file);
  } catch (error) {
    throw new Error(`cannot read ptxas log ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (stat.size > MAX_LOG_BYTES) throw new Error(`ptxas log ${file} is larger than 64 MB`);
  const output = parsePtxasOutput(readFileSync(file, 'utf8'));
  if (!output.sawPtxasOutput) throw new Error(`${file} holds no ptxas output (build with -Xptxas -v)`);
  const producedAt = stat.mtimeMs;
  return { kernels: mapKernelResources({ kernels, entries: output.entries, source: 'log', producedAt }).kernels, output, producedAt };
}
