/**
 * A file read as the workspace index reads one it has not opened (incremental/file-alone.ts),
 * synchronously: a suite calls `loadFileAloneParser` in a `before` hook, then `readAlone` in its tests.
 */
import { readFileAlone, type FileAlone } from '../../server/src/core/incremental/file-alone';
import { WorkspaceIndex, type WorkspaceIndexOptions } from '../../server/src/core/facts/workspace-index';
import type { CudaParser } from '../../server/src/core/syntax/cuda-parser';
import { getCudaParser } from './grammar';

let parser: CudaParser | null = null;

export async function loadFileAloneParser(): Promise<void> {
  parser ??= await getCudaParser();
}

function loaded(): CudaParser {
  if (!parser) throw new Error('call loadFileAloneParser() in a before hook first');
  return parser;
}

export function readAlone(text: string, path = '/snippet.cu'): FileAlone {
  return readFileAlone(path, text, loaded());
}

/** A workspace index that reads files as the analyzer's does. */
export function semanticIndex(options: Omit<WorkspaceIndexOptions, 'read'> = {}): WorkspaceIndex {
  const p = loaded();
  return new WorkspaceIndex({ ...options, read: (path, text) => readFileAlone(path, text, p) });
}
