/** An existing build log that holds `nvcc -Xptxas -v` output (CMake builds often do), read for its figures. */
import { readBoundedFileSync } from './bounded-read';

const DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024;

export interface LogText {
  text: string;
  /** When the log was written (its mtime), for "how fresh" in the figures line. */
  producedAt: number;
}

/**
 * Read a log: a regular file (a FIFO or a device is refused without blocking) of at most `maxBytes`.
 * Throws an Error with a one-line message when it cannot be read.
 */
export function readPtxasLog(file: string, maxBytes = DEFAULT_MAX_LOG_BYTES): LogText {
  const read = readBoundedFileSync(file, { maxBytes, what: 'ptxas log' });
  return { text: read.text, producedAt: read.stat.mtimeMs };
}
