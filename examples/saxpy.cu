// y = a * x + y, one element per thread, with a tail guard.
#include <cuda_runtime.h>
#include "config.h"

__global__ void __launch_bounds__(SAXPY_THREADS) saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {  // tail guard: splits at most the last warp
    y[i] = a * x[i] + y[i];
  }
}

// A grid-stride variant: any grid size covers any n.
__global__ void saxpy_grid_stride(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    y[i] = a * x[i] + y[i];
  }
}

void run_saxpy(int n, float a, const float* x, float* y, cudaStream_t stream) {
  saxpy<<<(n + SAXPY_THREADS - 1) / SAXPY_THREADS, SAXPY_THREADS, 0, stream>>>(n, a, x, y);
  // 100 threads: the fourth warp runs with 4 of its 32 lanes.
  saxpy_grid_stride<<<160, 100, 0, stream>>>(n, a, x, y);
}
