// The two MMA warpgroups of the backward kernel: for every task (KV tile) they keep dK and
// dV in registers and, per Q tile, run the five GEMMs of the backward pass, hand the dQ
// partial to a dQ writer warp, and finally store dK / dV.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "dq_writer.h"
#include "epilogue.h"
#include "kernel_params.h"
#include "../common/sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdMainloop {
  using Element = typename Cfg::Element;
  using SharedStorage = typename Cfg::SharedStorage;
  using Pipeline = typename Cfg::Pipeline;
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;
  static constexpr int kHeadDimV = Cfg::kHeadDimV;
  static constexpr bool kBanded = Cfg::kBanded;
  using DqWriter = BwdDqWriter<Cfg>;
  static constexpr int kDqBarrierThreads = DqWriter::kBarrierThreads;

  // Per-query statistics (LSE * log2e, or D) for the columns of this thread's S^T / dP^T
  // fragment. In the WGMMA accumulator a thread holds columns (lane % 4) * 2 + c0 + 8 * c2
  // (c0 in {0, 1}, c2 < kBlockM / 8): the eight lanes with the same lane % 4 share them.
  // With tall Q tiles (kBlockM = 128, 32 columns a thread) holding all of them costs
  // registers the MMA warps do not have, so each of those eight lanes keeps 1/8 and
  // the value is fetched with a shuffle when needed.
  struct RowStats {
    static constexpr int kColGroups = kBlockM / Cfg::kSdpWarpGroupsN / 8;  // c2 range
    static constexpr bool kShuffled = kBlockM >= 128;
    static constexpr int kHeld = kShuffled ? 2 * kColGroups / 8 : 2 * kColGroups;
    float value[kHeld];

    CUTE_DEVICE static RowStats load(float const* smem_stats, int q_offset) {
      RowStats stats;
      int const lane = threadIdx.x % 32;
      CUTE_UNROLL
      for (int i = 0; i < kHeld; ++i) {
        int const c0 = i % 2;
        int const c2 = kShuffled ? lane / 4 + 8 * (i / 2) : i / 2;
        stats.value[i] = smem_stats[q_offset + c0 + 8 * c2];
      }
      return stats;
    }
    // Column c's value read straight from smem (a path that must not keep `value` alive).
    CUTE_DEVICE static float load_at(float const* smem_stats, int q_offset, int c) {
      return smem_stats[q_offset + c % 2 + 8 * (c / 2)];
    }
    // Value for column c of the (rows, cols) fragment view: c0 = c % 2, c2 = c / 2.
    CUTE_DEVICE float at(int c) const {
      int const c0 = c % 2;
      int const c2 = c / 2;
      if constexpr (kShuffled) {
        int const lane = threadIdx.x % 32;
        return __shfl_sync(0xffffffff, value[2 * (c2 / 8) + c0], (c2 % 8) * 4 + lane % 4);
      } else {
        return value[2 * c2 + c0];
      }
    }
  };

  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss) {
    int const mma_thread = threadIdx.x - 128;  // 0 .. kNumMmaThreads-1
    int const wg = __shfl_sync(0xffffffff, mma_thread / 128, 0);
    int const thread_in_wg = mma_thread % 128;

    typename Cfg::TiledMmaSdP mma_sdp;
    typename Cfg::TiledMmadK mma_dk;
    typename Cfg::TiledMmadV mma_dv;
    typename Cfg::TiledMmadQ mma_dq;
    // Warpgroup slices give the smem descriptors (identical for the warpgroup's threads);
    // thread slices give the accumulator coordinates.
    auto wg_sdp = mma_sdp.get_slice(wg * 128);
    auto wg_dk = mma_dk.get_slice(wg * 128);
    auto wg_dv = mma_dv.get_slice(wg * 128);
    auto wg_dq = mma_dq.get_slice(wg * 128);
    auto thr_sdp = mma_sdp.get_thread_slice(mma_thread);

    Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Cfg::SmemLayoutQ{});
    Tensor sQt = make_tensor(make_smem_ptr(ss.q.data()), typename Cfg::SmemLayoutQt{});
    Tensor sdO = make_tensor(make_smem_ptr(ss.dout.data()), typename Cfg::SmemLayoutdO{});
    Tensor sdOt = make_tensor(make_smem_ptr(ss.dout.data()), typename Cfg::SmemLayoutdOt{});
    Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), typename Cfg::SmemLayoutK{});
    Tensor sKt = make_tensor(make_smem_ptr(ss.k.data()), typename Cfg::SmemLayoutKt{});
    Tensor sV = make_tensor(make_smem_ptr(ss.v.data()), typename Cfg::SmemLayoutV{});
    Tensor sDs = make_tensor(make_smem_ptr(ss.ds.data()), typename Cfg::SmemLayoutDs{});
    Tensor sDsT = make_tensor(make_smem_ptr(ss.ds.data()), typename Cfg::SmemLayoutDsT{});
    // Split head dims: P^T in smem, laid out as dS^T (kv, q).
    Tensor sPt = make_tensor(make_smem_ptr(reinterpret_cast<Element*>(&ss.p)), typename Cfg::SmemLayoutDsT{});

    Tensor tSrK = wg_sdp.partition_fragment_A(sK);      // S^T = K Q^T
    Tensor tSrQ = wg_sdp.partition_fragment_B(sQ);
    Tensor tdPrV = wg_sdp.partition_fragment_A(sV);     // dP^T = V dO^T
    Tensor tdPrdO = wg_sdp.partition_fragment_B(sdO);
    Tensor tdVrdOt = wg_dv.partition_fragment_B(sdOt);  // dV += P^T dO
    Tensor tdKrQt = wg_dk.partition_fragment_B(sQt);    // dK += dS^T Q
    Tensor tdQrDs = wg_dq.partition_fragment_A(sDs);    // dQ = dS K
    Tensor tdQrKt = wg_dq.partition_fragment_B(sKt);

    auto ds_store = make_tiled_copy_C(typename Cfg::SmemCopyAtomDs{}, mma_sdp);
    auto thr_ds_store = ds_store.get_thread_slice(mma_thread);
    Tensor tDsT = thr_ds_store.partition_D(as_position_independent_swizzle_tensor(sDsT));
    Tensor tPt = thr_ds_store.partition_D(as_position_independent_swizzle_tensor(sPt));

    // (kv, q) coordinates of the S^T / dP^T elements, viewed as (rows, cols). A thread's
    // coordinates are thread 0's (known at compile time) plus a per-thread offset, so the
    // masks below compare compile-time constants against per-thread scalars.
    auto identity_sdp = make_identity_tensor(Shape<Int<kBlockN>, Int<kBlockM>>{});
    Tensor tScS = thr_sdp.partition_C(identity_sdp);
    Tensor tScS0 = mma_sdp.get_thread_slice(0).partition_C(identity_sdp);
    Tensor coords0 = make_tensor(tScS0.data(), acc_layout_as_rows_cols(tScS0.layout()));
    int const kv_offset = get<0>(tScS(0));  // this thread's (kv, q) minus thread 0's
    int const q_offset = get<1>(tScS(0));

    float const scale_log2 = p.score.scale_log2;

    typename Pipeline::State read_state = Pipeline::consumer_start();
    // The dS / P smem buffer of a step: with as many pipeline stages as dS buffers, the
    // stage's; otherwise alternating per step (split head dims run one stage).
    int ds_parity = 0;
    // Tasks arrive from the producer warp with their K and V (kv_full); an empty task ends.
    for (int ordinal = 0;; ++ordinal) {
      cutlass::arch::ClusterBarrier::wait(&ss.kv_full, ordinal & 1);
      // Only what the loop needs is read here; the epilogue re-reads the rest (task_info
      // stays valid until kv_empty), so it holds no registers across the loop.
      int const num_steps = ss.task_info.num_steps;
      if (num_steps < 0) { break; }
      int const n_block = ss.task_info.n_block;
      SeqTiles const tiles = seq_tiles(ss.task_info.seq, kBlockM, kBlockN, Cfg::Mask::window(p.sched.mask));

      Tensor acc_dk = partition_fragment_C(mma_dk, Shape<Int<kBlockN>, Int<kHeadDim>>{});
      Tensor acc_dv = partition_fragment_C(mma_dv, Shape<Int<kBlockN>, Int<kHeadDimV>>{});
      clear(acc_dk);
      clear(acc_dv);

      CUTE_NO_UNROLL
      for (int step = 0; step < num_steps; ++step) {
        int const stage = read_state.index;

        // ---- S^T = K Q^T and dP^T = V dO^T, back to back ----
        Tensor acc_s = partition_fragment_C(mma_sdp, Shape<Int<kBlockN>, Int<kBlockM>>{});
        Tensor acc_dp = partition_fragment_C(mma_sdp, Shape<Int<kBlockN>, Int<kBlockM>>{});
        Pipeline::consumer_wait_full(ss.pipeline_q, read_state);
        int const m_block = ss.q_tile[stage];  // where the schedule is (published by the producer)
        // The row statistics are read from smem now, so the loads are in flight while the
        // GEMMs run: read after the S wait they queued behind the GEMMs' operand traffic
        // and stalled the softmax (short-scoreboard stalls on LSE were ~10% of the MMA
        // warps' samples in Nsight Compute).
        RowStats lse;
        if constexpr (!Cfg::kSoftcapKeepsDerivative) { lse = RowStats::load(ss.lse_log2.data() + stage * kBlockM, q_offset); }
        wgmma</*zero_init=*/true, /*wait=*/-1>(mma_sdp, tSrK, tSrQ(_, _, _, stage), acc_s);
        Pipeline::consumer_wait_full(ss.pipeline_do, read_state);
        wgmma</*zero_init=*/true, /*wait=*/-1>(mma_sdp, tdPrV, tdPrdO(_, _, _, stage), acc_dp);
        warpgroup_wait<1>();
        warpgroup_fence_operand(acc_s);

        // ---- P = exp2(S * scale * log2e - LSE * log2e) (softcap: the capped S, score_scale.h);
        //      masked entries give 0 ----
        Tensor s = make_tensor(acc_s.data(), acc_layout_as_rows_cols(acc_s.layout()));
        // Softcap, small fragments (Cfg::kSoftcapKeepsDerivative): d(capped)/d(scaled) = 1 - t^2
        // of each entry, kept from here to dS in fp16 (in [0, 1]: 11 bits, finer than dS's own
        // rounding to 16 bits; half the registers of fp32).
        Tensor dcap = make_tensor<cutlass::half_t>(make_layout(shape(s)));
        constexpr bool kKeep = Cfg::kSoftcapKeepsDerivative;
        auto compute_p = [&](auto masked, auto capped) {
          ElementMask const mask = tiles.element_mask(m_block, n_block, q_offset, kv_offset);
          CUTE_UNROLL
          for (int c = 0; c < size<1>(s); ++c) {
            int const q0 = get<1>(coords0(0, c));
            // Kept derivatives take the registers of the held LSE values: read them here instead.
            float const lse_c = kKeep ? RowStats::load_at(ss.lse_log2.data() + stage * kBlockM, q_offset, c) : lse.at(c);
            CUTE_UNROLL
            for (int r = 0; r < size<0>(s); ++r) {
              float x = s(r, c);
              if constexpr (decltype(capped)::value) {
                x = p.score.cap(x);
                if constexpr (kKeep) { dcap(r, c) = cutlass::half_t(fmaf(-x, x, 1.f)); }
              }
              if constexpr (decltype(masked)::value) {
                int const kv0 = get<0>(coords0(r, c));
                if (mask.template hidden<kBanded>(q0, kv0)) { x = -INFINITY; }
              }
              s(r, c) = exp2f(x * scale_log2 - lse_c);
            }
          }
        };
        if (tiles.partial(m_block, n_block)) {
          compute_p(cute::true_type{}, cute::bool_constant<Cfg::kSoftcap>{});
        } else {
          compute_p(cute::false_type{}, cute::bool_constant<Cfg::kSoftcap>{});
        }

        // ---- dS = P * (dP - D) ----
        RowStats const dpsum = RowStats::load(ss.dpsum.data() + stage * kBlockM, q_offset);
        warpgroup_wait<0>();
        warpgroup_fence_operand(acc_dp);
        Tensor ds = make_tensor(acc_dp.data(), s.layout());
        if constexpr (Cfg::kSoftcapKeepsDerivative) {  // times d(capped)/d(scaled), kept above
          CUTE_UNROLL
          for (int c = 0; c < size<1>(ds); ++c) {
            float const d = dpsum.at(c);
            CUTE_UNROLL
            for (int r = 0; r < size<0>(ds); ++r) { ds(r, c) = s(r, c) * (ds(r, c) - d) * float(dcap(r, c)); }
          }
        } else if constexpr (Cfg::kSoftcap) {  // times d(capped)/d(scaled), from P and the row's LSE
          // re-read from smem column by column (holding them all again does not fit; at hdim 64
          // even this spills a few registers, bench/RESULTS.md item 36)
          float const* smem_lse = ss.lse_log2.data() + stage * kBlockM;
          CUTE_UNROLL
          for (int c = 0; c < size<1>(ds); ++c) {
            float const d = dpsum.at(c);
            float const lse_c = RowStats::load_at(smem_lse, q_offset, c);
            CUTE_UNROLL
            for (int r = 0; r < size<0>(ds); ++r) {
              ds(r, c) = s(r, c) * (ds(r, c) - d) * p.score.dcap(s(r, c), lse_c);
            }
          }
        } else {
          CUTE_UNROLL
          for (int c = 0; c < size<1>(ds); ++c) {
            float const d = dpsum.at(c);
            CUTE_UNROLL
            for (int r = 0; r < size<0>(ds); ++r) { ds(r, c) = s(r, c) * (ds(r, c) - d); }
          }
        }
        Tensor p16 = convert_fragment<Element>(acc_s);
        Tensor ds16 = convert_fragment<Element>(acc_dp);
        int ds_buf = stage;
        if constexpr (Cfg::kStages != Cfg::kStagesDs) {
          ds_buf = ds_parity;
          ds_parity ^= 1;
        }

        // dS^T -> smem as dS: the dQ GEMM needs the KV rows of both warpgroups.
        copy(ds_store, thr_ds_store.retile_S(ds16), tDsT(_, _, _, ds_buf));

        if constexpr (!Cfg::kSplitHeadDim) {
          // ---- dV += P^T dO (P^T straight from registers) ----
          Tensor p_as_a = make_tensor(p16.data(), acc_layout_as_a_operand(p16.layout()));
          wgmma</*zero_init=*/false, /*wait=*/-1>(mma_dv, p_as_a, tdVrdOt(_, _, _, stage), acc_dv);
        } else {
          copy(ds_store, thr_ds_store.retile_S(p16), tPt(_, _, _, ds_buf));  // P^T -> smem
        }

        fence_proxy_async_smem();
        named_barrier_sync(int(BwdBarrier::kDsReady), Cfg::kNumMmaThreads);

        if constexpr (Cfg::kSplitHeadDim) {
          // ---- dV[:, this warpgroup's d_v-half] += P^T dO, P^T of both warpgroups from smem ----
          Tensor tdVrPt = wg_dv.partition_fragment_A(sPt);
          wgmma</*zero_init=*/false, /*wait=*/-1>(mma_dv, tdVrPt(_, _, _, ds_buf), tdVrdOt(_, _, _, stage), acc_dv);
        }

        // ---- dQ_partial = dS K ----
        Tensor acc_dq = partition_fragment_C(mma_dq, Shape<Int<kBlockM>, Int<kHeadDim>>{});
        wgmma</*zero_init=*/true, /*wait=*/1>(mma_dq, tdQrDs(_, _, _, ds_buf), tdQrKt, acc_dq);
        Pipeline::consumer_release(ss.pipeline_do, read_state);  // dV GEMM (last reader of dO) is done

        // ---- dK += dS^T Q ----
        if constexpr (!Cfg::kSplitHeadDim) {  // dS^T straight from registers
          Tensor ds_as_a = make_tensor(ds16.data(), acc_layout_as_a_operand(ds16.layout()));
          wgmma</*zero_init=*/false, /*wait=*/1>(mma_dk, ds_as_a, tdKrQt(_, _, _, stage), acc_dk);
        } else {  // dS^T of both warpgroups from smem
          Tensor tdKrDsT = wg_dk.partition_fragment_A(sDsT);
          wgmma</*zero_init=*/false, /*wait=*/1>(mma_dk, tdKrDsT(_, _, _, ds_buf), tdKrQt(_, _, _, stage), acc_dk);
        }
        warpgroup_fence_operand(acc_dq);  // dQ GEMM complete

        // ---- hand the dQ partial to this step's writer, in the buffer the producer named ----
        int const dq_buf = ss.dq_buffer[stage];
        named_barrier_sync(DqWriter::empty_barrier(dq_buf, wg), kDqBarrierThreads);
        float4* dq_smem = reinterpret_cast<float4*>(ss.dq.data() + dq_buf * (kBlockM * kHeadDim) +
                                                    wg * Cfg::kDqElemsPerWarpGroup) + thread_in_wg;
        CUTE_UNROLL
        for (int i = 0; i < Cfg::kDqElemsPerThread / 4; ++i) {
          dq_smem[i * 128] = make_float4(acc_dq(4 * i), acc_dq(4 * i + 1), acc_dq(4 * i + 2), acc_dq(4 * i + 3));
        }
        fence_proxy_async_smem();
        named_barrier_arrive(DqWriter::full_barrier(dq_buf, wg), kDqBarrierThreads);

        warpgroup_wait<0>();
        warpgroup_fence_operand(acc_dk);
        Pipeline::consumer_release(ss.pipeline_q, read_state);  // dK GEMM (last reader of Q) is done
        read_state.advance();
      }

      // All GEMMs reading K and V have completed (wait<0> above).
      BwdTaskInfo const info = ss.task_info;  // before kv_empty lets the producer replace it
      cutlass::arch::ClusterBarrier::arrive(&ss.kv_empty);
      BwdEpilogue<Cfg>::store(p, info, acc_dk, acc_dv, mma_thread);
    }
    // No more partials: hand each writer still waiting, in step order, the buffer where it
    // finds the producer's closing record. The producer lists them (-1 past the last): the
    // MMA warpgroups read no mode flag, as one kept live across the loop spilled the hdim 64
    // causal main loop.
    CUTE_UNROLL
    for (int i = 0; i < Cfg::kDqBuffers; ++i) {
      int const buf = ss.dq_closing[i];
      if (buf < 0) { break; }
      named_barrier_sync(DqWriter::empty_barrier(buf, wg), kDqBarrierThreads);
      named_barrier_arrive(DqWriter::full_barrier(buf, wg), kDqBarrierThreads);
    }
  }
};

}  // namespace dash
