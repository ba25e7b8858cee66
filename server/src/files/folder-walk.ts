/**
 * A bounded walk of folders on disk: the workspace's sources and a build's outputs. Folders are read
 * by their real paths, each once however many links lead to it (a link loop, `a -> .`, ends there),
 * a linked folder whose real path lies outside every root (a link to `/`) is not followed, at most
 * `maxDirectories` folders 32 deep are read, and only regular files are handed on.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface FolderWalk {
  /** A folder below a root, by name, that is not read (`node_modules`, `.git`). */
  skipFolder: (name: string) => boolean;
  maxDirectories: number;
  /** What the roots are, for the line about a link out of them ("the workspace"). */
  rootsAre: string;
  /** A regular file; false stops the walk (a limit was reached: the walk is truncated). */
  onFile: (file: string, stat: fs.Stats) => boolean;
  /** A file or folder not read, and why. */
  onSkip: (file: string, reason: string) => void;
}

/** Walks `roots` (files or folders) in sorted order; true when a limit stopped it. */
export function walkFolders(roots: readonly string[], walk: FolderWalk): { truncated: boolean } {
  const visited = new Set<string>();
  const realRoots = roots.map(realPath).filter((r): r is string => r !== null);
  const insideRoots = (real: string) =>
    realRoots.some((root) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
  let truncated = false;
  const visit = (p: string, depth: number): void => {
    if (truncated) return;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(p);
    } catch {
      walk.onSkip(p, 'unreadable');
      return;
    }
    if (stat.isDirectory()) {
      if ((depth > 0 && walk.skipFolder(path.basename(p))) || depth > 32) return;
      const real = realPath(p);
      if (real === null) return;
      if (visited.has(real)) {
        if (depth > 0) walk.onSkip(p, 'a directory already read (a link loop or a second link to it)');
        return;
      }
      if (depth > 0 && !insideRoots(real)) {
        walk.onSkip(p, `a link to ${real}, outside ${walk.rootsAre}`);
        return;
      }
      if (visited.size >= walk.maxDirectories) {
        truncated = true;
        return;
      }
      visited.add(real);
      let entries: string[];
      try {
        entries = fs.readdirSync(p).sort();
      } catch {
        walk.onSkip(p, 'unreadable');
        return;
      }
      for (const entry of entries) visit(path.join(p, entry), depth + 1);
      return;
    }
    if (stat.isFile() && !walk.onFile(p, stat)) truncated = true;
  };
  for (const root of roots) visit(root, 0);
  return { truncated };
}

export function realPath(p: string): string | null {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return null;
  }
}
