/**
 * What every unit's preprocessor knows of the toolkit before reading a file: the host platform, and
 * the CUDA version of the nvcc that compiles it (`__CUDACC_VER_MAJOR__`, `CUDART_VERSION`). Without
 * nvcc the version stays unknown, and `#if CUDART_VERSION >= 11000` keeps both arms possible.
 */
import type { Toolchain } from '../core/analyzer';
import { nvccVersion } from './nvcc-runner';

/** The host platform alone (the CUDA version not known). */
export function hostToolchain(): Toolchain {
  const platform =
    process.platform === 'linux' || process.platform === 'win32' || process.platform === 'darwin'
      ? process.platform
      : null;
  return { platform, cuda: null };
}

export async function toolchainOf(nvccPath: string | null): Promise<Toolchain> {
  const { platform } = hostToolchain();
  const version = nvccPath ? await nvccVersion(nvccPath) : null;
  const release = version && version !== 'missing' ? /^(\d+)\.(\d+)$/.exec(version.release) : null;
  return { platform, cuda: release ? { major: Number(release[1]), minor: Number(release[2]) } : null };
}
