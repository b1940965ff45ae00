// The warp-specialized sm90 backward kernel: one producer warpgroup (warp 0: TMA loads,
// warp 1: dQ writer; registers given up with setmaxnreg) and two MMA warpgroups.
// Persistent: each CTA runs tasks blockIdx.x, blockIdx.x + gridDim.x, ... of the schedule.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/reg_reconfig.h>

#include "bwd_config.h"
#include "bwd_dq_writer.h"
#include "bwd_kernel_params.h"
#include "bwd_mainloop.h"
#include "bwd_producer.h"

namespace dash {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kNumThreads, 1)
attn_bwd_sm90_kernel(CUTE_GRID_CONSTANT BwdKernelParams<Cfg> const params) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using SharedStorage = typename Cfg::SharedStorage;
  using PipelineQ = typename Cfg::PipelineQ;
  using PipelinedO = typename Cfg::PipelinedO;
  extern __shared__ __align__(1024) char smem_raw[];
  SharedStorage& ss = *reinterpret_cast<SharedStorage*>(smem_raw);

  int const warp = cutlass::canonical_warp_idx_sync();
  int const warp_group = cutlass::canonical_warp_group_idx();

  if (warp == 0 && cute::elect_one_sync()) {
    cute::prefetch_tma_descriptor(params.tma_q.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_do.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_k.get_tma_descriptor());
    cute::prefetch_tma_descriptor(params.tma_v.get_tma_descriptor());
    cutlass::arch::ClusterTransactionBarrier::init(&ss.kv_full, 1);
    cutlass::arch::ClusterBarrier::init(&ss.kv_empty, Cfg::kNumMmaThreads);
  }

  typename PipelineQ::Params pipe_params;
  pipe_params.transaction_bytes = Cfg::kTmaBytesQ + Cfg::kBytesRowStats;
  pipe_params.role = warp_group == 0 ? PipelineQ::ThreadCategory::Producer
                                     : PipelineQ::ThreadCategory::Consumer;
  pipe_params.is_leader = threadIdx.x % 128 == 0;
  pipe_params.num_consumers = Cfg::kNumMmaThreads;
  // Both constructors initialise their mbarriers from warp 0 and fence the init.
  PipelineQ pipe_q(ss.pipeline_q, pipe_params, Shape<_1, _1, _1>{});
  PipelinedO pipe_do(ss.pipeline_do, pipe_params, Shape<_1, _1, _1>{});
  __syncthreads();

  if (warp_group == 0) {
    cutlass::arch::warpgroup_reg_dealloc<Cfg::kProducerRegisters>();
    int const warp_in_group = warp % 4;
    if (warp_in_group == 0) {
      BwdProducer<Cfg>::run(params, ss, pipe_q, pipe_do);
    } else if (warp_in_group == 1) {
      BwdDqWriter<Cfg>::run(params, ss);
    }
  } else {
    cutlass::arch::warpgroup_reg_alloc<Cfg::kMmaRegisters>();
    BwdMainloop<Cfg>::run(params, ss, pipe_q, pipe_do);
  }
#endif
}

}  // namespace dash
