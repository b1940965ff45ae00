// dQ writer warps: take each MMA warpgroup's dQ partial from shared memory and add it into
// dq_accum with bulk reduce-adds. Where a partial goes (Q tile, rank, head) comes with it,
// as the producer warp's schedule decided it.
//
// Deterministic mode: a writer first waits for the dQ tile's semaphore to reach this task's
// rank, and releases the semaphore only after the add has *landed in global memory* (full
// bulk-group completion, not just the smem read), before it takes its next step: so a
// writer never holds one tile's turn while waiting for another's, and the only waits are
// the schedule's. That loop is serial (two L2 round trips a step) and set the pace at
// hdim 128, so two writers take alternate steps, writer w owning staging buffer w (step t
// in buffer t % 2): one writer's landing wait and release overlap the other's acquire, and
// the MMA warpgroups can hand over step t + 1 while step t still waits for its turn.
// Non-deterministic mode has no such chain: one writer and one buffer (the protocol before
// the second writer) keep up. Two buffers there measured 4-6% slower in one A/B, but that
// A/B timed short blocks, which on the power-capped H200 move by up to ~15% with whatever
// ran just before (bench/RESULTS.md, 2026-11-23 evening), so the difference is not
// established either way.
// The producer publishes each step's buffer with its Q tile (buffer_of), so the MMA
// warpgroups hold no mode flag.
// In-stage staging (Cfg::kDqInStage, the unordered kernel at split head dims) puts each
// partial in its step's Q / dO stage: buffer b is stage b, so that kernel runs two writers,
// and the writer, the stage's last reader, frees it for the producer.
#pragma once

#include <cute/tensor.hpp>

#include "kernel_params.h"
#include "../common/sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdDqWriter {
  using SharedStorage = typename Cfg::SharedStorage;
  static constexpr int kBarrierThreads = 128 + 32;  // one MMA warpgroup + one writer warp
  static_assert(Cfg::kNumMmaWarpGroups == 2);

  // Barrier ids of warpgroup wg's half of buffer buf (the MMA warpgroups use the same).
  CUTE_DEVICE static constexpr int full_barrier(int buf, int wg) { return int(BwdBarrier::kDqFull0) + 2 * buf + wg; }
  CUTE_DEVICE static constexpr int empty_barrier(int buf, int wg) { return int(BwdBarrier::kDqEmpty0) + 2 * buf + wg; }

  // Writers taking part: step t goes to writer t % num_writers, whose buffer is buffer_of(t).
  CUTE_DEVICE static int num_writers(AttnBwdParams const& a) {
    return a.deterministic || Cfg::kDqInStage ? Cfg::kDqBuffers : 1;
  }
  CUTE_DEVICE static int buffer_of(AttnBwdParams const& a, int step) {
    return a.deterministic || Cfg::kDqInStage ? step % Cfg::kDqBuffers : 0;
  }

  // Where warpgroup wg's part `part` of buffer buf's partial waits in smem, and how big it is;
  // the part's place in the dQ tile of dq_accum is wg * kDqElemsPerWarpGroup + part * kPartElems.
  static constexpr int kPartElems = Cfg::kDqElemsPerWarpGroup / Cfg::kDqStagingParts;
  static constexpr int kPartBytes = kPartElems * int(sizeof(float));
  static_assert(!Cfg::kDqInStage || kPartBytes == Cfg::kBlockM * Cfg::kHeadDim / 2 * int(sizeof(typename Cfg::Element)),
                "a warpgroup's dQ part must fill its d-half of a Q / dO stage");
  CUTE_DEVICE static float* staging(SharedStorage& ss, int buf, int wg, int part) {
    if constexpr (Cfg::kDqInStage) {  // warpgroup wg's d-half of the stage's Q (part 0) or dO (part 1)
      auto* tile = (part == 0 ? ss.q.data() : ss.dout.data()) + buf * (Cfg::kBlockM * Cfg::kHeadDim);
      return reinterpret_cast<float*>(tile + wg * (Cfg::kBlockM * Cfg::kHeadDim / 2));
    } else {
      return ss.dq.data() + buf * (Cfg::kBlockM * Cfg::kHeadDim) + wg * Cfg::kDqElemsPerWarpGroup + part * kPartElems;
    }
  }

  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss, int writer) {
    AttnBwdParams const& a = p.args;
    int const writers = num_writers(a);
    if (writer >= writers) { return; }
    bool const lane0 = threadIdx.x % 32 == 0;
    int const buf = writer;  // = buffer_of(every step of this writer)
    // The buffer starts out free.
    named_barrier_arrive(empty_barrier(buf, 0), kBarrierThreads);
    named_barrier_arrive(empty_barrier(buf, 1), kBarrierThreads);
    for (int step_count = writer;; step_count += writers) {
      named_barrier_sync(full_barrier(buf, 0), kBarrierThreads);
      BwdDqMeta const meta = ss.dq_meta[step_count % Cfg::kDqMetaRing];  // from the producer
      if (meta.dq_tile < 0) {
        named_barrier_sync(full_barrier(buf, 1), kBarrierThreads);  // warpgroup 1's last arrival
        break;
      }
      int const tile = meta.dq_tile;
      float* dq_accum = a.dq_accum + int64_t(tile) * (Cfg::kBlockM * Cfg::kHeadDim);
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
        add_half(ss, dq_accum, buf, 0);
      }
      named_barrier_sync(full_barrier(buf, 1), kBarrierThreads);
      if (lane0) { add_half(ss, dq_accum, buf, 1); }
      // Hand each half back as soon as the engine has read it.
      if (lane0) { bulk_wait_group_read<1>(); }
      __syncwarp();
      named_barrier_arrive(empty_barrier(buf, 0), kBarrierThreads);
      if (lane0) { bulk_wait_group_read<0>(); }
      __syncwarp();
      named_barrier_arrive(empty_barrier(buf, 1), kBarrierThreads);
      if constexpr (Cfg::kDqInStage) {  // the stage's last reader: the producer may refill it
        if (lane0) {
          cutlass::arch::ClusterBarrier::arrive(&ss.pipeline_q.empty[buf]);
          cutlass::arch::ClusterBarrier::arrive(&ss.pipeline_do.empty[buf]);
        }
      }
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

  // Warpgroup wg's half of the partial in buffer buf, added into its place in the dQ tile
  // (one bulk group).
  CUTE_DEVICE static void add_half(SharedStorage& ss, float* dq_accum, int buf, int wg) {
    CUTE_UNROLL
    for (int part = 0; part < Cfg::kDqStagingParts; ++part) {
      bulk_reduce_add_f32(dq_accum + wg * Cfg::kDqElemsPerWarpGroup + part * kPartElems, staging(ss, buf, wg, part),
                          kPartBytes);
    }
    bulk_commit_group();
  }
};

}  // namespace dash
