// The compiled forward instantiations (KernelRegistry, kernel_registry.h): each
// csrc/instantiations/fwd_*.cu registers itself at load time.
#pragma once

#include <vector>

#include <cuda_runtime.h>

#include "../attn_fwd_params.h"
#include "../dtype.h"
#include "kernel_registry.h"

namespace dash {

struct FwdKernelEntry {
  void (*launch)(AttnFwdParams const&, int grid, cudaStream_t);
  int (*ctas_per_sm)(int device);  // occupancy of the kernel
};

bool register_fwd_kernel(KernelKey const& key, FwdKernelEntry entry);
std::vector<KernelKey> compiled_fwd_kernels();

// Number of query tiles x heads x batch: the forward's units of work.
int64_t fwd_num_tiles(AttnFwdParams const& params);

// Sizes the persistent grid from the device and launches the forward kernel on `stream`.
// Throws std::invalid_argument for an unsupported / not compiled combination or a
// sm_margin that leaves no SM, std::runtime_error on a CUDA failure.
void run_attn_fwd(AttnFwdParams const& params, DType dtype, void* stream);

}  // namespace dash
