// A synthetic CUDA repository of N files, for measuring `check` at repository scale (docs/performance.md,
// "Streaming at 100k files"): nested folders of `.cu` files with kernels and launches, and shared `.cuh`
// headers with `__device__` helpers, constants and kernels launched from other folders. Seeded: the
// same N writes the same tree.
//
//   node scripts/gen-repo.mjs N DIR      (DIR must not exist, or be empty; keep it outside the repository)
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRandom } from './bench/generate-cuda.mjs';

/** One header per this many files; the rest are units. */
const FILES_PER_HEADER = 8;
/** Files per leaf folder, and leaf folders per parent. */
const PER_FOLDER = 50;
const FOLDERS_PER_PARENT = 20;

/**
 * The relative path of file `k` of the tree: `mod{a}/part{b}/` folders of PER_FOLDER files each; every
 * FILES_PER_HEADER-th file is a header.
 */
export function repoFilePath(k) {
  const folder = Math.floor(k / PER_FOLDER);
  const dir = `mod${String(Math.floor(folder / FOLDERS_PER_PARENT)).padStart(3, '0')}/part${String(folder % FOLDERS_PER_PARENT).padStart(2, '0')}`;
  const name = k % FILES_PER_HEADER === 0 ? `common${k}.cuh` : `unit${k}.cu`;
  return `${dir}/${name}`;
}

function headerText(k, random) {
  const tile = [64, 128, 256][k % 3];
  const guard = `COMMON${k}_CUH`;
  return `#pragma once
#ifndef ${guard}
#define ${guard}
#define TILE_${k} ${tile}
constexpr int kWarps${k} = ${1 + (k % 4)};
__constant__ float coeffs${k}[${4 + (k % 5)}];

__device__ __forceinline__ float mix${k}(float a, float b) {
  return a * ${random.int(2, 9)}.0f + b * coeffs${k}[0];
}

__device__ float reduceWarp${k}(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) shared${k}(const float* in, float* out, int n) {
  __shared__ float tile[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x < 32) out[blockIdx.x] = reduceWarp${k}(tile[threadIdx.x]);
}
#endif
`;
}

function unitText(k, random) {
  const header = k - (k % FILES_PER_HEADER);
  // A header of another folder now and then, reached by a relative path: launches across folders.
  const far = header >= PER_FOLDER * 2 && random.int(0, 3) === 0 ? header - PER_FOLDER * 2 : null;
  const threads = [96, 128, 256, 512, 1024][random.int(0, 4)];
  const bounds = [128, 256, 512][random.int(0, 2)];
  const lines = [
    `#include "${relativeTo(repoFilePath(k), repoFilePath(header))}"`,
    ...(far !== null ? [`#include "${relativeTo(repoFilePath(k), repoFilePath(far))}"`] : []),
    '',
    `__global__ void __launch_bounds__(${bounds}) scale${k}(float* data, int n, float alpha) {`,
    '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
    '  if (i < n) {',
    `    data[i] = mix${header}(data[i], alpha);`,
    '  }',
    '  if (threadIdx.x % 2 == 0) {',
    '    data[i] *= 2.0f;',
    '  }',
    '}',
    '',
    `__global__ void stencil${k}(const float* in, float* out, int n) {`,
    `  __shared__ float halo[TILE_${header} + 2];`,
    '  int i = blockIdx.x * blockDim.x + threadIdx.x;',
    '  halo[threadIdx.x + 1] = in[i];',
    '  __syncthreads();',
    `  for (int w = 0; w < kWarps${header}; ++w) out[i] += halo[threadIdx.x] * coeffs${header}[w];`,
    '}',
    '',
    `void run${k}(float* d, const float* in, float* out, int n, cudaStream_t s) {`,
    `  scale${k}<<<(n + ${threads - 1}) / ${threads}, ${threads}, 0, s>>>(d, n, 0.5f);`,
    `  stencil${k}<<<n / TILE_${header}, TILE_${header}>>>(in, out, n);`,
    `  shared${header}<256><<<n / 256, 256>>>(in, out, n);`,
    ...(far !== null ? [`  shared${far}<128><<<n / 128, 128>>>(in, out, n);`] : []),
    '}',
    '',
  ];
  return lines.join('\n');
}

function relativeTo(from, to) {
  const a = from.split('/').slice(0, -1);
  const b = to.split('/');
  let same = 0;
  while (same < a.length && same < b.length - 1 && a[same] === b[same]) same++;
  return [...a.slice(same).map(() => '..'), ...b.slice(same)].join('/');
}

/** Writes the N files of the tree under `dir`; returns their total size in bytes. */
export function writeRepo(n, dir) {
  const random = makeRandom(n);
  let bytes = 0;
  for (let k = 0; k < n; k++) {
    const file = join(dir, repoFilePath(k));
    if (k % PER_FOLDER === 0) mkdirSync(join(file, '..'), { recursive: true });
    const text = k % FILES_PER_HEADER === 0 ? headerText(k, random) : unitText(k, random);
    writeFileSync(file, text);
    bytes += Buffer.byteLength(text);
  }
  return bytes;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [n, dir] = [Number(process.argv[2]), process.argv[3]];
  if (!Number.isInteger(n) || n < 1 || !dir) {
    console.error('usage: node scripts/gen-repo.mjs N DIR');
    process.exit(2);
  }
  if (existsSync(dir) && readdirSync(dir).length) {
    console.error(`${dir} is not empty`);
    process.exit(2);
  }
  const bytes = writeRepo(n, dir);
  console.log(`${n} files, ${(bytes / 1e6).toFixed(1)} MB under ${dir}`);
}
