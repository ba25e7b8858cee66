/** Reading a baseline file for `check --baseline FILE`. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError } from './cli-io';
import { BaselineError, parseBaseline, type Baseline } from './baseline';

/** Read and validate `--baseline FILE`; a missing or bad file is a usage error (exit 2) with one clear line. */
export function loadBaseline(file: string, cwd: string): Baseline {
  let text: string;
  try {
    text = readFileSync(path.resolve(cwd, file), 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read baseline ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    return parseBaseline(text);
  } catch (error) {
    if (error instanceof BaselineError) throw new UsageError(`bad baseline ${file}: ${error.message}`);
    throw error;
  }
}

