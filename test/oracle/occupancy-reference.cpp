// The reference for the differential test (test/unit/oracle-differential.test.ts): NVIDIA's
// occupancy calculator, the header-only cuda_occupancy.h of the CUDA toolkit, behind a line
// protocol of plain integers. It needs no GPU and no CUDA runtime: the header is host C++.
//
// One question per input line, one answer line per question, in order. A question is a word
// and integers; the header's inputs come in this order (enums as their integer values):
//
//   device (12):     computeMajor computeMinor maxThreadsPerBlock maxThreadsPerMultiprocessor
//                    regsPerBlock regsPerMultiprocessor warpSize sharedMemPerBlock
//                    sharedMemPerMultiprocessor numSms sharedMemPerBlockOptin reservedSharedMemPerBlock
//   attributes (8):  maxThreadsPerBlock numRegs sharedSizeBytes partitionedGCConfig shmemLimitConfig
//                    maxDynamicSharedSizeBytes numBlockBarriers virtualResourceCount
//   state (2):       cacheConfig carveoutConfig
//
//   occupancy      DEVICE ATTRIBUTES STATE blockSize dynamicSmemBytes
//     -> status activeBlocks limitingFactors blockLimitRegs blockLimitSharedMem blockLimitWarps
//        blockLimitBlocks blockLimitBarriers blockLimitVirtual allocatedRegistersPerBlock
//        allocatedSharedMemPerBlock partitionedGCConfig
//   maxPotential   DEVICE ATTRIBUTES STATE dynamicSmemBytes dynamicSmemPerThreadBytes
//     -> status minGridSize blockSize       (the VariableSMem variant when per-thread bytes > 0)
//   availableSmem  DEVICE ATTRIBUTES STATE numBlocks blockSize
//     -> status bytes
//   constants      DEVICE
//     -> status smemAllocationGranularity regAllocationGranularity maxRegsPerThread
//        subPartitionsPerMultiprocessor maxBlocksPerMultiprocessor maxVirtualResourcesPerMultiprocessor
//        partitionedGlobalCachingSupported barriersPerBlockSlot barrierLimitApplied
//        carveoutConfigurable defaultSharedMemPerMultiprocessor carveoutKB...
//   version        -> __CUDA_OCC_MAJOR__ __CUDA_OCC_MINOR__
//
// status is the header's cudaOccError (0 success, 1 invalid input, 2 unknown device); after a
// non-zero status nothing else follows. A line it cannot read gets "bad" and the rest is read on.
#include <cuda_occupancy.h>

#include <climits>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

bool readDevice(std::istream &in, cudaOccDeviceProp &d) {
  long long v[12];
  for (long long &x : v)
    if (!(in >> x)) return false;
  d.computeMajor = int(v[0]);
  d.computeMinor = int(v[1]);
  d.maxThreadsPerBlock = int(v[2]);
  d.maxThreadsPerMultiprocessor = int(v[3]);
  d.regsPerBlock = int(v[4]);
  d.regsPerMultiprocessor = int(v[5]);
  d.warpSize = int(v[6]);
  d.sharedMemPerBlock = size_t(v[7]);
  d.sharedMemPerMultiprocessor = size_t(v[8]);
  d.numSms = int(v[9]);
  d.sharedMemPerBlockOptin = size_t(v[10]);
  d.reservedSharedMemPerBlock = size_t(v[11]);
  return true;
}

bool readAttributes(std::istream &in, cudaOccFuncAttributes &a) {
  long long v[8];
  for (long long &x : v)
    if (!(in >> x)) return false;
  a.maxThreadsPerBlock = int(v[0]);
  a.numRegs = int(v[1]);
  a.sharedSizeBytes = size_t(v[2]);
  a.partitionedGCConfig = cudaOccPartitionedGCConfig(v[3]);
  a.shmemLimitConfig = cudaOccFuncShmemConfig(v[4]);
  a.maxDynamicSharedSizeBytes = size_t(v[5]);
  a.numBlockBarriers = int(v[6]);
  a.virtualResourceCount = int(v[7]);
  return true;
}

bool readState(std::istream &in, cudaOccDeviceState &s) {
  long long cache, carveout;
  if (!(in >> cache >> carveout)) return false;
  s.cacheConfig = cudaOccCacheConfig(cache);
  s.carveoutConfig = int(carveout);
  return true;
}

struct PerThreadSmem {
  size_t fixed, perThread;
  size_t operator()(int blockSize) const { return fixed + perThread * size_t(blockSize); }
};

std::string occupancy(std::istream &in) {
  cudaOccDeviceProp d;
  cudaOccFuncAttributes a;
  cudaOccDeviceState s;
  long long blockSize, dynamicSmem;
  if (!readDevice(in, d) || !readAttributes(in, a) || !readState(in, s) || !(in >> blockSize >> dynamicSmem)) return "bad";
  cudaOccResult r;
  cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &d, &a, &s, int(blockSize), size_t(dynamicSmem));
  std::ostringstream out;
  out << int(status);
  if (status == CUDA_OCC_SUCCESS)
    out << ' ' << r.activeBlocksPerMultiprocessor << ' ' << r.limitingFactors << ' ' << r.blockLimitRegs << ' '
        << r.blockLimitSharedMem << ' ' << r.blockLimitWarps << ' ' << r.blockLimitBlocks << ' ' << r.blockLimitBarriers
        << ' ' << r.blockLimitVirtual << ' ' << r.allocatedRegistersPerBlock << ' ' << r.allocatedSharedMemPerBlock << ' '
        << int(r.partitionedGCConfig);
  return out.str();
}

