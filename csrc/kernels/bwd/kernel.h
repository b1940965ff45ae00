// The warp-specialized sm90 backward kernel: one producer warpgroup (warp 0: K, V, Q, LSE
// loads and the schedule's records; warps 1 and 3: dQ writers of staging buffers 0 and 1
// (the second only in deterministic mode); warp 2: dO, D loads; registers given up with
// setmaxnreg) and Cfg::kNumMmaWarpGroups (two or three) MMA warpgroups.
// Persistent: each CTA runs the schedule's items dealt in static rounds (item blockIdx.x of
// each round) or drawn from a counter (bwd/producer.h).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/reg_reconfig.h>

#include "config.h"
#include "dq_writer.h"
#include "kernel_params.h"
#include "mainloop.h"
#include "producer.h"

namespace dash {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kNumThreads, 1)
attn_bwd_sm90_kernel(CUTE_GRID_CONSTANT BwdKernelParams<Cfg> const params) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using SharedStorage = typename Cfg::SharedStorage;
  extern __shared__ __align__(1024) char smem_raw[];
  SharedStorage& ss = *reinterpret_cast<SharedStorage*>(smem_raw);

  // A deterministic call's postprocess may start at once: its CTAs wait on the dQ tiles'
  // semaphores (bwd/prepost.h), and take only SMs this kernel's CTAs have left.
  launch_dependent_grid();
  int const warp = cutlass::canonical_warp_idx_sync();
  int const warp_group = cutlass::canonical_warp_group_idx();

  if (warp == 0 && cute::elect_one_sync()) {
    cute::prefetch_tma_descriptor(params.tma_q.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_do.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_k.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_v.get_tma_descriptor());
    cutlass::arch::ClusterTransactionBarrier::init(&ss.kv_full, 1);
    cutlass::arch::ClusterBarrier::init(&ss.task_ready, 1);
    cutlass::arch::ClusterBarrier::init(&ss.kv_empty, Cfg::kNumMmaThreads);
    ss.do_records_read = 0;
    Cfg::PipelineQ::init(ss.pipeline_q, Cfg::kNumMmaThreads);
    Cfg::PipelineDo::init(ss.pipeline_do, Cfg::kNumMmaThreads);
  }
  __syncthreads();  // barrier inits visible to every warp

  if (warp_group == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Cfg::kProducerRegisters>();
    int const warp_in_group = warp % 4;
    if (warp_in_group == 0) {
      BwdProducer<Cfg>::template run<BwdProducer<Cfg>::kQStream>(params, ss);
    } else if (warp_in_group == 2) {
      BwdProducer<Cfg>::template run<BwdProducer<Cfg>::kDoStream>(params, ss);
    } else {
      BwdDqWriter<Cfg>::run(params, ss, warp_in_group == 1 ? 0 : 1);
    }
  } else {
    cutlass::arch::warpgroup_reg_alloc<Cfg::kMmaRegisters>();
    BwdMainloop<Cfg>::run(params, ss);
  }
#endif
}

}  // namespace dash
