// Registry of compiled backward instantiations. Each csrc/instantiations/*.cu registers
// its launcher at load time, so a build may compile a subset (DASH_INSTANTIATIONS) and
// the dispatcher reports exactly which combinations are missing.
#pragma once

#include <cuda_runtime.h>

#include "../attn_bwd_params.h"

namespace dash {

using BwdLauncher = void (*)(AttnBwdParams&, cudaStream_t);

bool register_bwd_launcher(int head_dim, DType dtype, bool causal, BwdLauncher launcher);

}  // namespace dash
