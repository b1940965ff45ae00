// Registry of compiled backward instantiations. Each csrc/instantiations/*.cu registers
// itself at load time, so a build may compile a subset (DASH_INSTANTIATIONS) and the
// dispatcher reports exactly which combinations are missing.
#pragma once

#include <cuda_runtime.h>

#include "../attn_bwd_params.h"
#include "bwd_plan.h"

namespace dash {

struct BwdKernelEntry {
  void (*launch)(AttnBwdParams&, cudaStream_t);  // params.grid / planned_schedule set
  int (*ctas_per_sm)(int device);                // occupancy of the main kernel
};

bool register_bwd_kernel(int head_dim, DType dtype, bool causal, BwdKernelEntry entry);

// Plans the call (grid, schedule) without running it.
BwdPlan plan_attn_bwd_for(AttnBwdParams const& params, DType dtype);

}  // namespace dash
