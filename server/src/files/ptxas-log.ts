/** An existing build log that holds `nvcc -Xptxas -v` output (CMake builds often do), read for its figures. */
import { readFileSync, statSync } from 'node:fs';

const MAX_LOG_BYTES = 64 * 1024 * 1024;

export interface LogText {
  text: string;
  /** When the log was written (its mtime), for "how fresh" in the figures line. */
  producedAt: number;
}

/** Read a log; throws an Error with a one-line message when it cannot be read. */
export function readPtxasLog(file: string): LogText {
  let stat;
  try {
    stat = statSync(file);
  } catch (error) {
    throw new Error(`cannot read ptxas log ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  }
  if (stat.size > MAX_LOG_BYTES) throw new Error(`ptxas log ${file} is larger than 64 MB`);
  return { text: readFileSync(file, 'utf8'), producedAt: stat.mtimeMs };
}
