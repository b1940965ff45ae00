// Epilogue of a backward task: dK (scaled by softmax_scale) and dV go from the MMA
// warpgroups' registers straight to global memory, rows past the sequence's keys masked off.
// Written once per task straight from registers, which keeps shared memory free for the next
// task's loads.
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

  // Two values as one 32-bit word of two Elements.
  CUTE_DEVICE static uint32_t pack2(float x, float y) {
    cutlass::NumericArrayConverter<Element, float, 2> convert;
    cutlass::Array<Element, 2> const pair = convert(cutlass::Array<float, 2>{x, y});
    return reinterpret_cast<uint32_t const&>(pair);
  }
  // Within each quad of lanes, v[g] of lane l becomes v[l] of lane g (a 4 x 4 transpose in
  // two xor-shuffle rounds: lanes 1 apart swap the off-diagonal words of 2 x 2 blocks, then
  // lanes 2 apart swap whole 2 x 2 blocks). Every lane of the warp must take part.
  CUTE_DEVICE static void quad_transpose(uint32_t (&v)[4], int quad_lane) {
    CUTE_UNROLL
    for (int bit = 1; bit <= 2; bit *= 2) {
      bool const upper = quad_lane & bit;
      CUTE_UNROLL
      for (int lo = 0; lo < 4; ++lo) {
        if (lo & bit) { continue; }
        int const hi = lo + bit;
        uint32_t const sent = upper ? v[lo] : v[hi];
        uint32_t const got = __shfl_xor_sync(0xffffffffu, sent, bit);
        if (upper) { v[lo] = got; } else { v[hi] = got; }
      }
    }
  }

  // Transposes the 8 x 8 matrix of 16-bit values whose row lane / 4 holds columns
  // 2 * (lane % 4) + {0, 1} in each lane's word: each lane then holds rows 2 * (lane % 4) + {0, 1}
  // of column lane / 4.
  CUTE_DEVICE static uint32_t transpose_8x8(uint32_t word) {
    uint32_t out;
    asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(out) : "r"(word));
    return out;
  }

  // kKvCols: the accumulator is dK^T / dV^T (head-dim rows, key columns), so a thread's
  // adjacent pairs run along keys, the strided dimension of dK / dV. Each 8 x 8 block of the
  // warp's fragment is transposed in registers (movmatrix): a quad of lanes then holds 8
  // adjacent head-dim columns of one key, and a quad transpose over 4 blocks (two row halves x
  // two key groups) gives each lane all 8 of one block: one 16-byte store each.
  template <class Frag, class Coords>
  CUTE_DEVICE static void store_transposed(OutTile const& out, Frag const& acc, Coords const& coords, int rows_valid,
                                           int mma_thread) {
    using Shape0 = decltype(shape<0>(acc.layout()));  // ((2 keys, 2 row halves, key groups), ...)
    static_assert(rank_v<Shape0> == 3 && size<0>(Shape0{}) == 2 && size<1>(Shape0{}) == 2 &&
                  size<2>(Shape0{}) % 2 == 0, "expects WGMMA accumulator fragments");
    constexpr int kGroups = size<2>(Shape0{});
    constexpr int kBlocks = decltype(size(acc))::value / (4 * kGroups);  // (MMA_M, MMA_N) blocks
    int const lane = mma_thread & 31;
    int const quad_lane = lane & 3;
    CUTE_UNROLL
    for (int blk = 0; blk < kBlocks; ++blk) {
      CUTE_UNROLL
      for (int gp = 0; gp < kGroups / 2; ++gp) {
        // Block b of the four: row half b & 1, key group 2 * gp + (b >> 1).
        int const i0 = 4 * (2 * gp) + 4 * kGroups * blk;
        uint32_t words[4];
        CUTE_UNROLL
        for (int b = 0; b < 4; ++b) {
          int const i = i0 + 2 * (b & 1) + 4 * (b >> 1);
          words[b] = transpose_8x8(pack2(acc(i) * out.scale, acc(i + 1) * out.scale));
        }
        quad_transpose(words, quad_lane);
        // Block 0's first head-dim column and key, then this lane's block (quad_lane).
        int const col = get<0>(coords(i0)) - (lane >> 2) + 8 * (quad_lane & 1);
        int const row = get<1>(coords(i0)) - 2 * quad_lane + 8 * (quad_lane >> 1) + (lane >> 2);
        if (row < rows_valid) {
          *reinterpret_cast<uint4*>(out.rows + row * out.row_stride + col) = make_uint4(words[0], words[1], words[2], words[3]);
        }
      }
    }
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
      // A WGMMA accumulator gives a thread 2 adjacent columns in each 8-column group of a row;
      // the 4 threads of a quad transpose 4 groups' pairs among themselves (two xor shuffles)
      // so that each holds 8 adjacent columns of one group and stores them as one 16-byte
      // store: a quarter of the store instructions, whole sectors (bench/RESULTS.md item 57).
      // Strides and scale are read from the kernel arguments where used (item 55).
      Element* const dk = dk_tile(a, task).rows;
      Element* const dv = dv_tile(a, task).rows;
      using Shape0 = decltype(shape<0>(acc_dk.layout()));  // ((2 cols, 2 row halves, groups), ...)
      static_assert(rank_v<Shape0> == 3 && size<0>(Shape0{}) == 2 && size<1>(Shape0{}) == 2 &&
                    size<2>(Shape0{}) % 4 == 0, "expects WGMMA accumulator fragments");
      constexpr int kGroups = size<2>(Shape0{});
      constexpr int kBlocks = kPairsK / (2 * kGroups);  // (MMA_M, MMA_N) blocks of the fragment
      int const quad_lane = mma_thread & 3;
      CUTE_UNROLL
      for (int blk = 0; blk < kBlocks; ++blk) {
        CUTE_UNROLL
        for (int half = 0; half < 2; ++half) {
          CUTE_UNROLL
          for (int g4 = 0; g4 < kGroups / 4; ++g4) {
            int const j0 = half + 2 * (4 * g4) + 2 * kGroups * blk;  // pair index of the first group
            int const row = get<0>(coords_k(2 * j0));
            // This thread's columns after the transpose: group 4 * g4 + quad_lane of the block.
            int const col = get<1>(coords_k(2 * j0)) + 6 * quad_lane;
            uint32_t out_k[4], out_v[4];
            CUTE_UNROLL
            for (int g = 0; g < 4; ++g) {
              int const i = 2 * (j0 + 2 * g);
              out_k[g] = pack2(acc_dk(i) * a.softmax_scale, acc_dk(i + 1) * a.softmax_scale);
              out_v[g] = pack2(acc_dv(i), acc_dv(i + 1));
            }
            quad_transpose(out_k, quad_lane);
            quad_transpose(out_v, quad_lane);
            if (row < rows_valid) {
              *reinterpret_cast<uint4*>(dk + row * a.dk_row_stride + col) = make_uint4(out_k[0], out_k[1], out_k[2], out_k[3]);
              *reinterpret_cast<uint4*>(dv + row * a.dv_row_stride + col) = make_uint4(out_v[0], out_v[1], out_v[2], out_v[3]);
            }
          }
        }
      }
    } else if constexpr (Cfg::kKvCols) {
      store_transposed(dk_tile(a, task), acc_dk, coords_k, rows_valid, mma_thread);
      store_transposed(dv_tile(a, task), acc_dv, coords_of<typename Cfg::TiledMmadV, kHeadDimV>(mma_thread),
                       rows_valid, mma_thread);
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
