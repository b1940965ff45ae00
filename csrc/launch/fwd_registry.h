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

// Whether a call takes the forward's short-walk kernel: its head dims have one for its mask
// (traits.py "fwd_short"), its keys are no more than that kernel's limit (seqlen_k; a packed
// call's max_seqlen_k), and this build compiled it. The caller stores the answer in
// params.short_walk before sizing anything by the tile. The scalar form is the rule itself, which
// torch.ops.dash.fwd_takes_short_walk gives Python (dash/capabilities.py).
bool fwd_takes_short_walk(int head_dim, int head_dim_v, DType dtype, bool banded, int64_t seqlen_k, bool softcap);
bool fwd_takes_short_walk(AttnFwdParams const& params, DType dtype);

// The tile of the kernel the call runs (params.short_walk set).
TileShape fwd_call_tile(AttnFwdParams const& params);

// Number of query tiles x heads x batch: the forward's units of work.
int64_t fwd_num_tiles(AttnFwdParams const& params);

// Sizes the persistent grid from the device and launches the forward kernel on `stream`.
// Throws std::invalid_argument for an unsupported / not compiled combination or a
// sm_margin that leaves no SM, std::runtime_error on a CUDA failure.
void run_attn_fwd(AttnFwdParams const& params, DType dtype, void* stream);

}  // namespace dash
