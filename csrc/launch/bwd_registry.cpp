// Dispatch from a runtime (head dims, dtype, mask) to the compiled backward instantiation.
#include "bwd_registry.h"

#include "varlen_prepare.h"
#include "../kernels/bwd/schedule.h"

#include <stdexcept>
#include <string>

namespace dash {

namespace {

KernelRegistry<BwdKernelEntry>& registry() {
  static KernelRegistry<BwdKernelEntry> instance("backward");
  return instance;
}

BwdKernelEntry const& lookup(AttnBwdParams const& params, DType dtype) {
  return registry().find(KernelKey{params.head_dim, params.head_dim_v, dtype, params.mask.kind(), params.softcap > 0});
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

bool register_bwd_kernel(KernelKey const& key, BwdKernelEntry entry) { return registry().add(key, entry); }

std::vector<KernelKey> compiled_bwd_kernels() { return registry().keys(); }

BwdPlan plan_attn_bwd_for(AttnBwdParams const& params, DType dtype) {
  BwdKernelEntry const& entry = lookup(params, dtype);
  return plan_attn_bwd(params, entry.ctas_per_sm(params.device), sm_count(params.device));
}

void run_attn_bwd(AttnBwdParams& params, DType dtype, void* stream) {
  BwdKernelEntry const& entry = lookup(params, dtype);
  BwdPlan const plan = plan_attn_bwd(params, entry.ctas_per_sm(params.device), sm_count(params.device));
  params.grid = plan.grid;
  params.planned_schedule = plan.schedule;
  params.kv_parts = plan.kv_parts;
  params.deal_chunk = plan.deal_chunk;
  if (counter_dealt_schedule(plan.schedule, params.geo.packed()) && params.task_counter == nullptr) {
    throw std::invalid_argument("dash: a counter-dealt schedule needs its task counter");
  }
  if (plan.kv_parts > 1 && params.dkv_accum == nullptr) {
    throw std::invalid_argument("dash: split query-head groups need the dK / dV merge workspace");
  }
  if (params.geo.packed()) {
    params.varlen_tiles.numbering = bwd_varlen_order(plan.schedule, params.deterministic);
    params.varlen_tiles.units = params.geo.heads_kv * plan.kv_parts;
    prepare_varlen_tiles(params.geo, VarlenTileCount{bwd_tile_of(params).block_n, true},
                         params.varlen_tiles, static_cast<cudaStream_t>(stream));
  }
  entry.launch(params, static_cast<cudaStream_t>(stream));
}

}  // namespace dash
