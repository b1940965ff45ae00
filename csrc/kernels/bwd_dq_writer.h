// dQ writer warp: takes each MMA warpgroup's dQ partial from shared memory and adds it
// into dq_accum with bulk reduce-adds. Where it goes (Q tile, rank, head) comes with the
// partial, as the producer warp's schedule decided it. In deterministic mode it first waits for the dQ
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
    AttnBwdParams const& a = p.args;
    int const num_m_blocks = a.num_m_blocks;
    bool const lane0 = threadIdx.x % 32 == 0;
    for (int step_count = 0;; ++step_count) {
      named_barrier_sync(int(NamedBarrierId::kDqFull0) + 0, kBarrierThreads);
      BwdDqMeta const meta = ss.dq_meta[step_count % Cfg::kDqMetaRing];  // from the producer
      if (meta.m_block < 0) {
        named_barrier_sync(int(NamedBarrierId::kDqFull0) + 1, kBarrierThreads);  // warpgroup 1's last arrival
        break;
      }
      int const tile = meta.bh * num_m_blocks + meta.m_block;
      float* dq_accum = a.dq_accum + (int64_t(meta.bh) * a.seqlen_q_rounded + int64_t(meta.m_block) * Cfg::kBlockM) *
                                         Cfg::kHeadDim;
      if (lane0) {
        if (a.deterministic) {
          semaphore_wait_equal(a.dq_semaphore + tile, meta.rank, a.watchdog_ns);
          // Order our coming async-proxy adds after the acquire above.
          fence_proxy_async_global();
        }
        if (a.dq_trace != nullptr) {
          int const slot = atomicAdd(a.dq_trace_count + tile, 1);
          if (slot < a.num_n_blocks) { a.dq_trace[int64_t(tile) * a.num_n_blocks + slot] = meta.n_block; }
        }
        bulk_reduce_add_f32(dq_accum, ss.dq.data(), kBytesPerWarpGroup);
        bulk_commit_group();
      }
      named_barrier_sync(int(NamedBarrierId::kDqFull0) + 1, kBarrierThreads);
      if (lane0) {
        bulk_reduce_add_f32(dq_accum + Cfg::kDqElemsPerWarpGroup, ss.dq.data() + Cfg::kDqElemsPerWarpGroup,
                            kBytesPerWarpGroup);
        bulk_commit_group();
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
    if (lane0) { bulk_wait_group_complete<0>(); }
    __syncwarp();
  }
};

}  // namespace dash
