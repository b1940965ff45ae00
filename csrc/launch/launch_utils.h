// Host-side helpers the forward and backward launchers share.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace dash {

inline void check_cuda(cudaError_t err, char const* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("dash: ") + what + " failed: " + cudaGetErrorString(err));
  }
}

// Raises `kernel`'s dynamic shared memory limit to smem_bytes on `device` and returns how
// many of its CTAs fit on one SM. Cached per device in `cache` (one per kernel: the answer
// does not change), which also means the attribute is set once per device.
template <class Kernel>
int ctas_per_sm_cached(Kernel kernel, int threads, int smem_bytes, int device, int (&cache)[64]) {
  if (device >= 0 && device < 64 && cache[device] > 0) { return cache[device]; }
  int previous = 0;
  check_cuda(cudaGetDevice(&previous), "cudaGetDevice");
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  check_cuda(cudaSetDevice(previous), "cudaSetDevice");
  if (device >= 0 && device < 64) { cache[device] = per_sm; }
  return per_sm;
}

}  // namespace dash
