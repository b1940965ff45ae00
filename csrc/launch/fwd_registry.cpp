// Dispatch from a runtime (head dims, dtype, mask) to the compiled forward kernel, and
// the persistent grid size.
#include "fwd_registry.h"

#include "varlen_prepare.h"

#include <stdexcept>
#include <string>

namespace dash {

namespace {

KernelRegistry<FwdKernelEntry>& registry() {
  static KernelRegistry<FwdKernelEntry> instance("forward");
  return instance;
}

}  // namespace

bool register_fwd_kernel(KernelKey const& key, FwdKernelEntry entry) { return registry().add(key, entry); }

std::vector<KernelKey> compiled_fwd_kernels() { return registry().keys(); }

bool fwd_takes_short_walk(int head_dim, int head_dim_v, DType dtype, bool banded, int64_t seqlen_k, bool softcap) {
  int const limit = fwd_short_max_seqlen_k(head_dim, head_dim_v, banded);
  return limit > 0 && seqlen_k <= limit &&
         registry().contains(
             KernelKey{head_dim, head_dim_v, dtype, banded ? MaskKind::kBand : MaskKind::kFull, softcap, true});
}

bool fwd_takes_short_walk(AttnFwdParams const& p, DType dtype) {
  return fwd_takes_short_walk(p.head_dim, p.head_dim_v, dtype, !p.mask.full(), p.geo.seqlen_k, p.softcap > 0.f);
}

TileShape fwd_call_tile(AttnFwdParams const& p) { return fwd_tile_shape(p.head_dim, p.head_dim_v, p.short_walk); }

int64_t fwd_num_tiles(AttnFwdParams const& p) {
  int const block_m = fwd_call_tile(p).block_m;
  if (p.geo.packed()) {  // an upper bound: sum_b ceil(len_q_b / block_m) <= total_q / block_m + batch
    return (int64_t(p.geo.total_q) / block_m + p.geo.batch) * p.geo.heads;
  }
  return int64_t(ceil_div(p.geo.seqlen_q, block_m)) * p.geo.heads * p.geo.batch;
}

void run_attn_fwd(AttnFwdParams const& p, DType dtype, void* stream) {
  FwdKernelEntry const& entry =
      registry().find(KernelKey{p.head_dim, p.head_dim_v, dtype, p.mask.kind(), p.softcap > 0.f, p.short_walk});
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
  if (p.geo.packed()) {
    prepare_varlen_tiles(p.geo, VarlenTileCount{fwd_call_tile(p).block_m, false}, p.varlen_tiles,
                         static_cast<cudaStream_t>(stream));
  }
  entry.launch(p, int(tiles < resident ? (tiles > 0 ? tiles : 1) : resident), static_cast<cudaStream_t>(stream));
}

}  // namespace dash
