/**
 * Which nvcc to run: the configured path, else $CUDA_HOME/bin, /usr/local/cuda/bin, then whatever PATH finds.
 * A path the workspace configures runs only when it matches the user's allow-list (argument-policy.ts).
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { allowedCompilerPath } from './argument-policy';

export function locateNvcc(configured: string | null | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (configured && configured.trim()) return configured.trim();
  const exe = process.platform === 'win32' ? 'nvcc.exe' : 'nvcc';
  for (const home of [env.CUDA_HOME, env.CUDA_PATH, '/usr/local/cuda']) {
    if (home && existsSync(path.join(home, 'bin', exe))) return path.join(home, 'bin', exe);
  }
  return exe; // found on PATH by spawn, or reported missing
}

/**
 * The nvcc to run, given where `nvcc.path` was set: the user's own setting as it is; the workspace's only when
 * it matches `allowedCompilers` (else the default, with a note saying why).
 */
export function chooseNvcc(options: {
  configured: string;
  fromWorkspace: boolean;
  allowedCompilers: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string | null;
}): { nvccPath: string; note: string | null } {
  const configured = options.configured.trim();
  if (!configured || !options.fromWorkspace) return { nvccPath: locateNvcc(configured, options.env), note: null };
  const allowed = allowedCompilerPath(configured, options.cwd ?? null, {
    allowedCompilers: expandHome(options.allowedCompilers),
    findOnPath: (name) => findOnPath(name, options.env),
  });
  if (allowed) return { nvccPath: allowed, note: null };
  return {
    nvccPath: locateNvcc('', options.env),
    note: `cudaOccupancy.nvcc.path \`${configured}\` from the workspace settings is not in cudaOccupancy.nvcc.allowedCompilers (user settings): using ${locateNvcc('', options.env)}`,
  };
}

/** An executable named `name` in a directory of PATH (absolute directories only), or null. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (!name || name.includes('/') || name.includes('\\') || name.includes('\0')) return null;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue; // an empty or relative entry would search the workspace
    const candidate = path.join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** `~/x` in an allow-list entry is the home directory's. */
export function expandHome(globs: readonly string[]): string[] {
  return globs.map((g) => (g === '~' || g.startsWith('~/') ? path.join(os.homedir(), g.slice(1)) : g));
}
