// The MMA warpgroups of the forward kernel. Per tile, with the KV tiles taken last to
// first (partial tiles, which need the mask, and the rest run in separately compiled steps):
//   S_n = Q K_n^T;  softmax(S_n) -> P_n
//   for each next KV tile n':  issue S_n' = Q K_n'^T, issue O += P_n V_n, and while
//     both run compute softmax(S_n') as soon as S_n' lands; then rescale O, P_n' = ...
//   O += P_last V_last; normalize; store O and LSE.
// So the softmax of one KV tile overlaps the P V GEMM of the previous one in the same
// warpgroup (FlashAttention-3's intra-warpgroup overlap).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/numeric_conversion.h>

#include "epilogue.h"
#include "kernel_params.h"
#include "softmax.h"
#include "../common/sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct FwdMainloop {
  using Element = typename Cfg::Element;
  using SharedStorage = typename Cfg::SharedStorage;
  using Pipeline = typename Cfg::Pipeline;
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDimV = Cfg::kHeadDimV;
  static constexpr bool kBanded = Cfg::kBanded;

  static constexpr int kNumWarpGroups = Cfg::kNumMmaWarpGroups;

  // The warpgroups take turns issuing their GEMMs, in a ring: 0, 1, (2,) 0, 1, ... Each
  // issue phase starts by waiting for this warpgroup's turn and ends by handing the turn
  // to the next one, so while one warpgroup computes its softmax the tensor cores run the
  // other's GEMMs instead of all warpgroups competing for them at once and then all
  // doing softmax at once. Every warpgroup has the same number of phases per tile
  // (num_n_blocks + 1), so the ring never gets out of step. A warpgroup waiting for its
  // turn has released every stage of its earlier phases, and so has every other warpgroup
  // by the time the turn comes round (each passed the turn after finishing its previous
  // step), so the producer, which loads in consumption order, can always bring in what the
  // turn holder waits for: K before the turn, V (used by the step's second GEMM) inside it.
  // (It pays at hdim 64's three warpgroups and is neutral at 128: bench/RESULTS.md.)
  struct GemmTurns {
    int wg;
    CUTE_DEVICE void start() const {  // the last warpgroup hands warpgroup 0 its first turn
      if (wg == kNumWarpGroups - 1) { named_barrier_arrive(int(FwdBarrier::kGemmTurn0), 256); }
    }
    CUTE_DEVICE void wait() const { named_barrier_sync(int(FwdBarrier::kGemmTurn0) + wg, 256); }
    CUTE_DEVICE void pass() const {
      named_barrier_arrive(int(FwdBarrier::kGemmTurn0) + (wg + 1) % kNumWarpGroups, 256);
    }
  };

  CUTE_DEVICE static void run(FwdKernelParams<Cfg> const& p, SharedStorage& ss) {
    int const mma_thread = threadIdx.x - 128;  // 0 .. kNumMmaThreads-1
    int const wg = __shfl_sync(0xffffffff, mma_thread / 128, 0);
    GemmTurns const turns{wg};
    if constexpr (Cfg::kFixedOffsetSoftcap) {
      // The row-sum GEMM's ones, written before the turn ring starts: a warpgroup's first GEMM comes
      // after a named barrier with the other warpgroups, so every thread's part (and its proxy
      // fence) is ordered before it.
      for (int i = mma_thread; i < int(ss.ones.size()); i += Cfg::kNumMmaThreads) { ss.ones[i] = Element(1.f); }
      cutlass::arch::fence_view_async_shared();
    }
    turns.start();

    typename Cfg::TiledMmaS mma_s;
    typename Cfg::TiledMmaO mma_o;
    // Warpgroup slices give the smem descriptors; thread slices the accumulator coordinates.
    auto wg_s = mma_s.get_slice(wg * 128);
    auto wg_o = mma_o.get_slice(wg * 128);
    auto thr_s = mma_s.get_thread_slice(mma_thread);
    auto thr_o = mma_o.get_thread_slice(mma_thread);

    Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Cfg::SmemLayoutQStages{});
    Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), typename Cfg::SmemLayoutK{});
    Tensor sVt = make_tensor(make_smem_ptr(ss.v.data()), typename Cfg::SmemLayoutVt{});
    Tensor tSrQ = wg_s.partition_fragment_A(sQ);
    Tensor tSrK = wg_s.partition_fragment_B(sK);    // (..., stage)
    Tensor tOrVt = wg_o.partition_fragment_B(sVt);  // (..., stage)
    typename Cfg::TiledMmaRowSum mma_sum;
    auto tSumB = [&] {
      if constexpr (Cfg::kFixedOffsetSoftcap) {
        return mma_sum.get_slice(wg * 128).partition_fragment_B(
            make_tensor(make_smem_ptr(ss.ones.data()), typename Cfg::SmemLayoutOnes{}));
      } else {
        return 0;
      }
    }();

    // (q, kv) coordinates of the S elements as (rows, cols): thread 0's (compile-time
    // constants) plus this thread's offset, so the masks compare constants to scalars.
    Tensor tScS = thr_s.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));
    Tensor tScS0 = mma_s.get_thread_slice(0).partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));
    Tensor coords0 = make_tensor(tScS0.data(), acc_layout_as_rows_cols(tScS0.layout()));
    int const q_offset = get<0>(tScS(0));
    int const kv_offset = get<1>(tScS(0));
    Tensor tOcO = thr_o.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDimV>>{}));
    Tensor o_coords = make_tensor(tOcO.data(), acc_layout_as_rows_cols(tOcO.layout()));

    float const scale_log2 = p.score.scale_log2;

    typename Pipeline::State k_state = Pipeline::consumer_start();
    typename Pipeline::State v_state = Pipeline::consumer_start();
    // A K / V stage let go; in a cluster (Cfg::kKvMulticast) by lane 0 of each warp, on this CTA and its peer.
    uint32_t const kv_self = Cfg::kKvMulticast ? cute::block_rank_in_cluster() : 0u;
    uint32_t const kv_peer = kv_self ^ 1u;
    bool const kv_signals = threadIdx.x % 32 == 0;
    auto release_kv = [&](typename Pipeline::SharedStorage& pipe, typename Pipeline::State st)
                          __attribute__((always_inline)) {
      if constexpr (Cfg::kKvMulticast) {
        Pipeline::consumer_release_pair(pipe, st, kv_self, kv_peer, kv_signals);
      } else {
        Pipeline::consumer_release(pipe, st);
      }
    };
    for (int ordinal = 0;; ++ordinal) {
      int const q_buffer = ordinal % Cfg::kQStages;
      cutlass::arch::ClusterBarrier::wait(&ss.q_full[q_buffer], (ordinal / Cfg::kQStages) & 1);
      FwdTileInfo const& tile = ss.tile[ordinal % SharedStorage::kTileRecords];
      int const m_block = tile.m_block;
      if (m_block < 0) { break; }

      Tensor acc_o = partition_fragment_C(mma_o, Shape<Int<kBlockM>, Int<kHeadDimV>>{});
      Tensor o = make_tensor(acc_o.data(), acc_layout_as_rows_cols(acc_o.layout()));
      constexpr int kRows = decltype(size<0>(o))::value;
      using Softmax = OnlineSoftmax<kRows, Cfg::kLazyRescale>;
      Softmax softmax;
      // Capped scores with a fixed offset instead of the running max, where the kernel has that walk
      // (Cfg::kFixedOffsetSoftcap) and the call's softcap allows it: the walk's own softmax.
      bool const fixed_offset = Cfg::kFixedOffsetSoftcap && p.score.fixed_offset_fits();
      using Capped = CappedSoftmax<kRows, Cfg::kCappedExp2OnFmaPerFour>;
      Capped capped_softmax{p.score.fixed_offset_log2()};
      // The row-sum GEMM's accumulator (its rows are O's, every column a row's sum of P), defined
      // only in the fixed-offset walk's branch (below).
      Tensor acc_rowsum = partition_fragment_C(mma_sum, Shape<Int<kBlockM>, Int<Cfg::kRowSumCols>>{});
      float o_scale[kRows];
      // Whether O must be multiplied by o_scale before the next P V accumulates into it (the last
      // softmax moved some row's max: softmax.h, always without Cfg::kLazyRescale); the first P V
      // meets a zero O.
      bool rescale_o = false;
      auto rescale = [&]() __attribute__((always_inline)) {
        if (rescale_o) { Softmax::rescale(o, o_scale); }
      };
      clear(acc_o);

      // Scores of the keys a query may not see become -inf: keys past the sequence's end and,
      // for a banded mask, keys outside the (bottom-right aligned) band.
      SeqTiles const tiles = seq_tiles(tile.seq, kBlockM, kBlockN, Cfg::Mask::window(p.args.mask));
      auto apply_mask = [&](auto& s, int n_block) __attribute__((always_inline)) {
        ElementMask const mask = tiles.element_mask(m_block, n_block, q_offset, kv_offset);
        auto hide = [&](auto hidden) __attribute__((always_inline)) {
          CUTE_UNROLL
          for (int r = 0; r < size<0>(s); ++r) {
            CUTE_UNROLL
            for (int c = 0; c < size<1>(s); ++c) {
              if (hidden(get<0>(coords0(r, c)), get<1>(coords0(r, c)))) { s(r, c) = -INFINITY; }
            }
          }
        };
        // A causal diagonal's tiles (inside the keys) meet the band's right edge only: one
        // compare an entry there (a causal mask is a band with run-time bounds, like a window).
        if (kBanded && mask.right_edge_only(kBlockM, kBlockN)) {
          hide([&](int q0, int kv0) __attribute__((always_inline)) { return mask.right_of_band(q0, kv0); });
        } else {
          hide([&](int q0, int kv0) __attribute__((always_inline)) { return mask.template hidden<kBanded>(q0, kv0); });
        }
      };
      // Softcap (score_scale.h) then the mask, where the step's flags ask: compile-time flags
      // (true_type / false_type) or, with Cfg::kScoreTestsAtRunTime, run-time bools.
      auto modify_scores = [&](auto& s, int n_block, auto masked, auto capped) __attribute__((always_inline)) {
        if (capped) {
          CUTE_UNROLL
          for (int i = 0; i < size(s); ++i) { s(i) = p.score.cap(s(i)); }
        }
        if (masked) { apply_mask(s, n_block); }
      };

      int const num_n_blocks = tile.num_n_blocks();
      int const n_block_begin = tile.n_block_begin;
      if (num_n_blocks == 0) {
        // No row of this tile sees a key (above a causal diagonal, outside a window): O = 0,
        // LSE = -inf.
        cutlass::arch::ClusterBarrier::arrive(&ss.q_empty[q_buffer]);
      } else {
        Tensor tOrP = make_tensor<Element>(partition_fragment_C(mma_s, Shape<Int<kBlockM>, Int<kBlockN>>{}).layout());
        Tensor p_as_a = make_tensor(tOrP.data(), acc_layout_as_a_operand(tOrP.layout()));
        // O += P V (and, in the fixed-offset walk, its row sums: P times ones) in one commit group.
        auto issue_pv = [&](auto const& softmax) __attribute__((always_inline)) {
          if constexpr (std::is_same_v<std::decay_t<decltype(softmax)>, Capped>) {
            wgmma_pair(mma_o, mma_sum, p_as_a, tOrVt(_, _, _, v_state.index), acc_o, tSumB, acc_rowsum);
          } else {
            wgmma</*zero_init=*/false, /*wait=*/-1>(mma_o, p_as_a, tOrVt(_, _, _, v_state.index), acc_o);
          }
        };
        auto to_p = [&](auto const& acc_s) __attribute__((always_inline)) {
          auto src = recast<cutlass::Array<float, 2> const>(acc_s);
          auto dst = recast<cutlass::Array<Element, 2>>(tOrP);
          cutlass::NumericArrayConverter<Element, float, 2> convert;
          CUTE_UNROLL
          for (int i = 0; i < size(src); ++i) { dst(i) = convert(src(i)); }
        };

        // ---- KV tiles past this warpgroup's rows' reach ----
        // On a causal diagonal (a band's right edge) a tall tile's upper warpgroups see fewer KV
        // tiles than its last rows: at hdim 64's 192 x 128 tile one or two of the three
        // warpgroups see nothing of the tile's last KV tile. Such a warpgroup passes those steps
        // without GEMMs (its scores would all be -inf and its P zero): it waits for each stage
        // before releasing it (an early arrival would count towards the stage's previous use)
        // and keeps its turns, so the ring stays in step; its walk then starts at its own last
        // KV tile. It keeps at least one step (the tile's last), as every warpgroup must.
        int n_block = tile.n_block_end - 1;
        int passed = 0;
        if constexpr (kBanded && kNumWarpGroups > 1) {
          int const own_end = tiles.n_block_end_of_rows(m_block, (wg + 1) * Cfg::kRowsPerWarpGroup);
          passed = max(0, min(tile.n_block_end - own_end, num_n_blocks - 1));
        }
        for (int i = 0; i < passed; ++i, --n_block) {
          Pipeline::consumer_wait_full(ss.pipeline_k, k_state);
          turns.wait();
          if (i > 0) { Pipeline::consumer_wait_full(ss.pipeline_v, v_state); }
          turns.pass();
          release_kv(ss.pipeline_k, k_state);
          k_state.advance();
          if (i > 0) {
            release_kv(ss.pipeline_v, v_state);
            v_state.advance();
          }
        }

        // ---- the first (last-indexed) KV tile of the walk ----
        // After passed steps it also passes on the V of the last tile it passed (in its turn, where
        // a step waits for V).
        auto first_step = [&](auto masked, auto capped, auto& softmax) __attribute__((always_inline)) {
          Tensor acc_s = partition_fragment_C(mma_s, Shape<Int<kBlockM>, Int<kBlockN>>{});
          Pipeline::consumer_wait_full(ss.pipeline_k, k_state);
          turns.wait();
          wgmma</*zero_init=*/true, /*wait=*/-1>(mma_s, tSrQ(_, _, _, q_buffer), tSrK(_, _, _, k_state.index), acc_s);
          if (passed > 0) { Pipeline::consumer_wait_full(ss.pipeline_v, v_state); }
          turns.pass();
          warpgroup_wait<0>();
          warpgroup_fence_operand(acc_s);
          release_kv(ss.pipeline_k, k_state);
          k_state.advance();
          if (passed > 0) {
            release_kv(ss.pipeline_v, v_state);
            v_state.advance();
          }
          if (n_block == n_block_begin) { cutlass::arch::ClusterBarrier::arrive(&ss.q_empty[q_buffer]); }
          Tensor s = make_tensor(acc_s.data(), acc_layout_as_rows_cols(acc_s.layout()));
          modify_scores(s, n_block, masked, capped);
          softmax.template update</*first=*/true>(s, scale_log2, o_scale);
          to_p(acc_s);
        };

        // ---- the rest: S of tile n-1 and P V of tile n in flight together ----
        // Where O is rescaled to the last softmax's running max (Cfg::kRescaleBeforePv): while
        // S runs, just before the P V GEMM that accumulates into it, or after P V completes.
        // A step is one straight-line block from its turn to P: with a run-time mask or softcap
        // test inside, ptxas placed the P V wait at the top of the softmax's block, so the
        // softmax no longer overlapped this warpgroup's own P V GEMM (bench/RESULTS.md item 89).
        // (The lambdas are always_inline: a step NVVM kept out of line held S and O in local
        // memory, and ptxas serialized its GEMMs.)
        auto step = [&](auto masked, auto capped, auto& softmax) __attribute__((always_inline)) {
          Tensor acc_s = partition_fragment_C(mma_s, Shape<Int<kBlockM>, Int<kBlockN>>{});
          Pipeline::consumer_wait_full(ss.pipeline_k, k_state);
          turns.wait();
          wgmma</*zero_init=*/true, /*wait=*/-1>(mma_s, tSrQ(_, _, _, q_buffer), tSrK(_, _, _, k_state.index), acc_s);
          // V's wait while S runs: off the warpgroup's critical path (bench/RESULTS.md item 95).
          Pipeline::consumer_wait_full(ss.pipeline_v, v_state);
          if constexpr (Cfg::kRescaleBeforePv) { rescale(); }
          issue_pv(softmax);
          turns.pass();
          warpgroup_wait<1>();  // S landed; P V still running
          warpgroup_fence_operand(acc_s);
          release_kv(ss.pipeline_k, k_state);
          k_state.advance();
          if (n_block == n_block_begin) { cutlass::arch::ClusterBarrier::arrive(&ss.q_empty[q_buffer]); }
          Tensor s = make_tensor(acc_s.data(), acc_layout_as_rows_cols(acc_s.layout()));
          modify_scores(s, n_block, masked, capped);
          bool const rescale_next = softmax.template update</*first=*/false>(s, scale_log2, o_scale);
          warpgroup_wait<0>();  // P V done: P may be overwritten
          warpgroup_fence_operand(acc_o);
          release_kv(ss.pipeline_v, v_state);
          v_state.advance();
          rescale_o = rescale_next;
          if constexpr (!Cfg::kRescaleBeforePv) { rescale(); }
          to_p(acc_s);
        };

        // ---- the last P V (of the walk's last step's P) ----
        auto last_pv = [&](auto const& softmax) __attribute__((always_inline)) {
          Pipeline::consumer_wait_full(ss.pipeline_v, v_state);
          turns.wait();
          if constexpr (Cfg::kRescaleBeforePv) { rescale(); }
          issue_pv(softmax);
          turns.pass();
          warpgroup_wait<0>();
          warpgroup_fence_operand(acc_o);
          release_kv(ss.pipeline_v, v_state);
          v_state.advance();
        };

        // Each KV tile runs the step compiled for its mask test, in a loop of its own: the partial
        // tiles (a causal diagonal, a window's edges, the keys' end) are the runs above and below
        // the unmasked range [lo, hi) (SeqTiles::unmasked_n_blocks), so the walk is three loops
        // with plain bounds, last to first: partial, unmasked, partial. Each step's bookkeeping
        // stays inside its own loop body (one shared loop with a branch to either step added a
        // join of ~17 uniform instructions a KV tile), and the unmasked loop tests one integer a
        // tile whatever the mask (the mask's tile test in its condition made the band kernel's
        // loop slower than the full one's: bench/RESULTS.md item 96). The call's softcap test
        // picks one of two copies of the whole walk; in the fixed-offset softcap kernel, its cap
        // picks the fixed-offset walk or the running-max one.
        auto const unmasked = tiles.unmasked_n_blocks(m_block);
        auto walk = [&](auto capped, auto& softmax) __attribute__((always_inline)) {
          if (n_block >= unmasked.hi || n_block < unmasked.lo) {
            first_step(true_type{}, capped, softmax);
          } else {
            first_step(false_type{}, capped, softmax);
          }
          CUTE_NO_UNROLL
          for (--n_block; n_block >= unmasked.hi; --n_block) { step(true_type{}, capped, softmax); }
          CUTE_NO_UNROLL
          for (; n_block >= unmasked.lo; --n_block) { step(false_type{}, capped, softmax); }
          CUTE_NO_UNROLL
          for (; n_block >= n_block_begin; --n_block) { step(true_type{}, capped, softmax); }
        };
        if constexpr (Cfg::kScoreTestsAtRunTime) {  // one step, both tests inside (traits.py)
          bool const capped = p.score.capped();
          auto const partial = [&](int n) { return n >= unmasked.hi || n < unmasked.lo; };
          first_step(partial(n_block), capped, softmax);
          CUTE_NO_UNROLL
          for (--n_block; n_block >= n_block_begin; --n_block) { step(partial(n_block), capped, softmax); }
          last_pv(softmax);
        } else if constexpr (Cfg::kFixedOffsetSoftcap) {  // its calls have softcap > 0
          // acc_rowsum is defined (cleared) and accumulated in this branch only: ptxas serializes
          // every wgmma of a kernel where other instructions define a wgmma's accumulator registers
          // while it might be in flight (C7515; tools/check_sass.py fails such kernels).
          if (fixed_offset) {
            clear(acc_rowsum);
            walk(true_type{}, capped_softmax);
            last_pv(capped_softmax);
          } else {
            walk(true_type{}, softmax);
            last_pv(softmax);
          }
        } else {
          if (p.score.capped()) {
            walk(true_type{}, softmax);
          } else {
            walk(false_type{}, softmax);
          }
          last_pv(softmax);
        }
      }

      float lse[kRows];
      if (num_n_blocks == 0) {
        CUTE_UNROLL
        for (int r = 0; r < kRows; ++r) { lse[r] = -INFINITY; }
      } else if (fixed_offset) {
        capped_softmax.finalize(o, make_tensor(acc_rowsum.data(), acc_layout_as_rows_cols(acc_rowsum.layout())), lse);
      } else {
        softmax.finalize(o, scale_log2, lse);
      }
      FwdEpilogue<Cfg>::store(p, ss, tile, o, o_coords, lse);
    }
    FwdEpilogue<Cfg>::drain();
  }
};

}  // namespace dash
