// Deterministic CUDA sources for the benchmark: tiled GEMM, block reductions, stencils, histograms,
// element-wise and dynamic-shared-memory kernels, each with __launch_bounds__, shared arrays, branches
// on threadIdx, and host code launching them through dim3 / constexpr / #define block sizes.
// The same (seed, lines) always gives the same text.

/** mulberry32: a small seeded PRNG, enough for varied but reproducible sources. */
export function makeRandom(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
  };
}

const TYPES = ['float', 'double', 'int'];

function gemm(r, i) {
  const tile = r.pick([8, 16, 32]);
  const type = r.pick(['float', 'double']);
  const minBlocks = r.pick(['', ', 2', ', 4']);
  return `
// Tiled product C = A * B, ${tile} x ${tile} tiles (unit ${i}).
constexpr int kTile${i} = ${tile};

__global__ void __launch_bounds__(kTile${i} * kTile${i}${minBlocks}) gemm_tiled_${i}(const ${type}* __restrict__ A, const ${type}* __restrict__ B, ${type}* __restrict__ C, int n) {
  __shared__ ${type} As[kTile${i}][kTile${i}];
  __shared__ ${type} Bs[kTile${i}][kTile${i} + 1];
  int row = blockIdx.y * kTile${i} + threadIdx.y;
  int col = blockIdx.x * kTile${i} + threadIdx.x;
  ${type} acc = 0;
  for (int t = 0; t < n / kTile${i}; ++t) {
    As[threadIdx.y][threadIdx.x] = A[row * n + t * kTile${i} + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * kTile${i} + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile${i}; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}

void run_gemm_${i}(const ${type}* A, const ${type}* B, ${type}* C, int n, cudaStream_t stream) {
  dim3 block(kTile${i}, kTile${i});
  dim3 grid((n + kTile${i} - 1) / kTile${i}, (n + kTile${i} - 1) / kTile${i});
  gemm_tiled_${i}<<<grid, block, 0, stream>>>(A, B, C, n);
${
  r.chance(0.5)
    ? `  for (int rep = 0; rep < 4; ++rep) {
    gemm_tiled_${i}<<<grid, block, 0, stream>>>(A, B, C, n);
  }
`
    : ''
}}
`;
}

function reduction(r, i) {
  const threads = r.pick([128, 256, 512, 1024]);
  const bound = r.chance(0.15) ? threads / 2 : threads; // sometimes a launch the bounds forbid
  return `
// Block-wide sum in shared memory, then a warp-level tail (unit ${i}).
#define RED_THREADS_${i} ${threads}

template <int BS>
__global__ void __launch_bounds__(BS, 2) block_sum_${i}(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float buf[BS];
  int t = threadIdx.x;
  int idx = blockIdx.x * BS * 2 + t;
  float v = 0.0f;
  if (idx < n) v = in[idx];
  if (idx + BS < n) v += in[idx + BS];
  buf[t] = v;
  __syncthreads();
  for (int s = BS / 2; s > 32; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t < 32) {
    float w = buf[t] + buf[t + 32];
    for (int off = 16; off > 0; off >>= 1) w += __shfl_down_sync(0xffffffff, w, off);
    if (t == 0) atomicAdd(out, w);
  }
}

__global__ void __launch_bounds__(${bound}) finish_sum_${i}(float* out, const float* partial, int blocks) {
  __shared__ float tail[${bound}];
  int t = threadIdx.x;
  tail[t] = t < blocks ? partial[t] : 0.0f;
  __syncthreads();
  if (t % 2 == 0) {
    tail[t] += tail[t + 1];
  } else {
    tail[t] *= 0.5f;
  }
  __syncthreads();
  if (t == 0) out[0] = tail[0];
}

void run_reduce_${i}(const float* in, float* out, float* partial, int n, cudaStream_t stream) {
  int blocks = (n + 2 * RED_THREADS_${i} - 1) / (2 * RED_THREADS_${i});
  block_sum_${i}<RED_THREADS_${i}><<<blocks, RED_THREADS_${i}, 0, stream>>>(in, partial, n);
  finish_sum_${i}<<<1, RED_THREADS_${i}, 0, stream>>>(out, partial, blocks);
}
`;
}

function stencil(r, i) {
  const x = r.pick([16, 32, 64]);
  const y = r.pick([4, 8, 16]);
  const radius = r.pick([1, 2, 4]);
  return `
// A ${2 * radius + 1}-point stencil along x with a halo in shared memory (unit ${i}).
constexpr int kStencilX${i} = ${x};
constexpr int kStencilY${i} = ${y};
constexpr int kRadius${i} = ${radius};
__constant__ float c_weights_${i}[2 * kRadius${i} + 1];

__global__ void __launch_bounds__(kStencilX${i} * kStencilY${i}) stencil_x_${i}(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
  __shared__ float tile[kStencilY${i}][kStencilX${i} + 2 * kRadius${i}];
  int x = blockIdx.x * kStencilX${i} + threadIdx.x;
  int y = blockIdx.y * kStencilY${i} + threadIdx.y;
  bool inside = x < nx && y < ny;
  tile[threadIdx.y][threadIdx.x + kRadius${i}] = inside ? in[y * nx + x] : 0.0f;
  if (threadIdx.x < kRadius${i}) {
    int left = x - kRadius${i};
    int right = x + kStencilX${i};
    tile[threadIdx.y][threadIdx.x] = (left >= 0 && y < ny) ? in[y * nx + left] : 0.0f;
    tile[threadIdx.y][threadIdx.x + kStencilX${i} + kRadius${i}] = (right < nx && y < ny) ? in[y * nx + right] : 0.0f;
  }
  __syncthreads();
  if (!inside) return;
  float sum = 0.0f;
#pragma unroll
  for (int k = -kRadius${i}; k <= kRadius${i}; ++k) sum += c_weights_${i}[k + kRadius${i}] * tile[threadIdx.y][threadIdx.x + kRadius${i} + k];
  out[y * nx + x] = sum;
}

void run_stencil_${i}(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  dim3 block(kStencilX${i}, kStencilY${i});
  dim3 grid((nx + kStencilX${i} - 1) / kStencilX${i}, (ny + kStencilY${i} - 1) / kStencilY${i});
  stencil_x_${i}<<<grid, block, 0, stream>>>(in, out, nx, ny);
  stencil_x_${i}<<<grid, block, 0, stream>>>(out, out, nx, ny);
}
`;
}

