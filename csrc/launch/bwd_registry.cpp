// Dispatch from a runtime (head_dim, dtype, causal) to the compiled instantiation.
#include "bwd_registry.h"

#include <stdexcept>
#include <string>

namespace dash {

namespace {

constexpr int kNumHeadDims = 2;  // 64, 128

int head_dim_slot(int head_dim) { return head_dim == 64 ? 0 : head_dim == 128 ? 1 : -1; }

BwdLauncher& launcher_slot(int hd_slot, DType dtype, bool causal) {
  static BwdLauncher table[kNumHeadDims][2][2] = {};
  return table[hd_slot][int(dtype)][causal ? 1 : 0];
}

char const* dtype_name(DType dtype) { return dtype == DType::kBF16 ? "bfloat16" : "float16"; }

}  // namespace

bool register_bwd_launcher(int head_dim, DType dtype, bool causal, BwdLauncher launcher) {
  int const slot = head_dim_slot(head_dim);
  if (slot < 0) { return false; }
  launcher_slot(slot, dtype, causal) = launcher;
  return true;
}

void run_attn_bwd(AttnBwdParams& params, DType dtype, void* stream) {
  int const slot = head_dim_slot(params.head_dim);
  if (slot < 0) {
    throw std::invalid_argument("dash: head_dim " + std::to_string(params.head_dim) +
                                " is not supported by the backward kernel (supported: 64, 128)");
  }
  BwdLauncher launcher = launcher_slot(slot, dtype, params.causal);
  if (launcher == nullptr) {
    throw std::invalid_argument(std::string("dash: this build has no backward kernel for head_dim ") +
                                std::to_string(params.head_dim) + ", " + dtype_name(dtype) + ", " +
                                (params.causal ? "causal" : "full") +
                                " mask (it was built with a restricted DASH_INSTANTIATIONS)");
  }
  launcher(params, static_cast<cudaStream_t>(stream));
}

}  // namespace dash
