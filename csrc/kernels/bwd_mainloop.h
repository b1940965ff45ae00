// The two MMA warpgroups of the backward kernel: for every task (KV tile) they keep dK and
// dV in registers and, per Q tile, run the five GEMMs of the backward pass, hand the dQ
// partial to the writer warp, and finally store dK / dV.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/pipeline/pipeline.hpp>

#include "bwd_epilogue.h"
#include "bwd_kernel_params.h"
#include "sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdMainloop {
  using Element = typename Cfg::Element;
  using SharedStorage = typename Cfg::SharedStorage;
  using PipelineQ = typename Cfg::PipelineQ;
  using PipelinedO = typename Cfg::PipelinedO;
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;
  static constexpr bool kCausal = Cfg::kCausal;
  static constexpr int kDqBarrierThreads = 128 + 32;

  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss,
                              PipelineQ& pipe_q, PipelinedO& pipe_do) {
    BwdScheduleView const& sched = p.sched;
    int const mma_thread = threadIdx.x - 128;  // 0 .. kNumMmaThreads-1
    int const wg = __shfl_sync(0xffffffff, mma_thread / 128, 0);
    int const thread_in_wg = mma_thread % 128;

    typename Cfg::TiledMmaSdP mma_sdp;
    typename Cfg::TiledMmadKV mma_dkv;
    typename Cfg::TiledMmadQ mma_dq;
    // Warpgroup slices give the smem descriptors (identical for the warpgroup's threads);
    // thread slices give the accumulator coordinates.
    auto wg_sdp = mma_sdp.get_slice(wg * 128);
    auto wg_dkv = mma_dkv.get_slice(wg * 128);
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

    Tensor tSrK = wg_sdp.partition_fragment_A(sK);      // S^T = K Q^T
    Tensor tSrQ = wg_sdp.partition_fragment_B(sQ);
    Tensor tdPrV = wg_sdp.partition_fragment_A(sV);     // dP^T = V dO^T
    Tensor tdPrdO = wg_sdp.partition_fragment_B(sdO);
    Tensor tdVrdOt = wg_dkv.partition_fragment_B(sdOt); // dV += P^T dO
    Tensor tdKrQt = wg_dkv.partition_fragment_B(sQt);   // dK += dS^T Q
    Tensor tdQrDs = wg_dq.partition_fragment_A(sDs);    // dQ = dS K
    Tensor tdQrKt = wg_dq.partition_fragment_B(sKt);

    auto ds_store = make_tiled_copy_C(typename Cfg::SmemCopyAtomDs{}, mma_sdp);
    auto thr_ds_store = ds_store.get_thread_slice(mma_thread);
    Tensor tDsT = thr_ds_store.partition_D(as_position_independent_swizzle_tensor(sDsT));

    // (kv, q) coordinates of this thread's S^T / dP^T elements, viewed as (rows, cols).
    Tensor tScS = thr_sdp.partition_C(make_identity_tensor(Shape<Int<kBlockN>, Int<kBlockM>>{}));
    Tensor coords = make_tensor(tScS.data(), acc_layout_as_rows_cols(tScS.layout()));

    float const scale_log2 = p.scale_log2;
    int const seqlen_k = p.args.seqlen_k;
    int const causal_shift = p.args.seqlen_k - p.args.seqlen_q;

    // The dQ staging buffer starts out empty: stand in for the writer's first arrival.
    if (thread_in_wg < 32) { named_barrier_arrive(int(NamedBarrierId::kDqEmpty0) + wg, kDqBarrierThreads); }

    cutlass::PipelineState<Cfg::kStages> read_state;
    int task_iter = 0;
    for (int t = blockIdx.x; t < sched.num_tasks(); t += gridDim.x, ++task_iter) {
      BwdTask const task = sched.task(t);
      int const num_steps = sched.num_steps(task);
      int const kv_rows_valid = seqlen_k - task.n_block * kBlockN;

      Tensor acc_dk = partition_fragment_C(mma_dkv, Shape<Int<kBlockN>, Int<kHeadDim>>{});
      Tensor acc_dv = partition_fragment_C(mma_dkv, Shape<Int<kBlockN>, Int<kHeadDim>>{});
      clear(acc_dk);
      clear(acc_dv);
      cutlass::arch::ClusterBarrier::wait(&ss.kv_full, task_iter & 1);

      CUTE_NO_UNROLL
      for (int step = 0; step < num_steps; ++step) {
        int const m_block = sched.q_tile_at(task, step);
        int const stage = read_state.index();

        // ---- S^T = K Q^T and dP^T = V dO^T, back to back ----
        Tensor acc_s = partition_fragment_C(mma_sdp, Shape<Int<kBlockN>, Int<kBlockM>>{});
        Tensor acc_dp = partition_fragment_C(mma_sdp, Shape<Int<kBlockN>, Int<kBlockM>>{});
        pipe_q.consumer_wait(read_state);
        wgmma</*zero_init=*/true, /*wait=*/-1>(mma_sdp, tSrK, tSrQ(_, _, _, stage), acc_s);
        pipe_do.consumer_wait(read_state);
        wgmma</*zero_init=*/true, /*wait=*/-1>(mma_sdp, tdPrV, tdPrdO(_, _, _, stage), acc_dp);
        warpgroup_wait<1>();
        warpgroup_fence_operand(acc_s);

        // ---- P = exp2(S * scale * log2e - LSE * log2e); masked entries give 0 ----
        Tensor s = make_tensor(acc_s.data(), acc_layout_as_rows_cols(acc_s.layout()));
        float const* lse_log2 = ss.lse_log2.data() + stage * kBlockM;
        auto compute_p = [&](auto masked) {
          int const q0 = m_block * kBlockM + causal_shift - task.n_block * kBlockN;
          CUTE_UNROLL
          for (int c = 0; c < size<1>(s); ++c) {
            int const q_local = get<1>(coords(0, c));
            float const lse = lse_log2[q_local];
            CUTE_UNROLL
            for (int r = 0; r < size<0>(s); ++r) {
              float x = s(r, c);
              if constexpr (decltype(masked)::value) {
                int const kv_local = get<0>(coords(r, c));
                // kv >= seqlen_k is padding; causal: key kv visible to query q iff
                // kv <= q + seqlen_k - seqlen_q (bottom-right aligned).
                bool const out = kv_local >= kv_rows_valid || (kCausal && kv_local > q0 + q_local);
                if (out) { x = -INFINITY; }
              }
              s(r, c) = exp2f(x * scale_log2 - lse);
            }
          }
        };
        bool const needs_mask =
            kv_rows_valid < kBlockN ||
            (kCausal && (task.n_block + 1) * kBlockN - 1 > m_block * kBlockM + causal_shift);
        if (needs_mask) {
          compute_p(cute::true_type{});
        } else {
          compute_p(cute::false_type{});
        }

        // ---- dS = P * (dP - D) ----
        warpgroup_wait<0>();
        warpgroup_fence_operand(acc_dp);
        Tensor ds = make_tensor(acc_dp.data(), s.layout());
        float const* dpsum = ss.dpsum.data() + stage * kBlockM;
        CUTE_UNROLL
        for (int c = 0; c < size<1>(ds); ++c) {
          float const d = dpsum[get<1>(coords(0, c))];
          CUTE_UNROLL
          for (int r = 0; r < size<0>(ds); ++r) { ds(r, c) = s(r, c) * (ds(r, c) - d); }
        }
        Tensor p16 = convert_fragment<Element>(acc_s);
        Tensor ds16 = convert_fragment<Element>(acc_dp);

        // dS^T -> smem as dS: the dQ GEMM needs the KV rows of both warpgroups.
        copy(ds_store, thr_ds_store.retile_S(ds16), tDsT(_, _, _, stage));

        // ---- dV += P^T dO (P^T straight from registers) ----
        Tensor p_as_a = make_tensor(p16.data(), acc_layout_as_a_operand(p16.layout()));
        wgmma</*zero_init=*/false, /*wait=*/-1>(mma_dkv, p_as_a, tdVrdOt(_, _, _, stage), acc_dv);

        fence_proxy_async_smem();
        named_barrier_sync(int(NamedBarrierId::kDsReady), Cfg::kNumMmaThreads);

        // ---- dQ_partial = dS K ----
        Tensor acc_dq = partition_fragment_C(mma_dq, Shape<Int<kBlockM>, Int<kHeadDim>>{});
        wgmma</*zero_init=*/true, /*wait=*/1>(mma_dq, tdQrDs(_, _, _, stage), tdQrKt, acc_dq);
        pipe_do.consumer_release(read_state);  // dV GEMM (the last reader of dO) is done

        // ---- dK += dS^T Q (dS^T straight from registers) ----
        Tensor ds_as_a = make_tensor(ds16.data(), acc_layout_as_a_operand(ds16.layout()));
        wgmma</*zero_init=*/false, /*wait=*/1>(mma_dkv, ds_as_a, tdKrQt(_, _, _, stage), acc_dk);
        warpgroup_fence_operand(acc_dq);  // dQ GEMM complete

        // ---- hand the dQ partial to the writer warp ----
        named_barrier_sync(int(NamedBarrierId::kDqEmpty0) + wg, kDqBarrierThreads);
        float4* dq_smem = reinterpret_cast<float4*>(ss.dq.data() + wg * Cfg::kDqElemsPerWarpGroup) + thread_in_wg;
        CUTE_UNROLL
        for (int i = 0; i < Cfg::kDqElemsPerThread / 4; ++i) {
          dq_smem[i * 128] = make_float4(acc_dq(4 * i), acc_dq(4 * i + 1), acc_dq(4 * i + 2), acc_dq(4 * i + 3));
        }
        fence_proxy_async_smem();
        named_barrier_arrive(int(NamedBarrierId::kDqFull0) + wg, kDqBarrierThreads);

        warpgroup_wait<0>();
        warpgroup_fence_operand(acc_dk);
        pipe_q.consumer_release(read_state);  // dK GEMM (the last reader of Q) is done
        ++read_state;
      }

      // All GEMMs reading K and V have completed (wait<0> above).
      cutlass::arch::ClusterBarrier::arrive(&ss.kv_empty);
      BwdEpilogue<Cfg>::store(p, task, acc_dk, acc_dv, mma_thread);
    }
  }
};

}  // namespace dash
