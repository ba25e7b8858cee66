/** Which nvcc to run: the configured path, else $CUDA_HOME/bin, /usr/local/cuda/bin, then whatever PATH finds. */
import { existsSync } from 'node:fs';
import * as path from 'node:path';

export function locateNvcc(configured: string | null | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (configured && configured.trim()) return configured.trim();
  const exe = process.platform === 'win32' ? 'nvcc.exe' : 'nvcc';
  for (const home of [env.CUDA_HOME, env.CUDA_PATH, '/usr/local/cuda']) {
    if (home && existsSync(path.join(home, 'bin', exe))) return path.join(home, 'bin', exe);
  }
  return exe; // found on PATH by spawn, or reported missing
}
