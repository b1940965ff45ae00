// Epilogue of a backward task: dK (scaled by softmax_scale) and dV go from the MMA
// warpgroups' registers straight to global memory, rows past the sequence's keys masked off.
// Written once per task, so plain 4-byte stores are a negligible share of the time and
// keep shared memory free for the next task's loads.
//
// Split query-head groups (schedule.h, parts > 1): each part stores its fp32 dK / dV
// partial to its own slot of dkv_accum, in fragment order (MMA thread t's j-th pair of
// adjacent values at j * threads + t: coalesced, no smem), and attn_bwd_dkv_sum_kernel
// (prepost.h) adds the parts in part order after the main kernel: a fixed order whoever ran
// them, in both modes, and no wait between CTAs. (Adding in turn inside this kernel, through
// a semaphore, made the MMA warpgroups' main loop spill: bench/RESULTS.md.)
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/numeric_conversion.h>

#include "kernel_params.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdEpilogue {
  using Element = typename Cfg::Element;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;

  // Part `task.part`'s slot: (kv_tile * parts + part) tiles of 2 * block_n * head_dim floats
  // (dK, then dV).
  CUTE_DEVICE static float2* dkv_part(AttnBwdParams const& a, BwdTaskInfo const& task, int parts) {
    int64_t const slot = a.geo.kv_tile(task.seq, task.kv_head, task.n_block, kBlockN) * parts + task.part;
    return reinterpret_cast<float2*>(a.dkv_accum + slot * (2 * kBlockN * kHeadDim));
  }

  // dK (scaled) and dV values (i, i + 1) of the tile, rows past the sequence's keys dropped.
  template <class Coords>
  CUTE_DEVICE static void store_pair(AttnBwdParams const& a, Coords const& coords, int i, int rows_valid,
                                     Element* dk, Element* dv, float2 k2, float2 v2) {
    cutlass::NumericArrayConverter<Element, float, 2> convert;
    int const row = get<0>(coords(i));
    int const col = get<1>(coords(i));
    if (row < rows_valid) {
      cutlass::Array<float, 2> k_out{k2.x * a.softmax_scale, k2.y * a.softmax_scale};
      cutlass::Array<float, 2> v_out{v2.x, v2.y};
      *reinterpret_cast<cutlass::Array<Element, 2>*>(dk + row * a.dk_row_stride + col) = convert(k_out);
      *reinterpret_cast<cutlass::Array<Element, 2>*>(dv + row * a.dv_row_stride + col) = convert(v_out);
    }
  }

  template <class FragDkv>
  CUTE_DEVICE static void store(BwdKernelParams<Cfg> const& p, BwdTaskInfo const& task,
                                FragDkv const& acc_dk, FragDkv const& acc_dv, int mma_thread) {
    AttnBwdParams const& a = p.args;
    // Split groups: this part's fp32 partial goes to its slot; the sum kernel adds the parts.
    if (p.sched.parts > 1) {
      constexpr int kPairs = decltype(size(acc_dk))::value / 2;
      float2* const dk_part = dkv_part(a, task, p.sched.parts) + mma_thread;
      float2* const dv_part = dk_part + kPairs * Cfg::kNumMmaThreads;
      CUTE_UNROLL
      for (int j = 0; j < kPairs; ++j) {
        dk_part[j * Cfg::kNumMmaThreads] = make_float2(acc_dk(2 * j), acc_dk(2 * j + 1));
        dv_part[j * Cfg::kNumMmaThreads] = make_float2(acc_dv(2 * j), acc_dv(2 * j + 1));
      }
      return;
    }
    typename Cfg::TiledMmadKV mma_dkv;
    auto thr_dkv = mma_dkv.get_thread_slice(mma_thread);
    Tensor coords = thr_dkv.partition_C(make_identity_tensor(Shape<Int<kBlockN>, Int<kHeadDim>>{}));
    static_assert(decltype(size(coords))::value == decltype(size(acc_dk))::value);
    int const rows_valid = task.seq.len_k - task.n_block * kBlockN;
    int64_t const row0 = task.seq.row_k + int64_t(task.n_block) * kBlockN;
    Element* dk = static_cast<Element*>(a.dk) + task.seq.tensor_batch * a.dk_batch_stride +
                  task.kv_head * a.dk_head_stride + row0 * a.dk_row_stride;
    Element* dv = static_cast<Element*>(a.dv) + task.seq.tensor_batch * a.dv_batch_stride +
                  task.kv_head * a.dv_head_stride + row0 * a.dv_row_stride;

    // Accumulator values (2i, 2i+1) are adjacent columns of one row.
    CUTE_UNROLL
    for (int i = 0; i < size(acc_dk); i += 2) {
      store_pair(a, coords, i, rows_valid, dk, dv, make_float2(acc_dk(i), acc_dk(i + 1)),
                 make_float2(acc_dv(i), acc_dv(i + 1)));
    }
  }
};

}  // namespace dash
