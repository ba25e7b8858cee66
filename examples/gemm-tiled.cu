// C = A * B for square n x n matrices (n a multiple of kTile), in kTile x kTile tiles.
#include <cuda_runtime.h>
#include "config.h"

__global__ void __launch_bounds__(kTile * kTile) gemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile + 1];
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n / kTile; ++t) {
    As[threadIdx.y][threadIdx.x] = A[row * n + t * kTile + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * kTile + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = acc;
}

// The same product with the B tile in dynamic shared memory.
__global__ void gemm_dynamic(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
  extern __shared__ float tiles[];
  float* As = tiles;
  float* Bs = tiles + kTile * kTile;
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n / kTile; ++t) {
    As[threadIdx.y * kTile + threadIdx.x] = A[row * n + t * kTile + threadIdx.x];
    Bs[threadIdx.y * kTile + threadIdx.x] = B[(t * kTile + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y * kTile + k] * Bs[k * kTile + threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = acc;
}

void run_gemm(const float* A, const float* B, float* C, int n, cudaStream_t stream) {
  dim3 block(kTile, kTile);
  dim3 grid(n / kTile, n / kTile);
  gemm_tiled<<<grid, block, 0, stream>>>(A, B, C, n);
  gemm_dynamic<<<grid, block, 2 * kTile * kTile * sizeof(float), stream>>>(A, B, C, n);
}
