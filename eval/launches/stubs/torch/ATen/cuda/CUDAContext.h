// Host-only stand-in for the one PyTorch header DeepSpeed's context.h needs (launch evaluation):
// the two stream getters it calls, declared only. No device code comes from PyTorch here.
#pragma once
#include <cuda_runtime.h>
namespace at {
namespace cuda {
cudaStream_t getCurrentCUDAStream(int device = -1);
cudaStream_t getStreamFromPool(bool high_priority = false, int device = -1);
}  // namespace cuda
}  // namespace at
