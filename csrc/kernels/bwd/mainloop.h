// The MMA warpgroups of the backward kernel: for every task (KV tile) they keep dK and
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
  using PipelineQ = typename Cfg::PipelineQ;
  using PipelineDo = typename Cfg::PipelineDo;
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;
  static constexpr int kHeadDimV = Cfg::kHeadDimV;
  static constexpr bool kBanded = Cfg::kBanded;
  using DqWriter = BwdDqWriter<Cfg>;
  static constexpr int kDqBarrierThreads = DqWriter::kBarrierThreads;
  // Cfg::kDqWaitsByKeys: "warpgroup wg's dS of the step in Q stage `stage` is in smem", arrived at
  // by wg and waited at by the other warpgroup. wg reaches the same barrier again two steps
  // later, after that stage's next Q has landed, which needs the other warpgroup to have
  // released the stage, after its wait: no phase of a barrier sees a warpgroup arrive twice.
  CUTE_DEVICE static int ds_stored_barrier(int wg, int stage) {
    return int(BwdBarrier::kDsStoredFirst) + 2 * wg + stage;
  }

  // The S^T / dP^T fragment viewed as (kv, q): the accumulator's (rows, cols), or with
  // kKvCols (S / dP: rows are queries) its transpose, so the softmax below reads the same.
  template <class AccLayout>
  CUTE_DEVICE static constexpr auto kv_q_view(AccLayout acc) {
    auto const rows_cols = acc_layout_as_rows_cols(acc);
    if constexpr (Cfg::kKvCols) {
      return make_layout(get<1>(rows_cols), get<0>(rows_cols));
    } else {
      return rows_cols;
    }
  }
  // Which coordinate of the S / dP identity tensor is the key and which the query.
  static constexpr int kKvCoord = Cfg::kKvCols ? 1 : 0;
  static constexpr int kQCoord = 1 - kKvCoord;

  // Per-query statistics (LSE * log2e, or D) for the q columns of this thread's (kv, q)
  // fragment view. In the S^T accumulator a thread holds columns (lane % 4) * 2 + c0 + 8 * c2
  // (c0 in {0, 1}, c2 < kBlockM / 8): the eight lanes with the same lane % 4 share them.
  // With tall Q tiles (kBlockM = 128, 32 columns a thread) holding all of them costs
  // registers the MMA warps do not have, so each of those eight lanes keeps 1/8 and
  // the value is fetched with a shuffle when needed. With kKvCols a thread holds two S rows,
  // queries lane / 4 + 16 * warp + 8 c.
  struct RowStats {
    static constexpr int kColGroups = kBlockM / Cfg::kSdpWarpGroupsN / 8;  // c2 range
    static constexpr bool kShuffled = !Cfg::kKvCols && kBlockM >= 128;
    static constexpr int kHeld = Cfg::kKvCols ? 2 : kShuffled ? 2 * kColGroups / 8 : 2 * kColGroups;
    float value[kHeld];

    // Query of column c of the (kv, q) view, relative to the thread's q_offset.
    CUTE_DEVICE static constexpr int q_of(int c) { return Cfg::kKvCols ? 8 * c : c % 2 + 8 * (c / 2); }

    CUTE_DEVICE static RowStats load(float const* smem_stats, int q_offset) {
      RowStats stats;
      int const lane = threadIdx.x % 32;
      CUTE_UNROLL
      for (int i = 0; i < kHeld; ++i) {
        int const q = kShuffled ? i % 2 + 8 * (lane / 4 + 8 * (i / 2)) : q_of(i);
        stats.value[i] = smem_stats[q_offset + q];
      }
      return stats;
    }
    // Column c's value read straight from smem (a path that must not keep `value` alive).
    CUTE_DEVICE static float load_at(float const* smem_stats, int q_offset, int c) {
      return smem_stats[q_offset + q_of(c)];
    }
    // Value for column c of the (kv, q) fragment view.
    CUTE_DEVICE float at(int c) const {
      if constexpr (kShuffled) {
        int const c0 = c % 2;
        int const c2 = c / 2;
        int const lane = threadIdx.x % 32;
        return __shfl_sync(0xffffffff, value[2 * (c2 / 8) + c0], (c2 % 8) * 4 + lane % 4);
      } else {
        return value[c];
      }
    }
  };

  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss) {
    int const mma_thread = threadIdx.x - 128;  // 0 .. kNumMmaThreads-1
    int const wg = __shfl_sync(0xffffffff, mma_thread / 128, 0);
    int const thread_in_wg = mma_thread % 128;

    typename Cfg::TiledMmaSdP mma_sdp;
    typename Cfg::TiledMmadP mma_dp;  // mma_sdp's split; A (V) from registers where Cfg::kDpVInRegisters
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
    // Past kKvRows: P in smem, laid out as dS.
    // (Cfg::kPdsShareBuffer: P takes the dS buffer in turn.)
    Element* const p_smem = Cfg::kPdsShareBuffer ? ss.ds.data() : reinterpret_cast<Element*>(&ss.p);
    Tensor sP = make_tensor(make_smem_ptr(p_smem), typename Cfg::SmemLayoutDs{});
    Tensor sPt = make_tensor(make_smem_ptr(p_smem), typename Cfg::SmemLayoutDsT{});

    // S^T = K Q^T and dP^T = V dO^T; kKvCols: S = Q K^T and dP = dO V^T.
    Tensor tSrK = [&] { if constexpr (Cfg::kKvCols) { return wg_sdp.partition_fragment_B(sK); } else { return wg_sdp.partition_fragment_A(sK); } }();
    Tensor tSrQ = [&] { if constexpr (Cfg::kKvCols) { return wg_sdp.partition_fragment_A(sQ); } else { return wg_sdp.partition_fragment_B(sQ); } }();
    auto wg_dp = mma_dp.get_slice(wg * 128);
    Tensor tdPrV = [&] {
      if constexpr (Cfg::kKvCols) {
        return wg_sdp.partition_fragment_B(sV);
      } else if constexpr (Cfg::kDpVInRegisters) {
        return mma_dp.get_thread_slice(mma_thread).partition_fragment_A(sV);  // registers, filled per task
      } else {
        return wg_sdp.partition_fragment_A(sV);
      }
    }();
    Tensor tdPrdO = [&] { if constexpr (Cfg::kKvCols) { return wg_sdp.partition_fragment_A(sdO); } else { return wg_dp.partition_fragment_B(sdO); } }();
    // dV += P^T dO and dK += dS^T Q; kKvCols: dV^T += dO^T P and dK^T += Q^T dS.
    Tensor tdVrdOt = [&] { if constexpr (Cfg::kKvCols) { return wg_dv.partition_fragment_A(sdOt); } else { return wg_dv.partition_fragment_B(sdOt); } }();
    Tensor tdKrQt = [&] { if constexpr (Cfg::kKvCols) { return wg_dk.partition_fragment_A(sQt); } else { return wg_dk.partition_fragment_B(sQt); } }();
    Tensor tdQrDs = wg_dq.partition_fragment_A(sDs);    // dQ = dS K
    Tensor tdQrKt = wg_dq.partition_fragment_B(sKt);

    // Registers -> smem of dS^T and P^T (kKvCols: dS and P).
    auto ds_store = make_tiled_copy_C(typename Cfg::SmemCopyAtomDs{}, mma_sdp);
    auto thr_ds_store = ds_store.get_thread_slice(mma_thread);
    Tensor tDsT = thr_ds_store.partition_D(as_position_independent_swizzle_tensor([&] {
      if constexpr (Cfg::kKvCols) { return sDs; } else { return sDsT; }
    }()));
    Tensor tPt = thr_ds_store.partition_D(as_position_independent_swizzle_tensor([&] {
      if constexpr (Cfg::kKvCols) { return sP; } else { return sPt; }
    }()));

    // Coordinates of the S^T / dP^T elements ((kv, q); kKvCols: S / dP, (q, kv)), viewed as
    // (kv, q). A thread's coordinates are thread 0's (known at compile time) plus a per-thread
    // offset, so the masks below compare compile-time constants against per-thread scalars.
    auto identity_sdp = make_identity_tensor(
        cute::conditional_t<Cfg::kKvCols, Shape<Int<kBlockM>, Int<kBlockN>>, Shape<Int<kBlockN>, Int<kBlockM>>>{});
    Tensor tScS = thr_sdp.partition_C(identity_sdp);
    Tensor tScS0 = mma_sdp.get_thread_slice(0).partition_C(identity_sdp);
    Tensor coords0 = make_tensor(tScS0.data(), kv_q_view(tScS0.layout()));
    int const kv_offset = get<kKvCoord>(tScS(0));  // this thread's (kv, q) minus thread 0's
    int const q_offset = get<kQCoord>(tScS(0));

    float const scale_log2 = p.score.scale_log2;

    typename PipelineQ::State q_state = PipelineQ::consumer_start();
    typename PipelineDo::State do_state = PipelineDo::consumer_start();
    // The dS / P smem buffer of a step: with as many Q stages as dS buffers, the Q stage's;
    // otherwise alternating per step.
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

      if constexpr (Cfg::kDpVInRegisters) {  // this thread's share of V, smem -> registers (ldmatrix)
        auto v_load = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, Element>{}, mma_dp);
        auto thr_v_load = v_load.get_thread_slice(mma_thread);
        copy(v_load, thr_v_load.partition_S(as_position_independent_swizzle_tensor(sV)), thr_v_load.retile_D(tdPrV));
      }
      Tensor acc_dk = partition_fragment_C(mma_dk, typename Cfg::template DkvShape<kHeadDim>{});
      Tensor acc_dv = partition_fragment_C(mma_dv, typename Cfg::template DkvShape<kHeadDimV>{});
      clear(acc_dk);
      clear(acc_dv);

      CUTE_NO_UNROLL
      for (int step = 0; step < num_steps; ++step) {
        int const stage = q_state.index;      // Q, LSE, and the step's records
        int const do_stage = do_state.index;  // dO, D

        // ---- S^T = K Q^T and dP^T = V dO^T (kKvCols: S and dP), back to back ----
        using ShapeSdp = decltype(shape(identity_sdp));
        Tensor acc_s = partition_fragment_C(mma_sdp, ShapeSdp{});
        Tensor acc_dp = partition_fragment_C(mma_sdp, ShapeSdp{});
        PipelineQ::consumer_wait_full(ss.pipeline_q, q_state);
        BwdStepTile const step_tile = ss.q_tile[stage];  // where the schedule is (published by the producer)
        int const m_block = step_tile.m_block;
        // The row statistics are read from smem now, so the loads are in flight while the
        // GEMMs run: read after the S wait they queued behind the GEMMs' operand traffic
        // and stalled the softmax (short-scoreboard stalls on LSE were ~10% of the MMA
        // warps' samples in Nsight Compute).
        RowStats lse;
        if constexpr (!Cfg::kSoftcap) { lse = RowStats::load(ss.lse_log2.data() + stage * kBlockM, q_offset); }
        if constexpr (Cfg::kKvCols) {
          wgmma</*zero_init=*/true, /*wait=*/-1>(mma_sdp, tSrQ(_, _, _, stage), tSrK, acc_s);
        } else {
          wgmma</*zero_init=*/true, /*wait=*/-1>(mma_sdp, tSrK, tSrQ(_, _, _, stage), acc_s);
        }
        PipelineDo::consumer_wait_full(ss.pipeline_do, do_state);
        if constexpr (Cfg::kKvCols) {
          wgmma</*zero_init=*/true, /*wait=*/-1>(mma_sdp, tdPrdO(_, _, _, do_stage), tdPrV, acc_dp);
        } else {
          wgmma</*zero_init=*/true, /*wait=*/-1>(mma_dp, tdPrV, tdPrdO(_, _, _, do_stage), acc_dp);
        }
        // The rest of the step, from the S wait on, for a step with hidden entries (masked_step) or
        // without. Where the trait table's "bwd_mask" says "two_bodies" it is compiled once for each
        // and the step's flag picks one, so that from the S wait to the dS store each is a single
        // basic block, where the exponentials, the dS math and the dS stores interleave
        // (bench/RESULTS.md items 170-171); else ("before_exp") one body, whose branch on the flag
        // covers the P computation only. Inlined before anything else is optimized, so that a
        // one-body kernel compiles as it did with the body written in the loop (a lambda inlined
        // later was optimized on its own first, and ptxas rescheduled hdim 128's loop:
        // bench/RESULTS.md item 172).
        auto finish_step = [&](auto masked_step) __attribute__((always_inline)) {
          warpgroup_wait<1>();
          warpgroup_fence_operand(acc_s);

          // ---- P = exp2(S * scale * log2e - LSE * log2e) (softcap: the capped S, score_scale.h);
          //      masked entries give 0 ----
          Tensor s = make_tensor(acc_s.data(), kv_q_view(acc_s.layout()));  // (kv, q)
          // Softcap: d(capped)/d(scaled) = 1 - t^2 of each entry is folded into P as soon as P is
          // made: P goes to 16 bits for the dV GEMM there, a register pair at a time, and acc_s
          // keeps P (1 - t^2) in fp32 for dS, which is then P (1 - t^2) (dP - D) with no factor
          // held beside it (BwdConfig's softcap tile bound says why that fits).
          constexpr bool kKeep = Cfg::kSoftcap;
          Tensor p16 = make_tensor<Element>(acc_s.layout());
          auto compute_p = [&](auto masked, auto capped) {
            constexpr bool kFold = kKeep && decltype(capped)::value;
            static_assert(kFold == kKeep, "p16 is made here exactly in the softcap kernels (below: !kSoftcap)");
            float dcap_even[decltype(size(acc_s))::value];  // an even register's 1 - t^2 until its pair is made
            auto p16_pairs = recast<cutlass::Array<Element, 2>>(p16);
            cutlass::NumericArrayConverter<Element, float, 2> convert;
            ElementMask const mask = tiles.element_mask(m_block, n_block, q_offset, kv_offset);
            CUTE_UNROLL
            for (int c = 0; c < size<1>(s); ++c) {
              int const q0 = get<kQCoord>(coords0(0, c));
              // Kept derivatives take the registers of the held LSE values: read them here instead.
              float const lse_c = kKeep ? RowStats::load_at(ss.lse_log2.data() + stage * kBlockM, q_offset, c) : lse.at(c);
              CUTE_UNROLL
              for (int r = 0; r < size<0>(s); ++r) {
                float x = s(r, c);
                float dcap = 1.f;
                if constexpr (decltype(capped)::value) {
                  x = p.score.cap(x);
                  if constexpr (kKeep) { dcap = fmaf(-x, x, 1.f); }
                }
                if constexpr (decltype(masked)::value) {
                  int const kv0 = get<kKvCoord>(coords0(r, c));
                  if (mask.template hidden<kBanded>(q0, kv0)) { x = -INFINITY; }
                }
                float const pv = exp2f(x * scale_log2 - lse_c);
                if constexpr (kFold) {
                  // A register pair is two adjacent columns of the GEMM's N: (r, c), (r, c + 1) in
                  // the (kv, q) view, or (r, r + 1) with kKvCols; either way its even register comes
                  // first in this loop's order.
                  int const f = s.layout()(r, c);
                  if (f % 2 == 0) {
                    s(r, c) = pv;
                    dcap_even[f] = dcap;
                  } else {
                    cutlass::Array<float, 2> pair;
                    pair[0] = acc_s.data()[f - 1];
                    pair[1] = pv;
                    p16_pairs(f / 2) = convert(pair);
                    acc_s.data()[f - 1] = pair[0] * dcap_even[f - 1];
                    s(r, c) = pv * dcap;
                  }
                } else {
                  s(r, c) = pv;
                }
              }
            }
          };
          if constexpr (Cfg::kMaskTwoBodies) {
            compute_p(masked_step, cute::bool_constant<Cfg::kSoftcap>{});
          } else if (step_tile.masked) {
            compute_p(cute::true_type{}, cute::bool_constant<Cfg::kSoftcap>{});
          } else {
            compute_p(cute::false_type{}, cute::bool_constant<Cfg::kSoftcap>{});
          }

          if constexpr (Cfg::kPdsShareBuffer) {
            // ---- P -> smem and dV^T += dO^T P first: P and dS take one buffer in turn. Every warpgroup's GEMMs
            //      of the previous step, which read its dS there, have completed (each waited for its own). ----
            named_barrier_sync(int(BwdBarrier::kDsFree), Cfg::kNumMmaThreads);
            if constexpr (!Cfg::kSoftcap) {
              Tensor const p16_made = convert_fragment<Element>(acc_s);
              CUTE_UNROLL
              for (int i = 0; i < size(p16); ++i) { p16(i) = p16_made(i); }
            }
            copy(ds_store, thr_ds_store.retile_S(p16), tPt(_, _, _, 0));
            fence_proxy_async_smem();
            named_barrier_sync(int(BwdBarrier::kDsReady), Cfg::kNumMmaThreads);
            Tensor tdVrPt = wg_dv.partition_fragment_B(sPt);
            wgmma</*zero_init=*/false, /*wait=*/-1>(mma_dv, tdVrdOt(_, _, _, do_stage), tdVrPt(_, _, _, 0), acc_dv);
          }

          // ---- dS = P * (dP - D) ----
          // D is read while dP's GEMM runs, except where that is the registers' peak (Cfg::kReadDLate).
          RowStats dpsum;
          if constexpr (!Cfg::kReadDLate) { dpsum = RowStats::load(ss.dpsum.data() + do_stage * kBlockM, q_offset); }
          warpgroup_wait<Cfg::kPdsShareBuffer ? 1 : 0>();  // dP's GEMM (kPdsShareBuffer: the dV^T GEMM still runs)
          warpgroup_fence_operand(acc_dp);
          if constexpr (Cfg::kReadDLate) { dpsum = RowStats::load(ss.dpsum.data() + do_stage * kBlockM, q_offset); }
          Tensor ds = make_tensor(acc_dp.data(), s.layout());
          // With softcap s holds P (1 - t^2) (above), so dS = P (1 - t^2) (dP - D) alike.
          CUTE_UNROLL
          for (int c = 0; c < size<1>(ds); ++c) {
            float const d = dpsum.at(c);
            CUTE_UNROLL
            for (int r = 0; r < size<0>(ds); ++r) { ds(r, c) = s(r, c) * (ds(r, c) - d); }
          }
          if constexpr (!Cfg::kSoftcap && !Cfg::kPdsShareBuffer) {
            Tensor const p16_made = convert_fragment<Element>(acc_s);
            CUTE_UNROLL
            for (int i = 0; i < size(p16); ++i) { p16(i) = p16_made(i); }
          }
          Tensor ds16 = convert_fragment<Element>(acc_dp);
          int ds_buf = stage;
          if constexpr (Cfg::kPdsShareBuffer) {
            // Every warpgroup's dV^T GEMM has read P.
            warpgroup_wait<0>();
            ds_buf = 0;
            named_barrier_sync(int(BwdBarrier::kDsFree), Cfg::kNumMmaThreads);
          } else if constexpr (Cfg::kStagesDs == 1) {
            // One dS / P buffer: every warpgroup's GEMMs of the previous step, which read it, have
            // completed (each waited for its own before releasing that step's stage).
            ds_buf = 0;
            named_barrier_sync(int(BwdBarrier::kDsFree), Cfg::kNumMmaThreads);
          } else if constexpr (Cfg::kStagesQ != Cfg::kStagesDs) {
            ds_buf = ds_parity;
            ds_parity ^= 1;
          }

          // dS^T -> smem as dS: the dQ GEMM needs the KV rows of every warpgroup.
          copy(ds_store, thr_ds_store.retile_S(ds16), tDsT(_, _, _, ds_buf));

          if constexpr (!Cfg::kPdsInSmem) {
            // ---- dV += P^T dO (P^T straight from registers) ----
            Tensor p_as_a = make_tensor(p16.data(), acc_layout_as_a_operand(p16.layout()));
            wgmma</*zero_init=*/false, /*wait=*/-1>(mma_dv, p_as_a, tdVrdOt(_, _, _, do_stage), acc_dv);
          } else if constexpr (!Cfg::kPdsShareBuffer) {
            copy(ds_store, thr_ds_store.retile_S(p16), tPt(_, _, _, ds_buf));  // P^T (kKvCols: P) -> smem
          }

          fence_proxy_async_smem();
          if constexpr (Cfg::kDqWaitsByKeys) {
            named_barrier_arrive(ds_stored_barrier(wg, stage), Cfg::kNumMmaThreads);
          } else {
            named_barrier_sync(int(BwdBarrier::kDsReady), Cfg::kNumMmaThreads);
          }

          if constexpr (Cfg::kKvCols && !Cfg::kPdsShareBuffer) {
            // ---- dV^T[this warpgroup's rows or keys (Cfg::kDkvByHeadDim)] += dO^T P ----
            Tensor tdVrPt = wg_dv.partition_fragment_B(sPt);
            wgmma</*zero_init=*/false, /*wait=*/-1>(mma_dv, tdVrdOt(_, _, _, do_stage), tdVrPt(_, _, _, ds_buf), acc_dv);
          }

          auto issue_dk = [&](auto wait) __attribute__((always_inline)) {
            if constexpr (!Cfg::kPdsInSmem) {  // dS^T straight from registers
              Tensor ds_as_a = make_tensor(ds16.data(), acc_layout_as_a_operand(ds16.layout()));
              wgmma</*zero_init=*/false, decltype(wait)::value>(mma_dk, ds_as_a, tdKrQt(_, _, _, stage), acc_dk);
            } else {  // kKvCols: dK^T[this warpgroup's rows or keys] += Q^T dS
              Tensor tdKrDs = wg_dk.partition_fragment_B(sDsT);
              wgmma</*zero_init=*/false, decltype(wait)::value>(mma_dk, tdKrQt(_, _, _, stage), tdKrDs(_, _, _, ds_buf),
                                                                acc_dk);
            }
          };
          if constexpr (Cfg::kDqSlices == 1) {
            // ---- dQ_partial = dS K and dK += dS^T Q (Cfg::kDqGemmLast: dK first) ----
            Tensor acc_dq = partition_fragment_C(mma_dq, Shape<Int<kBlockM>, Int<kHeadDim>>{});
            auto issue_dq = [&](auto wait) __attribute__((always_inline)) {  // wait: as wgmma's
              if constexpr (Cfg::kDqWaitsByKeys) {
                // This warpgroup's keys (its KV rows) first, the other warpgroup's once its dS is stored.
                constexpr int kOwnBlocks = decltype(size<2>(tdQrKt))::value / 2;
                wgmma_k_blocks</*zero_init=*/true, /*wait=*/-1, kOwnBlocks>(mma_dq, tdQrDs(_, _, _, ds_buf), tdQrKt,
                                                                           acc_dq, wg * kOwnBlocks);
                named_barrier_sync(ds_stored_barrier(1 - wg, stage), Cfg::kNumMmaThreads);
                wgmma_k_blocks</*zero_init=*/false, decltype(wait)::value, kOwnBlocks>(
                    mma_dq, tdQrDs(_, _, _, ds_buf), tdQrKt, acc_dq, (1 - wg) * kOwnBlocks);
              } else {
                wgmma</*zero_init=*/true, decltype(wait)::value>(mma_dq, tdQrDs(_, _, _, ds_buf), tdQrKt, acc_dq);
              }
            };
            if constexpr (Cfg::kDqGemmLast) {
              issue_dk(cute::Int<1>{});
              PipelineDo::consumer_release(ss.pipeline_do, do_state);  // dV GEMM (last reader of dO) is done
              issue_dq(cute::Int<1>{});
              warpgroup_fence_operand(acc_dk);
              // dK GEMM (last reader of Q) is done. The hand-off below still reads the stage's dq_buffer
              // record, which names the same buffer for every step of the stage (BwdConfig::kDqGemmLast).
              PipelineQ::consumer_release(ss.pipeline_q, q_state);
              warpgroup_wait<0>();
            } else {
              issue_dq(cute::Int<1>{});
              PipelineDo::consumer_release(ss.pipeline_do, do_state);  // dV GEMM (last reader of dO) is done
              issue_dk(cute::Int<1>{});
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

            if constexpr (!Cfg::kDqGemmLast) {
              warpgroup_wait<0>();
              warpgroup_fence_operand(acc_dk);
              PipelineQ::consumer_release(ss.pipeline_q, q_state);  // dK GEMM (last reader of Q) is done
            }
          } else {
            // ---- the dQ partial in Cfg::kDqSlices slices (one accumulator's registers for all), each handed
            //      to the staging buffer before the next is issued; dK^T += Q^T dS beside the first, or before
            //      it (Cfg::kDqGemmLast: the Q stage is released while the first slice runs) ----
            int const dq_buf = ss.dq_buffer[stage];  // read before the Q stage is released
            if constexpr (Cfg::kDqGemmLast) {
              issue_dk(cute::Int<-1>{});
              PipelineDo::consumer_release(ss.pipeline_do, do_state);  // dV GEMM (last reader of dO) is done
            }
            float4* dq_smem = reinterpret_cast<float4*>(ss.dq.data() + dq_buf * (kBlockM * kHeadDim) +
                                                        wg * Cfg::kDqElemsPerWarpGroup) + thread_in_wg;
            constexpr int kSliceFloat4s = Cfg::kDqElemsPerThread / 4 / Cfg::kDqSlices;
            CUTE_UNROLL
            for (int slice = 0; slice < Cfg::kDqSlices; ++slice) {
              Tensor acc_slice = partition_fragment_C(mma_dq, Shape<Int<kBlockM>, Int<kHeadDim / Cfg::kDqSlices>>{});
              Tensor tdQrKt_slice = wg_dq.partition_fragment_B(
                  local_tile(sKt, Shape<Int<kHeadDim / Cfg::kDqSlices>, Int<kBlockN>>{}, make_coord(slice, _0{})));
              wgmma</*zero_init=*/true, /*wait=*/-1>(mma_dq, tdQrDs(_, _, _, ds_buf), tdQrKt_slice, acc_slice);
              if (slice == 0 && Cfg::kDqGemmLast) {
                warpgroup_wait<1>();
                warpgroup_fence_operand(acc_dk);
                PipelineQ::consumer_release(ss.pipeline_q, q_state);  // dK GEMM (last reader of Q) is done
                warpgroup_wait<0>();
              } else if (slice == 0) {
                PipelineDo::consumer_release(ss.pipeline_do, do_state);  // dV GEMM (last reader of dO) is done
                issue_dk(cute::Int<1>{});  // the slice, issued before it, is done
              } else {
                warpgroup_wait<0>();
              }
              warpgroup_fence_operand(acc_slice);
              if (slice == 0) { named_barrier_sync(DqWriter::empty_barrier(dq_buf, wg), kDqBarrierThreads); }
              CUTE_UNROLL
              for (int i = 0; i < kSliceFloat4s; ++i) {
                dq_smem[(slice * kSliceFloat4s + i) * 128] =
                    make_float4(acc_slice(4 * i), acc_slice(4 * i + 1), acc_slice(4 * i + 2), acc_slice(4 * i + 3));
              }
            }
            fence_proxy_async_smem();
            named_barrier_arrive(DqWriter::full_barrier(dq_buf, wg), kDqBarrierThreads);
            if constexpr (!Cfg::kDqGemmLast) {
              warpgroup_fence_operand(acc_dk);
              PipelineQ::consumer_release(ss.pipeline_q, q_state);  // dK GEMM (last reader of Q) is done
            }
          }
          q_state.advance();
          do_state.advance();
        };
        if constexpr (Cfg::kMaskTwoBodies) {
          if (step_tile.masked) {
            finish_step(cute::true_type{});
          } else {
            finish_step(cute::false_type{});
          }
        } else {
          finish_step(cute::false_type{});  // the body reads the step's flag itself
        }
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
    for (int i = 0; i < Cfg::kDqWriters; ++i) {
      int const buf = ss.dq_closing[i];
      if (buf < 0) { break; }
      named_barrier_sync(DqWriter::empty_barrier(buf, wg), kDqBarrierThreads);
      named_barrier_arrive(DqWriter::full_barrier(buf, wg), kDqBarrierThreads);
    }
  }
};

}  // namespace dash
