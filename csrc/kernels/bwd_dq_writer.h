// dQ writer warp: takes each MMA warpgroup's dQ partial from shared memory and adds it
// into dq_accum with bulk reduce-adds. In deterministic mode it first waits for the dQ
// tile's semaphore to reach this task's rank, and releases the semaphore only after the
// add has *landed in global memory* (full bulk-group completion, not just the smem read).
#pragma once

#include <cute/tensor.hpp>

#include "bwd_kernel_params.h"
#include "sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdDqWriter {
  using SharedStorage = typename Cfg::SharedStorage;
  static constexpr int kBarrierThreads = 128 + 32;  // one MMA warpgroup + this warp
  static constexpr int kBytesPerWarpGroup = Cfg::kDqElemsPerWarpGroup * sizeof(float);
  static_assert(Cfg::kNumMmaWarpGroups == 2);

  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss) {
    BwdScheduleView const& sched = p.sched;
    AttnBwdParams const& a = p.args;
    bool const lane0 = threadIdx.x % 32 == 0;
    for (int round = 0; round < sched.num_rounds(); ++round) {
      int const t = sched.task_id(blockIdx.x, round);
      if (t < 0) { continue; }
      BwdTask const task = sched.task(t);
      int const num_steps = sched.num_steps(task);
      BwdScheduleView::TaskRanks const ranks = sched.task_ranks(task);
      int m_block = sched.first_q_tile(task);
      for (int step = 0; step < num_steps; ++step, m_block = sched.next_q_tile(m_block)) {
        int const tile = sched.dq_tile_index(task, m_block);
        float* dq_accum = a.dq_accum + p.dq_accum_offset(task.batch, task.head, m_block);
        if (lane0) {
          if (a.deterministic) {
            semaphore_wait_equal(a.dq_semaphore + tile, ranks.at(m_block),
                                 a.watchdog_ns);
            // Order our coming async-proxy adds after the acquire above.
            fence_proxy_async_global();
          }
          if (a.dq_trace != nullptr) {
            int const slot = atomicAdd(a.dq_trace_count + tile, 1);
            if (slot < sched.num_n_blocks) {
              a.dq_trace[int64_t(tile) * sched.num_n_blocks + slot] = task.n_block;
            }
          }
        }
        CUTE_UNROLL
        for (int wg = 0; wg < Cfg::kNumMmaWarpGroups; ++wg) {
          named_barrier_sync(int(NamedBarrierId::kDqFull0) + wg, kBarrierThreads);
          if (lane0) {
            bulk_reduce_add_f32(dq_accum + wg * Cfg::kDqElemsPerWarpGroup,
                                ss.dq.data() + wg * Cfg::kDqElemsPerWarpGroup, kBytesPerWarpGroup);
            bulk_commit_group();
          }
        }
        // Hand each buffer back as soon as the engine has read it.
        if (lane0) { bulk_wait_group_read<1>(); }
        __syncwarp();
        named_barrier_arrive(int(NamedBarrierId::kDqEmpty0) + 0, kBarrierThreads);
        if (lane0) { bulk_wait_group_read<0>(); }
        __syncwarp();
        named_barrier_arrive(int(NamedBarrierId::kDqEmpty0) + 1, kBarrierThreads);
        if (a.deterministic && lane0) {
          bulk_wait_group_complete<0>();
          fence_proxy_async_global();
          add_release_gpu(a.dq_semaphore + tile, 1);
        }
        __syncwarp();
      }
    }
    if (lane0) { bulk_wait_group_complete<0>(); }
    __syncwarp();
  }
};

}  // namespace dash
