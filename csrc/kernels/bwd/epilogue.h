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
#include <type_traits>

#include "kernel_params.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdEpilogue {
  using Element = typename Cfg::Element;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;
  static constexpr int kHeadDimV = Cfg::kHeadDimV;
  // A thread's dK values in float2s; its dV values follow them in a part's slot.
  static constexpr int kPairsK = kBlockN * kHeadDim / Cfg::kNumMmaThreads / 2;
  static constexpr int kPairsV = kBlockN * kHeadDimV / Cfg::kNumMmaThreads / 2;
  // dK and dV fragments alike (head_dim_v == head_dim, rows of the tile as the accumulator's
  // rows): the same coordinates serve both.
  static constexpr bool kSameLayout = kHeadDim == kHeadDimV && !Cfg::kKvCols &&
                                      std::is_same_v<typename Cfg::TiledMmadK, typename Cfg::TiledMmadV>;

  // Part `task.part`'s slot: (kv_tile * parts + part) tiles of block_n * (head_dim +
  // head_dim_v) floats (dK, then dV).
  CUTE_DEVICE static float2* dkv_part(AttnBwdParams const& a, BwdTaskInfo const& task, int parts) {
    int64_t const slot = a.geo.kv_tile(task.seq, task.kv_head, task.n_block, kBlockN) * parts + task.part;
    return reinterpret_cast<float2*>(a.dkv_accum + slot * (kBlockN * (kHeadDim + kHeadDimV)));
  }

  // Where the tile's rows of one output (dK or dV: row stride and the tile's first row).
  struct OutTile {
    Element* rows;
    int64_t row_stride;
    float scale;  // softmax_scale for dK, 1 for dV
  };
  CUTE_DEVICE static OutTile dk_tile(AttnBwdParams const& a, BwdTaskInfo const& task) {
    int64_t const row0 = task.seq.row_k + int64_t(task.n_block) * kBlockN;
    return {static_cast<Element*>(a.dk) + task.seq.tensor_batch * a.dk_batch_stride + task.kv_head * a.dk_head_stride +
                row0 * a.dk_row_stride,
            a.dk_row_stride, a.softmax_scale};
  }
  CUTE_DEVICE static OutTile dv_tile(AttnBwdParams const& a, BwdTaskInfo const& task) {
    int64_t const row0 = task.seq.row_k + int64_t(task.n_block) * kBlockN;
    return {static_cast<Element*>(a.dv) + task.seq.tensor_batch * a.dv_batch_stride + task.kv_head * a.dv_head_stride +
                row0 * a.dv_row_stride,
            a.dv_row_stride, 1.f};
  }

  // Values (i, i + 1) of the accumulator, adjacent columns of one row (with kKvCols, of one
  // column of dK^T / dV^T: adjacent rows of the tile), scaled and cast; rows past the
  // sequence's keys dropped.
  template <class Coords>
  CUTE_DEVICE static void store_pair(OutTile const& out, Coords const& coords, int i, int rows_valid, float2 v) {
    if constexpr (Cfg::kKvCols) {
      int const col = get<0>(coords(i));
      int const row = get<1>(coords(i));
      if (row < rows_valid) { out.rows[row * out.row_stride + col] = Element(v.x * out.scale); }
      if (row + 1 < rows_valid) { out.rows[(row + 1) * out.row_stride + col] = Element(v.y * out.scale); }
    } else {
      cutlass::NumericArrayConverter<Element, float, 2> convert;
      int const row = get<0>(coords(i));
      int const col = get<1>(coords(i));
      if (row < rows_valid) {
        cutlass::Array<float, 2> const scaled{v.x * out.scale, v.y * out.scale};
        *reinterpret_cast<cutlass::Array<Element, 2>*>(out.rows + row * out.row_stride + col) = convert(scaled);
      }
    }
  }

  // Coordinates of each accumulator value of `mma_thread` in the dK (kCols = d) or dV (d_v)
  // GEMM: (row, col) of the tile, or with kKvCols (col, row), dK^T / dV^T's.
  template <class TiledMma, int kCols>
  CUTE_DEVICE static auto coords_of(int mma_thread) {
    TiledMma mma;
    return mma.get_thread_slice(mma_thread).partition_C(make_identity_tensor(typename Cfg::template DkvShape<kCols>{}));
  }

  template <class FragDk, class FragDv>
  CUTE_DEVICE static void store(BwdKernelParams<Cfg> const& p, BwdTaskInfo const& task,
                                FragDk const& acc_dk, FragDv const& acc_dv, int mma_thread) {
    AttnBwdParams const& a = p.args;
    static_assert(decltype(size(acc_dk))::value == 2 * kPairsK && decltype(size(acc_dv))::value == 2 * kPairsV);
    // Split groups: this part's fp32 partial goes to its slot; the sum kernel adds the parts.
    if (p.sched.parts > 1) {
      float2* const dk_part = dkv_part(a, task, p.sched.parts) + mma_thread;
      float2* const dv_part = dk_part + kPairsK * Cfg::kNumMmaThreads;
      CUTE_UNROLL
      for (int j = 0; j < cute::max(kPairsK, kPairsV); ++j) {
        if (j < kPairsK) { dk_part[j * Cfg::kNumMmaThreads] = make_float2(acc_dk(2 * j), acc_dk(2 * j + 1)); }
        if (j < kPairsV) { dv_part[j * Cfg::kNumMmaThreads] = make_float2(acc_dv(2 * j), acc_dv(2 * j + 1)); }
      }
      return;
    }
    int const rows_valid = task.seq.len_k - task.n_block * kBlockN;
    auto const coords_k = coords_of<typename Cfg::TiledMmadK, kHeadDim>(mma_thread);
    if constexpr (kSameLayout) {
      // One walk over both (each pair's coordinates computed once): the MMA warpgroups reach
      // here with every register of the main loop still assigned, and two walks spilled.
      // Strides and scale are read from the kernel arguments at each pair, not copied into
      // registers first: the address arithmetic then sits between the stores. Issued back to
      // back (the registers version), the stores queue up while the other warpgroup waits at
      // the named barrier (bench/RESULTS.md item 55).
      Element* const dk = dk_tile(a, task).rows;
      Element* const dv = dv_tile(a, task).rows;
      cutlass::NumericArrayConverter<Element, float, 2> convert;
      CUTE_UNROLL
      for (int j = 0; j < kPairsK; ++j) {
        int const row = get<0>(coords_k(2 * j));
        int const col = get<1>(coords_k(2 * j));
        if (row < rows_valid) {
          cutlass::Array<float, 2> const k_out{acc_dk(2 * j) * a.softmax_scale, acc_dk(2 * j + 1) * a.softmax_scale};
          cutlass::Array<float, 2> const v_out{acc_dv(2 * j), acc_dv(2 * j + 1)};
          *reinterpret_cast<cutlass::Array<Element, 2>*>(dk + row * a.dk_row_stride + col) = convert(k_out);
          *reinterpret_cast<cutlass::Array<Element, 2>*>(dv + row * a.dv_row_stride + col) = convert(v_out);
        }
      }
    } else {
      OutTile const dk = dk_tile(a, task);
      OutTile const dv = dv_tile(a, task);
      CUTE_UNROLL
      for (int j = 0; j < kPairsK; ++j) {
        store_pair(dk, coords_k, 2 * j, rows_valid, make_float2(acc_dk(2 * j), acc_dk(2 * j + 1)));
      }
      auto const coords_v = coords_of<typename Cfg::TiledMmadV, kHeadDimV>(mma_thread);
      CUTE_UNROLL
      for (int j = 0; j < kPairsV; ++j) {
        store_pair(dv, coords_v, 2 * j, rows_valid, make_float2(acc_dv(2 * j), acc_dv(2 * j + 1)));
      }
    }
  }
};

}  // namespace dash
