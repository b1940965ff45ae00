// The compiled backward instantiations (KernelRegistry, kernel_registry.h): each
// csrc/instantiations/bwd_*.cu registers itself at load time.
#pragma once

#include <vector>

#include <cuda_runtime.h>

#include "../attn_bwd_params.h"
#include "bwd_plan.h"
#include "kernel_registry.h"

namespace dash {

struct BwdKernelEntry {
  void (*launch)(AttnBwdParams&, cudaStream_t);  // params.grid / planned_schedule set
  int (*ctas_per_sm)(int device);                // occupancy of the main kernel
};

bool register_bwd_kernel(KernelKey const& key, BwdKernelEntry entry);
std::vector<KernelKey> compiled_bwd_kernels();

// Plans the call (grid, schedule) without running it.
BwdPlan plan_attn_bwd_for(AttnBwdParams const& params, DType dtype);

}  // namespace dash
