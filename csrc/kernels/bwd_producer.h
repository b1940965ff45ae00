// Producer warp of the backward kernel: TMA loads of K and V once per task and of
// (Q, LSE) and (dO, D) per Q tile, into the two mbarrier pipelines.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/pipeline/pipeline.hpp>

#include "bwd_kernel_params.h"
#include "sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdProducer {
  using SharedStorage = typename Cfg::SharedStorage;
  using PipelineQ = typename Cfg::PipelineQ;
  using PipelinedO = typename Cfg::PipelinedO;
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;

  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss,
                              PipelineQ& pipe_q, PipelinedO& pipe_do) {
    BwdScheduleView const& sched = p.sched;
    Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Cfg::SmemLayoutQ{});
    Tensor sdO = make_tensor(make_smem_ptr(ss.dout.data()), typename Cfg::SmemLayoutdO{});
    Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), typename Cfg::SmemLayoutK{});
    Tensor sV = make_tensor(make_smem_ptr(ss.v.data()), typename Cfg::SmemLayoutV{});
    Tensor mQ = p.tma_q.get_tma_tensor(p.shape_q());
    Tensor mdO = p.tma_do.get_tma_tensor(p.shape_q());
    Tensor mK = p.tma_k.get_tma_tensor(p.shape_k());
    Tensor mV = p.tma_v.get_tma_tensor(p.shape_k());
    auto cta_tma_q = p.tma_q.get_slice(_0{});
    auto cta_tma_do = p.tma_do.get_slice(_0{});
    auto cta_tma_k = p.tma_k.get_slice(_0{});
    auto cta_tma_v = p.tma_v.get_slice(_0{});
    Tensor tQsQ = cta_tma_q.partition_D(sQ);     // (TMA, TMA_M, TMA_D, stage)
    Tensor tdOsdO = cta_tma_do.partition_D(sdO);
    Tensor tKsK = cta_tma_k.partition_D(sK);     // (TMA, TMA_N, TMA_D)
    Tensor tVsV = cta_tma_v.partition_D(sV);

    auto write_state = cutlass::make_producer_start_state<PipelineQ>();
    bool const leader = cute::elect_one_sync();
    for (int round = 0; round < sched.num_rounds(); ++round) {
      int const t = sched.task_id(blockIdx.x, round);
      if (t < 0) { continue; }
      BwdTask const task = sched.task(t);
      int const num_steps = sched.num_steps(task);
      Tensor gQ = local_tile(mQ(_, _, task.head, task.batch), Shape<Int<kBlockM>, Int<kHeadDim>>{},
                             make_coord(_, _0{}));  // (M, D, m_block)
      Tensor gdO = local_tile(mdO(_, _, task.head, task.batch), Shape<Int<kBlockM>, Int<kHeadDim>>{},
                              make_coord(_, _0{}));
      Tensor gK = local_tile(mK(_, _, task.head, task.batch), Shape<Int<kBlockN>, Int<kHeadDim>>{},
                             make_coord(task.n_block, _0{}));  // (N, D)
      Tensor gV = local_tile(mV(_, _, task.head, task.batch), Shape<Int<kBlockN>, Int<kHeadDim>>{},
                             make_coord(task.n_block, _0{}));
      Tensor tQgQ = cta_tma_q.partition_S(gQ);  // (TMA, TMA_M, TMA_D, m_block)
      Tensor tdOgdO = cta_tma_do.partition_S(gdO);
      Tensor tKgK = cta_tma_k.partition_S(gK);
      Tensor tVgV = cta_tma_v.partition_S(gV);
      float const* lse_log2 = p.args.lse_log2 + p.row_stats_offset(task.batch, task.head);
      float const* dpsum = p.args.dpsum + p.row_stats_offset(task.batch, task.head);

      // K and V wait until the previous task's MMA warpgroups let go of them; issued after
      // the first Q tile so that load overlaps the previous task's tail.
      auto load_kv = [&]() {
        // Only the last round can have an empty slot, so `round` counts this CTA's tasks.
        if (round > 0) {
          cutlass::arch::ClusterBarrier::wait(&ss.kv_empty, (round - 1) & 1);
        }
        cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&ss.kv_full,
                                                                       2 * Cfg::kTmaBytesKV);
        copy(p.tma_k.with(ss.kv_full), tKgK, tKsK);
        copy(p.tma_v.with(ss.kv_full), tVgV, tVsV);
      };

      if (leader) {
        if (num_steps == 0) { load_kv(); }
        int m_block = sched.first_q_tile(task);
        for (int step = 0; step < num_steps; ++step, m_block = sched.next_q_tile(m_block)) {
          int const stage = write_state.index();
          pipe_q.producer_acquire(write_state);
          uint64_t* bar_q = pipe_q.producer_get_barrier(write_state);
          copy(p.tma_q.with(*bar_q, 0, TMA::CacheHintSm90::EVICT_LAST), tQgQ(_, _, _, m_block),
               tQsQ(_, _, _, stage));
          bulk_copy_g2s(ss.lse_log2.data() + stage * kBlockM, lse_log2 + m_block * kBlockM,
                        Cfg::kBytesRowStats, bar_q);
          if (step == 0) { load_kv(); }
          pipe_do.producer_acquire(write_state);
          uint64_t* bar_do = pipe_do.producer_get_barrier(write_state);
          copy(p.tma_do.with(*bar_do, 0, TMA::CacheHintSm90::EVICT_LAST), tdOgdO(_, _, _, m_block),
               tdOsdO(_, _, _, stage));
          bulk_copy_g2s(ss.dpsum.data() + stage * kBlockM, dpsum + m_block * kBlockM,
                        Cfg::kBytesRowStats, bar_do);
          ++write_state;
        }
      }
      __syncwarp();
    }
  }
};

}  // namespace dash
