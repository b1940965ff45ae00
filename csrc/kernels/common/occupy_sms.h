// Test helper: CTAs that each take a whole SM's shared memory and spin for a while, so
// tests can run the backward kernel while another stream keeps some SMs busy.
#pragma once

#include <cstdint>

namespace dash {

__global__ void occupy_sms_kernel(uint64_t nanoseconds) {
  extern __shared__ char smem[];
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    smem[threadIdx.x] = char(threadIdx.x);  // keep the allocation alive
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

}  // namespace dash
