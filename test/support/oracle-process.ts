/**
 * NVIDIA's own occupancy calculator for the tests to compare with: test/oracle/occupancy-reference.cpp,
 * a small C++ driver around the CUDA toolkit's header-only cuda_occupancy.h, compiled with g++
 * once per source and header (kept in the temporary folder), and run over a batch of question
 * lines. Without a CUDA toolkit there is no header, and the tests that need it say so and skip.
 */

import { createHash } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CacheConfig, PartitionedGCConfig, ShmemLimitConfig } from '../../server/src/core/gpu/occupancy';
import type { DeviceProps } from '../../server/src/core/gpu/arch-table';

/** The repository root, from out/test/support/. */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');
const DRIVER_SOURCE = path.join(repoRoot, 'test', 'oracle', 'occupancy-reference.cpp');

/** Where cuda_occupancy.h is: $CUDA_INCLUDE, /usr/local/cuda/include, $CUDA_HOME/include, $CUDA_PATH/include. */
export function findOccupancyHeader(): string | null {
  const dirs = [
    process.env.CUDA_INCLUDE,
    '/usr/local/cuda/include',
    process.env.CUDA_HOME && path.join(process.env.CUDA_HOME, 'include'),
    process.env.CUDA_PATH && path.join(process.env.CUDA_PATH, 'include'),
  ];
  for (const dir of dirs)
    if (dir && fs.existsSync(path.join(dir, 'cuda_occupancy.h'))) return path.join(dir, 'cuda_occupancy.h');
  return null;
}

export type OracleBuild = { ok: true; binary: string; header: string } | { ok: false; reason: string };

/**
 * Compiles the driver, or reuses the binary built from the same source and header. Returns a
 * reason instead of a binary only when a prerequisite is missing (the header or g++); a
 * compile error throws.
 */
export function buildOracle(): OracleBuild {
  const header = findOccupancyHeader();
  if (!header)
    return {
      ok: false,
      reason:
        'no CUDA toolkit here: cuda_occupancy.h is in none of $CUDA_INCLUDE, /usr/local/cuda/include, $CUDA_HOME/include, $CUDA_PATH/include',
    };
  const compiler = process.env.CXX ?? 'g++';
  try {
    execFileSync(compiler, ['--version'], { stdio: 'ignore' });
  } catch {
    return { ok: false, reason: `no C++ compiler: \`${compiler}\` does not run (set CXX)` };
  }
  const key = createHash('sha256')
    .update(fs.readFileSync(DRIVER_SOURCE))
    .update(fs.readFileSync(header))
    .digest('hex')
    .slice(0, 16);
  const binary = path.join(os.tmpdir(), `cuda-occupancy-reference-${key}`, 'occupancy-reference');
  if (!fs.existsSync(binary)) {
    fs.mkdirSync(path.dirname(binary), { recursive: true });
    const partial = `${binary}.${process.pid}`;
    try {
      execFileSync(compiler, ['-std=c++17', '-O2', '-Wall', '-I', path.dirname(header), '-o', partial, DRIVER_SOURCE], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      throw new Error(
        `compiling ${DRIVER_SOURCE} against ${header} failed: ${String((e as { stderr?: Buffer }).stderr ?? e)}`,
        { cause: e },
      );
    }
    fs.renameSync(partial, binary);
  }
  return { ok: true, binary, header };
}

/** Runs the driver once over `lines` and returns its answer lines, in order. */
export function runOracle(binary: string, lines: readonly string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    const errors: Buffer[] = [];
    proc.stdout.on('data', (c: Buffer) => chunks.push(c));
    proc.stderr.on('data', (c: Buffer) => errors.push(c));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`the reference exited with ${code}: ${Buffer.concat(errors).toString()}`));
        return;
      }
      resolve(Buffer.concat(chunks).toString('utf8').split('\n').slice(0, -1));
    });
    proc.stdin.end(`${lines.join('\n')}\n`);
  });
}

// ---------------------------------------------------------------------------
// The driver's line protocol (see the top of occupancy-reference.cpp)
// ---------------------------------------------------------------------------

/** The header's inputs as our calculator resolved them (the protocol's `effective` object). */
export interface HeaderInputs {
  device: DeviceProps;
  attributes: {
    maxThreadsPerBlock: number;
    numRegs: number;
    sharedSizeBytes: number;
    partitionedGCConfig: PartitionedGCConfig;
    shmemLimitConfig: ShmemLimitConfig;
    maxDynamicSharedSizeBytes: number;
    numBlockBarriers: number;
    virtualResourceCount: number;
  };
  state: { cacheConfig: CacheConfig; carveout: number };
}

const PARTITIONED: PartitionedGCConfig[] = ['off', 'on', 'on_strict'];
const SHMEM_LIMIT: ShmemLimitConfig[] = ['default', 'optin'];
const CACHE: CacheConfig[] = ['none', 'shared', 'l1', 'equal'];
export const HEADER_ERRORS = ['', 'CUDA_OCC_ERROR_INVALID_INPUT', 'CUDA_OCC_ERROR_UNKNOWN_DEVICE'];

export function deviceWords(d: DeviceProps): number[] {
  return [
    d.computeMajor,
    d.computeMinor,
    d.maxThreadsPerBlock,
    d.maxThreadsPerMultiprocessor,
    d.regsPerBlock,
    d.regsPerMultiprocessor,
    d.warpSize,
    d.sharedMemPerBlock,
    d.sharedMemPerMultiprocessor,
    d.numSms,
    d.sharedMemPerBlockOptin,
    d.reservedSharedMemPerBlock,
  ];
}

export function inputWords({ device, attributes: a, state: s }: HeaderInputs): number[] {
  return [
    ...deviceWords(device),
    a.maxThreadsPerBlock,
    a.numRegs,
    a.sharedSizeBytes,
    PARTITIONED.indexOf(a.partitionedGCConfig),
    SHMEM_LIMIT.indexOf(a.shmemLimitConfig),
    a.maxDynamicSharedSizeBytes,
    a.numBlockBarriers,
    a.virtualResourceCount,
    CACHE.indexOf(s.cacheConfig),
    s.carveout,
  ];
}

export const partitionedName = (n: number): PartitionedGCConfig => PARTITIONED[n];
