// Dispatch from a runtime (head_dim, dtype, causal) to the compiled instantiation.
#include "bwd_registry.h"

#include <stdexcept>
#include <string>

namespace dash {

namespace {

int head_dim_slot(int head_dim) { return head_dim == 64 ? 0 : head_dim == 128 ? 1 : -1; }

BwdKernelEntry& entry_slot(int hd_slot, DType dtype, bool causal) {
  static BwdKernelEntry table[2][2][2] = {};
  return table[hd_slot][int(dtype)][causal ? 1 : 0];
}

char const* dtype_name(DType dtype) { return dtype == DType::kBF16 ? "bfloat16" : "float16"; }

BwdKernelEntry const& lookup(AttnBwdParams const& params, DType dtype) {
  int const slot = head_dim_slot(params.head_dim);
  if (slot < 0) {
    throw std::invalid_argument("dash: head_dim " + std::to_string(params.head_dim) +
                                " is not supported by the backward kernel (supported: 64, 128)");
  }
  BwdKernelEntry const& entry = entry_slot(slot, dtype, params.causal);
  if (entry.launch == nullptr) {
    throw std::invalid_argument(std::string("dash: this build has no backward kernel for head_dim ") +
                                std::to_string(params.head_dim) + ", " + dtype_name(dtype) + ", " +
                                (params.causal ? "causal" : "full") +
                                " mask (it was built with a restricted DASH_INSTANTIATIONS)");
  }
  return entry;
}

int sm_count(int device) {
  int count = 0;
  cudaError_t const err = cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("dash: cudaDeviceGetAttribute failed: ") + cudaGetErrorString(err));
  }
  return count;
}

}  // namespace

bool register_bwd_kernel(int head_dim, DType dtype, bool causal, BwdKernelEntry entry) {
  int const slot = head_dim_slot(head_dim);
  if (slot < 0) { return false; }
  entry_slot(slot, dtype, causal) = entry;
  return true;
}

BwdPlan plan_attn_bwd_for(AttnBwdParams const& params, DType dtype) {
  BwdKernelEntry const& entry = lookup(params, dtype);
  return plan_attn_bwd(params, entry.ctas_per_sm(params.device), sm_count(params.device));
}

void run_attn_bwd(AttnBwdParams& params, DType dtype, void* stream) {
  BwdKernelEntry const& entry = lookup(params, dtype);
  BwdPlan const plan = plan_attn_bwd(params, entry.ctas_per_sm(params.device), sm_count(params.device));
  params.grid = plan.grid;
  params.planned_schedule = plan.schedule;
  entry.launch(params, static_cast<cudaStream_t>(stream));
}

}  // namespace dash
