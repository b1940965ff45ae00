// dQ writer warps: take each MMA warpgroup's slice of a dQ partial from shared memory and add it into
// dq_accum with bulk reduce-adds (deterministic mode: a tile's rank-0 partial is stored instead,
// so nothing zeroes dq_accum first). Where a partial goes (Q tile, rank, head) comes with it,
// as the producer warp's schedule decided it.
//
// Deterministic mode: a writer first waits for the dQ tile's semaphore to reach this task's
// rank, and releases the semaphore only after the add has *landed in global memory* (full
// bulk-group completion, not just the smem read), before it takes its next step: so a
// writer never holds one tile's turn while waiting for another's, and the only waits are
// the schedule's. That loop is serial (two L2 round trips a step) and set the pace at
// hdim 128, so two writers take alternate steps, writer w owning staging buffer w (step t
// in buffer t % 2): one writer's landing wait and release overlap the other's acquire, and
// the MMA warpgroups can hand over step t + 1 while step t still waits for its turn. Past
// kKvRows (one buffer) the two writers take alternate steps of the same buffer, in step order
// (turn barriers): one writer's landing wait and release overlap the other's next step. There
// a writer holding a tile's turn waits only for its own CTA's hand-offs of that step, whose
// previous step the other writer has acquired and issued by then (it passed the turn
// barrier), so no turn is held across a wait on another CTA.
// Non-deterministic mode has no such chain: one writer and one buffer (the protocol before
// the second writer) keep up. Two buffers there measured 4-6% slower in one A/B, but that
// A/B timed short blocks, which on the power-capped H200 move by up to ~15% with whatever
// ran just before (bench/RESULTS.md, 2026-11-23 evening), so the difference is not
// established either way.
// The producer publishes each step's buffer with its Q tile (buffer_of), so the MMA
// warpgroups hold no mode flag.
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
  static constexpr int kBytesPerWarpGroup = Cfg::kDqElemsPerWarpGroup * sizeof(float);
  static constexpr int kWarpGroups = Cfg::kNumMmaWarpGroups;
  static constexpr int kSlots = Cfg::kDqBuffers * kWarpGroups;  // (buffer, warpgroup) slices

  // Barrier ids of warpgroup wg's slice of buffer buf (the MMA warpgroups use the same): the
  // "full" ones, then the "empty" ones.
  CUTE_DEVICE static constexpr int full_barrier(int buf, int wg) {
    return int(BwdBarrier::kDqFirst) + kWarpGroups * buf + wg;
  }
  CUTE_DEVICE static constexpr int empty_barrier(int buf, int wg) { return full_barrier(buf, wg) + kSlots; }
  // One buffer (past kKvRows), deterministic mode: two writers take alternate steps of it. The
  // MMA warpgroups hand over the steps in order through the same full / empty barriers, so the
  // writers must meet those in step order too: each waits for the other's "turn" barrier (the
  // other has taken its last full barrier) before its own first full barrier of a step.
  static constexpr bool kSharedBuffer = Cfg::kDqBuffers == 1;
  CUTE_DEVICE static constexpr int turn_barrier(int writer) { return int(BwdBarrier::kDqFirst) + 2 * kSlots + writer; }
  static constexpr int kTurnThreads = 2 * 32;  // one writer warp arrives, the other syncs
  static_assert(int(BwdBarrier::kDqFirst) + 2 * kSlots + (kSharedBuffer ? 2 : 0) <= kNumHardwareBarriers,
                "out of named barriers");

  // Writers taking part: step t goes to writer t % num_writers, whose buffer is buffer_of(t).
  CUTE_DEVICE static int num_writers(AttnBwdParams const& a) { return a.deterministic ? Cfg::kDqWriters : 1; }
  CUTE_DEVICE static int buffer_of(AttnBwdParams const& a, int step) { return a.deterministic ? step % Cfg::kDqBuffers : 0; }
  // The last of the first `steps` steps that writer w takes (w < min(steps, writers)).
  CUTE_DEVICE static int last_step_of(int w, int writers, int steps) { return steps - 1 - (steps - 1 - w) % writers; }

  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss, int writer) {
    AttnBwdParams const& a = p.args;
    int const writers = num_writers(a);
    if (writer >= writers) { return; }
    bool const lane0 = threadIdx.x % 32 == 0;
    int const buf = kSharedBuffer ? 0 : writer;  // = buffer_of(every step of this writer)
    bool const alternate = kSharedBuffer && writers == 2;  // with the other writer, on one buffer
    // The buffer starts out free.
    if (!kSharedBuffer || writer == 0) {
      CUTE_UNROLL
      for (int wg = 0; wg < kWarpGroups; ++wg) { named_barrier_arrive(empty_barrier(buf, wg), kBarrierThreads); }
    }
    for (int step_count = writer;; step_count += writers) {
      float const* staging = ss.dq.data() + buf * (Cfg::kBlockM * Cfg::kHeadDim);
      if (alternate && step_count > 0) { named_barrier_sync(turn_barrier(writer), kTurnThreads); }
      named_barrier_sync(full_barrier(buf, 0), kBarrierThreads);
      BwdDqMeta const meta = ss.dq_meta[step_count % Cfg::kDqMetaRing];  // from the producer
      if (meta.dq_tile < 0) {
        CUTE_UNROLL
        for (int wg = 1; wg < kWarpGroups; ++wg) {  // the other warpgroups' last arrivals
          named_barrier_sync(full_barrier(buf, wg), kBarrierThreads);
        }
        // The first of the two closing records (rank 0): the MMA warpgroups still hand the other
        // writer its closing record through this buffer.
        if (alternate && meta.rank == 0) {
          named_barrier_arrive(turn_barrier(1 - writer), kTurnThreads);
          CUTE_UNROLL
          for (int wg = 0; wg < kWarpGroups; ++wg) { named_barrier_arrive(empty_barrier(buf, wg), kBarrierThreads); }
        }
        break;
      }
      int const tile = meta.dq_tile;
      float* dq_accum = a.dq_accum + int64_t(tile) * (Cfg::kBlockM * Cfg::kHeadDim);
      // Deterministic mode: the tile's first partial (rank 0, which every other add waits
      // behind) is stored, so dq_accum needs no zeroing (the preprocess skips it; tiles without
      // adds are written as zeros by the postprocess).
      bool const first_add = a.deterministic && meta.rank == 0;
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
        bulk_store_or_add_f32(dq_accum, staging, kBytesPerWarpGroup, first_add);
        bulk_commit_group();
      }
      CUTE_UNROLL
      for (int wg = 1; wg < kWarpGroups; ++wg) {
        named_barrier_sync(full_barrier(buf, wg), kBarrierThreads);
        if (lane0) {
          bulk_store_or_add_f32(dq_accum + wg * Cfg::kDqElemsPerWarpGroup, staging + wg * Cfg::kDqElemsPerWarpGroup,
                                kBytesPerWarpGroup, first_add);
          bulk_commit_group();
        }
      }
      if (alternate) { named_barrier_arrive(turn_barrier(1 - writer), kTurnThreads); }  // its step comes next
      // Hand each slice back as soon as the engine has read it (slice wg: all but the
      // kWarpGroups - 1 - wg groups committed after it).
      cute::for_each(cute::make_int_sequence<kWarpGroups>{}, [&](auto wg) {
        if (lane0) { bulk_wait_group_read<kWarpGroups - 1 - decltype(wg)::value>(); }
        __syncwarp();
        named_barrier_arrive(empty_barrier(buf, decltype(wg)::value), kBarrierThreads);
      });
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
