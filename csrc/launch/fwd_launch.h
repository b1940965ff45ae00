// Host side of one forward configuration: builds the TMA descriptors and launches the
// persistent kernel on the caller's stream. Included by one .cu per instantiation.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>
#include <cute/tensor.hpp>

#include "../attn_fwd_params.h"
#include "../kernels/fwd/config.h"
#include "../kernels/fwd/kernel.h"
#include "../kernels/fwd/kernel_params.h"
#include "fwd_registry.h"
#include "launch_utils.h"
#include "../kernels/common/gmem_tensors.h"

namespace dash {

template <class Cfg>
FwdKernelParams<Cfg> make_fwd_kernel_params(AttnFwdParams const& a) {
  using Element = typename Cfg::Element;
  using Params = FwdKernelParams<Cfg>;
  auto const tma_o = [&] {
    if constexpr (Cfg::kStagedEpilogue) {
      return make_tma_copy(SM90_TMA_STORE{},
                           qkv_gmem_tensor<Element>(a.out, Params::shape_o(a), a.out_row_stride,
                                                    a.out_head_stride, a.out_batch_stride),
                           typename Cfg::SmemLayoutOBox{});
    } else {
      return typename Params::NoTmaO{};
    }
  }();
  return Params{
      a,
      FwdTileScheduler<Cfg>::make(a),
      ScoreScale::make(a.softmax_scale, a.softcap),
      make_tma_copy(SM90_TMA_LOAD{},
                    qkv_gmem_tensor<Element>(a.q, Params::shape_q(a), a.q_row_stride, a.q_head_stride,
                                             a.q_batch_stride),
                    typename Cfg::SmemLayoutQ{}),
      Params::make_tma_kv(qkv_gmem_tensor<Element>(a.k, Params::shape_k(a), a.k_row_stride, a.k_head_stride,
                                                   a.k_batch_stride),
                          take<0, 2>(typename Cfg::SmemLayoutK{})),
      Params::make_tma_kv(qkv_gmem_tensor<Element>(a.v, Params::shape_v(a), a.v_row_stride, a.v_head_stride,
                                                   a.v_batch_stride),
                          take<0, 2>(typename Cfg::SmemLayoutV{})),
      tma_o,
  };
}

// Raises the kernel's dynamic shared memory limit and returns how many of its CTAs fit
// on one SM of `device` (cached per device).
template <class Cfg>
int fwd_ctas_per_sm(int device) {
  static int cache[64] = {};  // 0 = not queried yet
  return ctas_per_sm_cached(attn_fwd_sm90_kernel<Cfg>, Cfg::kNumThreads, Cfg::kSmemBytes, device, cache);
}

// A launch of `grid` CTAs (even) in clusters of two, for cudaLaunchKernelEx; `attribute` must outlive it.
template <class Cfg>
cudaLaunchConfig_t cluster_pair_launch(int grid, cudaStream_t stream, cudaLaunchAttribute& attribute) {
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 2;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid, 1, 1);
  config.blockDim = dim3(Cfg::kNumThreads, 1, 1);
  config.dynamicSmemBytes = Cfg::kSmemBytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

// How many clusters of two of this kernel fit on `device` at once (cached per device; the smem
// attribute must be set: fwd_ctas_per_sm).
template <class Cfg>
int fwd_max_cluster_pairs(int device) {
  static int cache[64] = {};
  if (device >= 0 && device < 64 && cache[device] > 0) { return cache[device]; }
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t const config = cluster_pair_launch<Cfg>(2, nullptr, attribute);
  int pairs = 0;
  check_cuda(cudaOccupancyMaxActiveClusters(&pairs, attn_fwd_sm90_kernel<Cfg>, &config),
             "cudaOccupancyMaxActiveClusters");
  if (device >= 0 && device < 64) { cache[device] = pairs; }
  return pairs;
}

// Runs the call on the K / V multicast kernel (Cfg::kKvMulticast) where its tiles pair up; false
// where they do not, and the plain kernel runs it. The full-mask order (m-fastest, stepped by the
// grid) gives CTAs 2c and 2c + 1 of a cluster Q tiles 2i and 2i + 1 of one head, so one KV range
// and as many tiles each, when the Q-tile count and the grid are even; packed calls number their
// tiles otherwise. A CTA waits only on its cluster's peer, which the hardware starts with it; the
// grid is capped by the pairs that fit at once so that the persistent grid is one wave.
template <class Cfg>
bool launch_attn_fwd_kv_multicast(AttnFwdParams const& a, int grid, cudaStream_t stream) {
  static_assert(Cfg::kKvMulticast, "the K / V multicast kernel's config");
  bool const tiles_pair_up = !a.geo.packed() && a.geo.seqlen_k >= fwd_kv_multicast_min_seqlen_k(a.head_dim, a.head_dim_v) &&
                             ceil_div(a.geo.seqlen_q, Cfg::kBlockM) % 2 == 0;
  if (!tiles_pair_up) { return false; }
  fwd_ctas_per_sm<Cfg>(a.device);  // sets the smem attribute on this device
  int const cluster_grid = std::min(grid, 2 * fwd_max_cluster_pairs<Cfg>(a.device)) & ~1;
  if (cluster_grid < 2) { return false; }
  FwdKernelParams<Cfg> const kp = make_fwd_kernel_params<Cfg>(a);
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t const config = cluster_pair_launch<Cfg>(cluster_grid, stream, attribute);
  check_cuda(cudaLaunchKernelEx(&config, attn_fwd_sm90_kernel<Cfg>, kp), "launch of the forward kernel (clusters)");
  return true;
}

template <class Cfg>
void launch_attn_fwd(AttnFwdParams const& a, int grid, cudaStream_t stream) {
  // The scheduler and the varlen table were sized by the call's tile: it must be this kernel's.
  TileShape const tile = fwd_call_tile(a);
  if (tile.block_m != Cfg::kBlockM || tile.block_n != Cfg::kBlockN) {
    throw std::logic_error("dash: forward sized for a tile other than its kernel's");
  }
  if constexpr (Cfg::kHasKvMulticastKernel) {
    if (launch_attn_fwd_kv_multicast<typename Cfg::KvMulticastConfig>(a, grid, stream)) { return; }
  }
  FwdKernelParams<Cfg> const kp = make_fwd_kernel_params<Cfg>(a);
  fwd_ctas_per_sm<Cfg>(a.device);  // sets the smem attribute on this device
  attn_fwd_sm90_kernel<Cfg><<<grid, Cfg::kNumThreads, Cfg::kSmemBytes, stream>>>(kp);
  check_cuda(cudaGetLastError(), "launch of the forward kernel");
}

template <class Cfg>
constexpr FwdKernelEntry fwd_kernel_entry() {
  return FwdKernelEntry{&launch_attn_fwd<Cfg>, &fwd_ctas_per_sm<Cfg>};
}

}  // namespace dash
