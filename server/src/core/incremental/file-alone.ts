/**
 * What the workspace index keeps of a file it reads from disk: the file read as its own unit (its
 * preprocessor with no include followed, the part every unit that includes it shares), by the same
 * semantic core that reads an open document: the kernels of its outline, its launches and their
 * configurations from the value analysis, its opt-ins to more dynamic shared memory. A value that
 * needs an include (a `BLOCK` from `config.h`) is unknown here; the unit that launches reads it.
 */
import type { Kernel, Launch, SmemOptIn } from '../types';
import { makeSourceText } from '../text/source-text';
import type { SnippetParser } from '../ir/macro-hooks';
import { documentView, unitFacts } from './unit-facts';

export interface FileAlone {
  kernels: Kernel[];
  launches: Launch[];
  smemOptIns: SmemOptIn[];
}

const NOTHING: FileAlone = { kernels: [], launches: [], smemOptIns: [] };

/**
 * Words without which a file read alone declares no kernel and makes no launch or opt-in (a macro
 * that supplies one is written in the same file, or the file alone cannot see it): most headers
 * have none, and are not parsed at all.
 */
const MAY_DECLARE_OR_LAUNCH = /__global__|<<<|Launch|cudaFuncSetAttribute/;

export function readFileAlone(path: string, text: string, parser: SnippetParser): FileAlone {
  if (!MAY_DECLARE_OR_LAUNCH.test(text)) return NOTHING;
  const doc = documentView(path, text, undefined);
  const tree = parser.parseApart(doc.parseView);
  try {
    const read = unitFacts({ doc, source: makeSourceText(text), tree, parser });
    read.program.dispose();
    return { kernels: read.kernels, launches: read.launches, smemOptIns: read.smemOptIns };
  } finally {
    tree.delete();
  }
}
