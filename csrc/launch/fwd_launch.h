// Host side of one forward configuration: builds the TMA descriptors and launches the
// persistent kernel on the caller's stream. Included by one .cu per instantiation.
#pragma once

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
      make_tma_copy(SM90_TMA_LOAD{},
                    qkv_gmem_tensor<Element>(a.k, Params::shape_k(a), a.k_row_stride, a.k_head_stride,
                                             a.k_batch_stride),
                    take<0, 2>(typename Cfg::SmemLayoutK{})),
      make_tma_copy(SM90_TMA_LOAD{},
                    qkv_gmem_tensor<Element>(a.v, Params::shape_v(a), a.v_row_stride, a.v_head_stride,
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

template <class Cfg>
void launch_attn_fwd(AttnFwdParams const& a, int grid, cudaStream_t stream) {
  // The scheduler and the varlen table were sized by the call's tile: it must be this kernel's.
  TileShape const tile = fwd_call_tile(a);
  if (tile.block_m != Cfg::kBlockM || tile.block_n != Cfg::kBlockN) {
    throw std::logic_error("dash: forward sized for a tile other than its kernel's");
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