function histogram(r, i) {
  const bins = r.pick([64, 128, 256]);
  const threads = r.pick([128, 256, 512]);
  return `
// Shared-memory histogram with per-block privatisation (unit ${i}).
#define HIST_BINS_${i} ${bins}
static constexpr unsigned kHistThreads${i} = ${threads};

__global__ void __launch_bounds__(kHistThreads${i}) histogram_${i}(const unsigned char* __restrict__ data, unsigned* __restrict__ bins, int n) {
  __shared__ unsigned local[HIST_BINS_${i}];
  for (int b = threadIdx.x; b < HIST_BINS_${i}; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
    atomicAdd(&local[data[k] % HIST_BINS_${i}], 1u);
  }
  __syncthreads();
  if (threadIdx.x < HIST_BINS_${i}) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

void run_histogram_${i}(const unsigned char* data, unsigned* bins, int n, int sms, cudaStream_t stream) {
  const int blocks = sms * 4;
  histogram_${i}<<<blocks, kHistThreads${i}, 0, stream>>>(data, bins, n);
}
`;
}

function elementwise(r, i) {
  const bound = r.pick([128, 256, 512]);
  const launched = r.chance(0.2) ? bound * 2 : bound; // a launch that fails now and then
  const type = r.pick(TYPES);
  return `
// y = a * x + y, grid-stride (unit ${i}).
__global__ void __launch_bounds__(${bound}) saxpy_${i}(int n, ${type} a, const ${type}* __restrict__ x, ${type}* __restrict__ y) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
    y[k] = a * x[k] + y[k];
  }
}

void run_saxpy_${i}(int n, ${type} a, const ${type}* x, ${type}* y) {
  const int threads = ${launched};
  saxpy_${i}<<<(n + threads - 1) / threads, threads>>>(n, a, x, y);
}
`;
}

function dynamicSmem(r, i) {
  const threads = r.pick([128, 256]);
  const items = r.pick([4, 8, 16]);
  const optIn = r.chance(0.5);
  return `
// Transpose-and-scale through dynamic shared memory (unit ${i}).
__global__ void __launch_bounds__(${threads}) scale_dyn_${i}(float* data, float s, int n) {
  extern __shared__ float staged[];
  int t = threadIdx.x;
  int base = blockIdx.x * ${threads} * ${items};
  for (int k = 0; k < ${items}; ++k) {
    int g = base + k * ${threads} + t;
    staged[k * ${threads} + t] = g < n ? data[g] * s : 0.0f;
  }
  __syncthreads();
  if (t < 32) {
    for (int k = 0; k < ${items}; ++k) staged[k * ${threads} + t] += staged[k * ${threads} + 31 - t];
  }
  __syncthreads();
  for (int k = 0; k < ${items}; ++k) {
    int g = base + k * ${threads} + t;
    if (g < n) data[g] = staged[k * ${threads} + t];
  }
}

void run_scale_dyn_${i}(float* data, float s, int n, cudaStream_t stream) {
  const size_t smem = ${threads} * ${items} * sizeof(float);
${
  optIn
    ? `  cudaFuncSetAttribute(scale_dyn_${i}, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
`
    : ''
}  dim3 block(${threads});
  dim3 grid((n + ${threads * items} - 1) / ${threads * items});
  scale_dyn_${i}<<<grid, block, smem, stream>>>(data, s, n);
}
`;
}

const UNITS = [gemm, reduction, stencil, histogram, elementwise, dynamicSmem];

/**
 * A CUDA source of at least `lines` lines. Returns the text, its line count, the positions of every
 * launch's kernel name (hover targets) and of statement lines where a one-character edit keeps the
 * file valid (edit targets).
 */
export function generateCudaSource({ seed, lines }) {
  const r = makeRandom(seed);
  const parts = [
    `// Generated by scripts/bench/generate-cuda.mjs (seed ${seed}, ~${lines} lines). Do not edit.\n#include <cuda_runtime.h>\n`,
  ];
  let count = 2;
  for (let i = 0; count < lines; i++) {
    const unit = r.pick(UNITS)(r, i);
    parts.push(unit);
    count += unit.split('\n').length - 1;
  }
  const text = parts.join('');
  const all = text.split('\n');
  const launches = [];
  const edits = [];
  all.forEach((line, row) => {
    const launch = /^(\s*)([A-Za-z_]\w*)(?:<[^<>]*>)?<<</.exec(line);
    if (launch) launches.push({ line: row, character: launch[1].length + 1 });
    if (/^ {2,}\S.*;$/.test(line) && !line.includes('<<<'))
      edits.push({ line: row, character: line.length - line.trimStart().length });
  });
  return { text, lineCount: all.length, launches, edits };
}
