// Dispatch from a runtime (head_dim, dtype, causal) to the compiled forward kernel, and
// the persistent grid size.
#include "fwd_registry.h"

#include <stdexcept>
#include <string>

namespace dash {

namespace {

int head_dim_slot(int head_dim) { return head_dim == 64 ? 0 : head_dim == 128 ? 1 : -1; }

FwdKernelEntry& entry_slot(int hd_slot, DType dtype, bool causal) {
  static FwdKernelEntry table[2][2][2] = {};
  return table[hd_slot][int(dtype)][causal ? 1 : 0];
}

}  // namespace

bool register_fwd_kernel(int head_dim, DType dtype, bool causal, FwdKernelEntry entry) {
  int const slot = head_dim_slot(head_dim);
  if (slot < 0) { return false; }
  entry_slot(slot, dtype, causal) = entry;
  return true;
}

int64_t fwd_num_tiles(AttnFwdParams const& p) {
  int const block_m = fwd_tile_shape(p.head_dim).block_m;
  return int64_t((p.seqlen_q + block_m - 1) / block_m) * p.heads * p.batch;
}

void run_attn_fwd(AttnFwdParams const& p, DType dtype, void* stream) {
  int const slot = head_dim_slot(p.head_dim);
  if (slot < 0) {
    throw std::invalid_argument("dash: head_dim " + std::to_string(p.head_dim) +
                                " is not supported by the forward kernel (supported: 64, 128)");
  }
  FwdKernelEntry const& entry = entry_slot(slot, dtype, p.causal);
  if (entry.launch == nullptr) {
    throw std::invalid_argument(std::string("dash: this build has no forward kernel for head_dim ") +
                                std::to_string(p.head_dim) + ", " + (dtype == DType::kBF16 ? "bfloat16" : "float16") +
                                ", " + (p.causal ? "causal" : "full") +
                                " mask (it was built with a restricted DASH_INSTANTIATIONS)");
  }
  int sm_count = 0;
  cudaError_t const err = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, p.device);
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("dash: cudaDeviceGetAttribute failed: ") + cudaGetErrorString(err));
  }
  int const usable_sms = sm_count - p.sm_margin;
  if (usable_sms < 1) {
    throw std::invalid_argument("dash: sm_margin=" + std::to_string(p.sm_margin) + " leaves none of the " +
                                std::to_string(sm_count) + " SMs");
  }
  int const per_sm = entry.ctas_per_sm(p.device);
  if (per_sm < 1) { throw std::runtime_error("dash: the forward kernel does not fit on an SM"); }
  int64_t const tiles = fwd_num_tiles(p);
  int64_t const resident = int64_t(per_sm) * usable_sms;
  entry.launch(p, int(tiles < resident ? tiles : resident), static_cast<cudaStream_t>(stream));
}

}  // namespace dash