std::string maxPotential(std::istream &in) {
  cudaOccDeviceProp d;
  cudaOccFuncAttributes a;
  cudaOccDeviceState s;
  long long dynamicSmem, perThread;
  if (!readDevice(in, d) || !readAttributes(in, a) || !readState(in, s) || !(in >> dynamicSmem >> perThread)) return "bad";
  int minGridSize = 0, blockSize = 0;
  cudaOccError status = perThread > 0
      ? cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(&minGridSize, &blockSize, &d, &a, &s, PerThreadSmem{size_t(dynamicSmem), size_t(perThread)})
      : cudaOccMaxPotentialOccupancyBlockSize(&minGridSize, &blockSize, &d, &a, &s, size_t(dynamicSmem));
  std::ostringstream out;
  out << int(status);
  if (status == CUDA_OCC_SUCCESS) out << ' ' << minGridSize << ' ' << blockSize;
  return out.str();
}

std::string availableSmem(std::istream &in) {
  cudaOccDeviceProp d;
  cudaOccFuncAttributes a;
  cudaOccDeviceState s;
  long long numBlocks, blockSize;
  if (!readDevice(in, d) || !readAttributes(in, a) || !readState(in, s) || !(in >> numBlocks >> blockSize)) return "bad";
  size_t bytes = 0;
  cudaOccError status = cudaOccAvailableDynamicSMemPerBlock(&bytes, &d, &a, &s, int(numBlocks), int(blockSize));
  std::ostringstream out;
  out << int(status);
  if (status == CUDA_OCC_SUCCESS) out << ' ' << bytes;
  return out.str();
}

// The constants the header keeps per architecture, asked of its own helpers; the carveout steps
// by rounding up each size past the last step, until the header refuses.
std::string constants(std::istream &in) {
  cudaOccDeviceProp d;
  if (!readDevice(in, d)) return "bad";
  int smemGranularity = 0, regGranularity = 0, maxRegs = 0, subPartitions = 0, maxBlocks = 0, maxVirtual = 0;
  cudaOccPartitionedGCSupport partitioned = PARTITIONED_GC_NOT_SUPPORTED;
  cudaOccError status = CUDA_OCC_SUCCESS;
  for (cudaOccError e : {cudaOccSMemAllocationGranularity(&smemGranularity, &d), cudaOccRegAllocationGranularity(&regGranularity, &d),
                         cudaOccRegAllocationMaxPerThread(&maxRegs, &d), cudaOccSubPartitionsPerMultiprocessor(&subPartitions, &d),
                         cudaOccMaxBlocksPerMultiprocessor(&maxBlocks, &d), cudaOccMaxVirtualResourceCountPerSM(&maxVirtual, &d),
                         cudaOccPartitionedGlobalCachingModeSupport(&partitioned, &d)})
    if (status == CUDA_OCC_SUCCESS) status = e;
  cudaOccFuncAttributes oneBarrier;
  oneBarrier.numBlockBarriers = 1;
  int barriersPerSlot = 0;
  if (status == CUDA_OCC_SUCCESS) status = cudaOccMaxBlocksPerSMBlockBarrierLimit(&barriersPerSlot, 1, &d, &oneBarrier);
  cudaOccDeviceState defaults, noCarveout;
  noCarveout.carveoutConfig = 0;
  size_t defaultSmem = 0, smemAtZero = 0;
  if (status == CUDA_OCC_SUCCESS) status = cudaOccSMemPerMultiprocessor(&defaultSmem, &d, &defaults);
  if (status == CUDA_OCC_SUCCESS) status = cudaOccSMemPerMultiprocessor(&smemAtZero, &d, &noCarveout);
  // Whether the barrier limit is applied at all: a one-warp block with one barrier.
  cudaOccResult r;
  cudaOccFuncAttributes plain;
  plain.maxThreadsPerBlock = d.maxThreadsPerBlock;
  plain.numBlockBarriers = 1;
  if (status == CUDA_OCC_SUCCESS) status = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &d, &plain, &defaults, 32, 0);
  std::ostringstream out;
  out << int(status);
  if (status != CUDA_OCC_SUCCESS) return out.str();
  const bool configurable = smemAtZero != defaultSmem;
  out << ' ' << smemGranularity << ' ' << regGranularity << ' ' << maxRegs << ' ' << subPartitions << ' ' << maxBlocks << ' ' << maxVirtual
      << ' ' << (partitioned == PARTITIONED_GC_SUPPORTED) << ' ' << barriersPerSlot << ' ' << (r.blockLimitBarriers != INT_MAX) << ' '
      << configurable << ' ' << defaultSmem;
  if (!configurable) {
    out << ' ' << defaultSmem / 1024;
  } else {
    size_t size = 0;
    for (int steps = 0; steps < 64; steps++) {
      size_t step = size;
      if (cudaOccAlignUpShmemSizeVoltaPlus(&step, &d) != CUDA_OCC_SUCCESS) break;
      out << ' ' << step / 1024;
      size = step + 1;
    }
  }
  return out.str();
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string mode;
    in >> mode;
    std::string answer;
    if (mode == "occupancy") answer = occupancy(in);
    else if (mode == "maxPotential") answer = maxPotential(in);
    else if (mode == "availableSmem") answer = availableSmem(in);
    else if (mode == "constants") answer = constants(in);
    else if (mode == "version") answer = std::to_string(__CUDA_OCC_MAJOR__) + " " + std::to_string(__CUDA_OCC_MINOR__);
    else answer = "bad";
    std::cout << answer << '\n';
  }
  return 0;
}
