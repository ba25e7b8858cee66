// A 9-point 1-D stencil along x on a 2-D grid, with a halo in shared memory.
#include <cuda_runtime.h>
#include "config.h"

__constant__ float c_weights[2 * kRadius + 1];

__global__ void __launch_bounds__(kStencilX * kStencilY) stencil_x(const float* __restrict__ in, float* __restrict__ out, int nx, int ny) {
  __shared__ float tile[kStencilY][kStencilX + 2 * kRadius];
  int x = blockIdx.x * kStencilX + threadIdx.x;
  int y = blockIdx.y * kStencilY + threadIdx.y;
  bool inside = x < nx && y < ny;
  tile[threadIdx.y][threadIdx.x + kRadius] = inside ? in[y * nx + x] : 0.0f;
  // Only the first kRadius lanes of each row load the halo.
  if (threadIdx.x < kRadius) {
    int left = x - kRadius;
    int right = x + kStencilX;
    tile[threadIdx.y][threadIdx.x] = (left >= 0 && y < ny) ? in[y * nx + left] : 0.0f;
    tile[threadIdx.y][threadIdx.x + kStencilX + kRadius] = (right < nx && y < ny) ? in[y * nx + right] : 0.0f;
  }
  __syncthreads();
  if (!inside) return;
  float sum = 0.0f;
#pragma unroll
  for (int k = -kRadius; k <= kRadius; ++k) sum += c_weights[k + kRadius] * tile[threadIdx.y][threadIdx.x + kRadius + k];
  out[y * nx + x] = sum;
}

void run_stencil(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  dim3 block(kStencilX, kStencilY);
  dim3 grid((nx + kStencilX - 1) / kStencilX, (ny + kStencilY - 1) / kStencilY);
  stencil_x<<<grid, block, 0, stream>>>(in, out, nx, ny);
}
