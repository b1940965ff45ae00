// The warp-specialized sm90 forward kernel: a producer warpgroup (warp 0 loads Q, K and
// V with TMA; registers given up with setmaxnreg) and kBlockM / 64 MMA warpgroups.
// Persistent: each CTA runs the tiles FwdTileScheduler assigns to it.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/reg_reconfig.h>

#include "config.h"
#include "kernel_params.h"
#include "mainloop.h"
#include "producer.h"

namespace dash {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kNumThreads, 1)
attn_fwd_sm90_kernel(CUTE_GRID_CONSTANT FwdKernelParams<Cfg> const params) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using SharedStorage = typename Cfg::SharedStorage;
  using Pipeline = typename Cfg::Pipeline;
  extern __shared__ __align__(1024) char smem_raw[];
  SharedStorage& ss = *reinterpret_cast<SharedStorage*>(smem_raw);

  int const warp = cutlass::canonical_warp_idx_sync();
  int const warp_group = cutlass::canonical_warp_group_idx();

  if (warp == 0 && cute::elect_one_sync()) {
    cute::prefetch_tma_descriptor(params.tma_q.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_k.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_v.get_tma_descriptor());
    if constexpr (Cfg::kStagedEpilogue) { cute::prefetch_tma_descriptor(params.tma_o.get_tma_descriptor()); }
    for (int i = 0; i < Cfg::kQStages; ++i) {
      cutlass::arch::ClusterTransactionBarrier::init(&ss.q_full[i], 1);
      cutlass::arch::ClusterBarrier::init(&ss.q_empty[i], Cfg::kNumMmaThreads);
    }
    // A multicast kernel's K / V stage is released twice by lane 0 of each MMA warp (mainloop.h).
    int const kv_releases = Cfg::kKvMulticast ? 2 * Cfg::kNumMmaThreads / 32 : Cfg::kNumMmaThreads;
    Pipeline::init(ss.pipeline_k, kv_releases);
    Pipeline::init(ss.pipeline_v, kv_releases);
  }
  if constexpr (Cfg::kKvMulticast) {
    // Both CTAs' barriers initialized before either CTA's loads or releases reach the other.
    cute::cluster_arrive_relaxed();
    cute::cluster_wait();
  } else {
    __syncthreads();  // barrier inits visible to every warp
  }

  if (warp_group == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Cfg::kProducerRegisters>();
    if (warp == 0) { FwdProducer<Cfg>::run(params, ss); }
  } else {
    cutlass::arch::warpgroup_reg_alloc<Cfg::kMmaRegisters>();
    FwdMainloop<Cfg>::run(params, ss);
  }
#endif
}

}  // namespace dash
