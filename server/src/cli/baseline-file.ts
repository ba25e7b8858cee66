/** Reading a baseline file for `check --baseline FILE`. */
import * as path from 'node:path';
import { UsageError } from './cli-io';
import { BaselineError, parseBaseline, type Baseline } from './baseline';
import { readBoundedFileSync } from '../files/bounded-read';

const MAX_BASELINE_BYTES = 64 * 1024 * 1024;

/**
 * Read and validate `--baseline FILE`: a regular file (a FIFO or a device is refused without blocking) of at
 * most 64 MB. A missing or bad file is a usage error (exit 2) with one clear line.
 */
export function loadBaseline(file: string, cwd: string, maxBytes = MAX_BASELINE_BYTES): Baseline {
  let text: string;
  try {
    text = readBoundedFileSync(path.resolve(cwd, file), { maxBytes, what: 'baseline' }).text;
  } catch (error) {
    throw new UsageError((error as Error).message.replace(path.resolve(cwd, file), file));
  }
  try {
    return parseBaseline(text);
  } catch (error) {
    if (error instanceof BaselineError) throw new UsageError(`bad baseline ${file}: ${error.message}`);
    throw error;
  }
}
