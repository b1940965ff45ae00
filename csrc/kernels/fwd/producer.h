// Producer warp of the forward kernel: walks this CTA's tiles (FwdTileScheduler), loads
// each tile's Q (publishing the tile with it) and streams its KV tiles, last to first,
// through the K and V pipelines in the order the MMA warpgroups consume them:
// K[n-1], K[n-2], V[n-1], K[n-3], V[n-2], ..., V[0] (S of the next KV tile is issued
// before P V of the current one).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "kernel_params.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct FwdProducer {
  using SharedStorage = typename Cfg::SharedStorage;
  using Pipeline = typename Cfg::Pipeline;
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;
  static constexpr int kHeadDimV = Cfg::kHeadDimV;

  CUTE_DEVICE static void run(FwdKernelParams<Cfg> const& p, SharedStorage& ss) {
    if (cute::elect_one_sync()) {
      if constexpr (Cfg::kKvMulticast) {
        // The walk compiled per cluster rank, so that its half's TMA coordinates fold into
        // constants (from a run-time rank the step loops spill).
        if (cute::block_rank_in_cluster() == 0) {
          run_leader(p, ss, _0{});
        } else {
          run_leader(p, ss, _1{});
        }
      } else {
        run_leader(p, ss, _0{});
      }
    }
    __syncwarp();
  }

  // Rank: this CTA's rank in its cluster (Cfg::kKvMulticast), whose half of each K / V tile it
  // loads into both CTAs; otherwise 0, the one slice of a plain load.
  template <class Rank>
  CUTE_DEVICE static void run_leader(FwdKernelParams<Cfg> const& p, SharedStorage& ss, Rank) {
    Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Cfg::SmemLayoutQStages{});
    Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), typename Cfg::SmemLayoutK{});
    Tensor sV = make_tensor(make_smem_ptr(ss.v.data()), typename Cfg::SmemLayoutV{});
    Tensor mQ = p.tma_q.get_tma_tensor(p.shape_q());
    Tensor mK = p.tma_k.get_tma_tensor(p.shape_k());
    Tensor mV = p.tma_v.get_tma_tensor(p.shape_v());
    auto cta_tma_q = p.tma_q.get_slice(_0{});
    auto cta_tma_k = p.tma_k.get_slice(Rank{});
    auto cta_tma_v = p.tma_v.get_slice(Rank{});
    Tensor tQsQ = cta_tma_q.partition_D(sQ);  // (TMA, TMA_M, TMA_D, Q buffer)
    Tensor tKsK = cta_tma_k.partition_D(sK);  // (TMA, TMA_N, TMA_D, stage)
    Tensor tVsV = cta_tma_v.partition_D(sV);

    typename Pipeline::State k_state = Pipeline::producer_start();
    typename Pipeline::State v_state = Pipeline::producer_start();
    int ordinal = 0;  // tiles published so far: the parity of q_full / q_empty
    int const num_tiles = p.sched.total_tiles();
    for (int t = p.sched.first_tile(), next; t < num_tiles; t = next, ++ordinal) {
      FwdTileInfo const tile = p.sched.tile(t);
      int const batch = tile.seq.tensor_batch;
      int const kv_head = p.args.geo.kv_head(tile.head);
      // (N, D, n_block) views of the K and V of this head's K/V head.
      Tensor tKgK = cta_tma_k.partition_S(
          local_tile(domain_offset(make_coord(tile.seq.row_k, _0{}), mK(_, _, kv_head, batch)),
                     Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(_, _0{})));
      Tensor tVgV = cta_tma_v.partition_S(
          local_tile(domain_offset(make_coord(tile.seq.row_k, _0{}), mV(_, _, kv_head, batch)),
                     Shape<Int<kBlockN>, Int<kHeadDimV>>{}, make_coord(_, _0{})));
      // A stage's full barrier expects the whole tile: in a cluster the peer's half lands on it too.
      auto load = [&](auto const& tma, auto const& src, auto& dst, typename Pipeline::SharedStorage& pipe,
                      typename Pipeline::State& state, int n_block, uint32_t bytes) {
        Pipeline::producer_wait_empty(pipe, state);
        uint64_t* bar = Pipeline::producer_arm_full(pipe, state, bytes);
        if constexpr (Cfg::kKvMulticast) {
          copy(tma.with(*bar, uint16_t(0b11)), src(_, _, _, n_block), dst(_, _, _, state.index));
        } else {
          copy(tma.with(*bar), src(_, _, _, n_block), dst(_, _, _, state.index));
        }
        state.advance();
      };
      // Q (and the tile record) wait until the MMA warpgroups let go of the Q buffer's last tile.
      // With one buffer that is the previous tile, whose last S GEMM comes after this tile's first
      // K can load, so that K goes first; with two it is the tile before, long done: Q goes first.
      int const n_begin = tile.n_block_begin;
      int n_block = tile.n_block_end - 1;
      auto load_q = [&] {
        int const buffer = ordinal % Cfg::kQStages;
        publish(p, ss, ordinal, tile);
        // The sequence's rows start at row_q / row_k (packed); TMA zero-fills past the end.
        Tensor gQ = local_tile(domain_offset(make_coord(tile.seq.row_q, _0{}), mQ(_, _, tile.head, batch)),
                               Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(tile.m_block, _0{}));
        copy(p.tma_q.with(ss.q_full[buffer]), cta_tma_q.partition_S(gQ), tQsQ(_, _, _, buffer));
      };
      if constexpr (Cfg::kQStages > 1) { load_q(); }
      if (tile.num_n_blocks() > 0) { load(p.tma_k, tKgK, tKsK, ss.pipeline_k, k_state, n_block, Cfg::kTmaBytesK); }
      if constexpr (Cfg::kQStages == 1) { load_q(); }
      // The next tile is drawn once this tile's last K load is issued, a pipeline's depth
      // before the MMA warpgroups finish it, so a banded call's counter deals each tile to
      // the CTA that frees up first (greedy longest-first, bench/RESULTS.md item 253); the
      // atomic's latency hides behind the last V load. Drawn at the tile's start, a CTA
      // would commit to its next tile a whole tile early and the launch's end would spread
      // by the last two tiles' length instead of one.
      if (tile.num_n_blocks() > 0) {
        for (; n_block > n_begin; --n_block) {
          load(p.tma_k, tKgK, tKsK, ss.pipeline_k, k_state, n_block - 1, Cfg::kTmaBytesK);
          load(p.tma_v, tVgV, tVsV, ss.pipeline_v, v_state, n_block, Cfg::kTmaBytesV);
        }
        next = p.sched.next_tile(t);
        load(p.tma_v, tVgV, tVsV, ss.pipeline_v, v_state, n_begin, Cfg::kTmaBytesV);
      } else {
        next = p.sched.next_tile(t);
      }
    }
    // No more tiles: an empty tile record tells the MMA warpgroups to finish.
    publish(p, ss, ordinal, FwdTileInfo{SeqInfo{}, -1, -1, 0, 0});
    if constexpr (Cfg::kKvMulticast) {
      Pipeline::producer_tail(ss.pipeline_k, k_state);
      Pipeline::producer_tail(ss.pipeline_v, v_state);
    }
  }

  // Tile `ordinal`'s record, once its Q buffer is free; arms the buffer's q_full for the Q load that
  // follows (a tile record without Q, the last, completes it at once).
  CUTE_DEVICE static void publish(FwdKernelParams<Cfg> const& p, SharedStorage& ss, int ordinal, FwdTileInfo const& tile) {
    int const buffer = ordinal % Cfg::kQStages;
    int const use = ordinal / Cfg::kQStages;  // earlier tiles in this buffer
    if (use > 0) { cutlass::arch::ClusterBarrier::wait(&ss.q_empty[buffer], (use - 1) & 1); }
    ss.tile[ordinal % SharedStorage::kTileRecords] = tile;  // published by the arrive below
    if (tile.m_block >= 0) {
      cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&ss.q_full[buffer], Cfg::kTmaBytesQ);
    } else {
      cutlass::arch::ClusterBarrier::arrive(&ss.q_full[buffer]);
    }
  }
};

}  // namespace dash
