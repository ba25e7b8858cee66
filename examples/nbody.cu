// All-pairs gravitational forces. Each thread integrates kBodies bodies against a
// tile of bodies staged in shared memory: many live values per thread make
// registers, not warps, the binding ceiling.
#include <cuda_runtime.h>

constexpr int kTile = 256;
constexpr int kBodies = 4;
constexpr float kSoftening = 1e-9f;

__global__ void nbody_forces(const float4* __restrict__ pos, float4* __restrict__ vel, int n, float dt) {
  __shared__ float4 tile[kTile];
  int first = (blockIdx.x * blockDim.x + threadIdx.x) * kBodies;
  float4 me[kBodies];
  float ax[kBodies] = {}, ay[kBodies] = {}, az[kBodies] = {};
#pragma unroll
  for (int b = 0; b < kBodies; ++b) me[b] = first + b < n ? pos[first + b] : make_float4(0.f, 0.f, 0.f, 0.f);
  for (int base = 0; base < n; base += kTile) {
    int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < kTile; ++k) {
      float4 other = tile[k];
#pragma unroll
      for (int b = 0; b < kBodies; ++b) {
        float dx = other.x - me[b].x, dy = other.y - me[b].y, dz = other.z - me[b].z;
        float inv = rsqrtf(dx * dx + dy * dy + dz * dz + kSoftening);
        float s = other.w * inv * inv * inv;
        ax[b] += dx * s;
        ay[b] += dy * s;
        az[b] += dz * s;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int b = 0; b < kBodies; ++b) {
    if (first + b < n) {
      float4 v = vel[first + b];
      v.x += ax[b] * dt;
      v.y += ay[b] * dt;
      v.z += az[b] * dt;
      vel[first + b] = v;
    }
  }
}

void step(const float4* pos, float4* vel, int n, float dt, cudaStream_t stream) {
  int threads = (n + kBodies - 1) / kBodies;
  nbody_forces<<<(threads + kTile - 1) / kTile, kTile, 0, stream>>>(pos, vel, n, dt);
}
