/**
 * The files of a project a translation unit may include beyond those indexed: listed once (the
 * same bounded walk as the workspace's), read when an include names one, each read bounded and
 * kept. The preprocessor finds `#include "custom_layers.h"` of a file checked alone this way, as a
 * build's `-I` would.
 */
import * as path from 'node:path';
import { listSourceFiles, toIndexPath } from './workspace-files';
import { readBoundedFileSync } from './bounded-read';

export interface ProjectFiles {
  read(file: string): string | null;
  withTail(tail: string): string[];
}

/** At most this many files are listed (a repository's sources; the rest are not found by their tail). */
const MAX_FILES = 20_000;
const MAX_BYTES = 1024 * 1024;

export function projectFiles(root: string): ProjectFiles {
  const listed = listSourceFiles([root], { maxFiles: MAX_FILES, maxFileBytes: MAX_BYTES }).files.map(toIndexPath);
  const byName = new Map<string, string[]>();
  for (const p of listed) {
    const name = p.slice(p.lastIndexOf('/') + 1);
    const list = byName.get(name);
    if (list) list.push(p);
    else byName.set(name, [p]);
  }
  const known = new Set(listed);
  const texts = new Map<string, string | null>();
  return {
    read(file) {
      if (!known.has(file)) return null;
      if (!texts.has(file)) {
        try {
          texts.set(file, readBoundedFileSync(file, { maxBytes: MAX_BYTES }).text);
        } catch {
          texts.set(file, null);
        }
      }
      return texts.get(file) ?? null;
    },
    withTail(tail) {
      const wanted = '/' + tail.replace(/^(\.\.\/)+/, '');
      return byName.get(path.posix.basename(wanted))?.filter((p) => p.endsWith(wanted)) ?? [];
    },
  };
}
