// Epilogue of a forward tile: O (already normalized) from the MMA warpgroups' registers to
// global memory, either through an smem tile as 16-byte chunks (Cfg::kStagedEpilogue) or
// straight from the registers as 16-bit pairs, and each row's LSE; rows past the sequence's
// queries are skipped.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/numeric_conversion.h>

#include "kernel_params.h"
#include "../common/sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct FwdEpilogue {
  using Element = typename Cfg::Element;
  static constexpr int kBlockM = Cfg::kBlockM;

  static constexpr int kHeadDimV = Cfg::kHeadDimV;
  static constexpr int kWgRows = Cfg::kRowsPerWarpGroup;  // a warpgroup's slice of the tile
  static constexpr int kChunks = kHeadDimV / 8;  // 16-byte chunks of an O row
  // The staged tile's chunk c of row r sits at c ^ (r % kSwizzle): within its aligned group of
  // kSwizzle chunks, so a warp's 8 rows of 2-column pairs spread over the banks (hdim 96's 12
  // chunks a row take groups of 4: two rows share a bank).
  static constexpr int kSwizzle = kChunks % 8 == 0 ? 8 : kChunks % 4 == 0 ? 4 : 2;

  // o: (rows, cols) view of the accumulator; coords: the same view of its (q, d)
  // coordinates; lse: one value per row of the view.
  template <class TensorO, class TensorC, int kRows>
  CUTE_DEVICE static void store(FwdKernelParams<Cfg> const& p, typename Cfg::SharedStorage& ss, int wg,
                                FwdTileInfo const& tile, TensorO const& o, TensorC const& coords,
                                float const (&lse)[kRows]) {
    if constexpr (Cfg::kStagedEpilogue) {
      store_staged(p, ss, wg, tile, o, coords, lse);
    } else {
      store_direct(p, tile, o, coords, lse);
    }
  }

  // O through smem: each thread's (row, 2 columns) pairs into the warpgroup's kWgRows x d_v slice,
  // 16-byte chunks XOR-swizzled by row (kSwizzle) so a warp's rows hit distinct banks; then each
  // thread copies whole chunks to global memory, rows past the sequence's queries skipped.
  template <class TensorO, class TensorC, int kRows>
  CUTE_DEVICE static void store_staged(FwdKernelParams<Cfg> const& p, typename Cfg::SharedStorage& ss, int wg,
                                       FwdTileInfo const& tile, TensorO const& o, TensorC const& coords,
                                       float const (&lse)[kRows]) {
    AttnFwdParams const& a = p.args;
    int const rows_valid = tile.seq.len_q - tile.m_block * kBlockM;
    int64_t const row0 = int64_t(tile.m_block) * kBlockM;
    Element* stage = ss.o.data() + wg * kWgRows * kHeadDimV;
    int const barrier = int(FwdBarrier::kEpilogue0) + wg;
    named_barrier_sync(barrier, 128);  // every thread has read out the last tile's chunks
    cutlass::NumericArrayConverter<Element, float, 2> convert;
    CUTE_UNROLL
    for (int r = 0; r < size<0>(o); ++r) {
      int const row = get<0>(coords(r, 0)) - wg * kWgRows;  // within the warpgroup's slice
      CUTE_UNROLL
      for (int c = 0; c < size<1>(o); c += 2) {
        int const col = get<1>(coords(r, c));
        int const chunk = (col / 8) ^ (row % kSwizzle);
        cutlass::Array<float, 2> pair{o(r, c), o(r, c + 1)};
        *reinterpret_cast<cutlass::Array<Element, 2>*>(stage + row * kHeadDimV + chunk * 8 + col % 8) = convert(pair);
      }
    }
    float* lse_out = a.softmax_lse + a.geo.lse_offset(tile.seq, tile.head) + row0;
    CUTE_UNROLL
    for (int r = 0; r < size<0>(o); ++r) {
      int const row = get<0>(coords(r, 0));
      if (row < rows_valid && get<1>(coords(r, 0)) == 0) { lse_out[row] = lse[r]; }  // one lane of the quad
    }
    named_barrier_sync(barrier, 128);  // the slice is complete
    Element* out = static_cast<Element*>(a.out) + tile.seq.tensor_batch * a.out_batch_stride +
                   tile.head * a.out_head_stride + (tile.seq.row_q + row0 + wg * kWgRows) * a.out_row_stride;
    int const thread = threadIdx.x % 128;
    static_assert(kWgRows * kChunks % 128 == 0, "the slice's chunks are whole passes of the warpgroup");
    CUTE_UNROLL
    for (int pass = 0; pass < kWgRows * kChunks / 128; ++pass) {
      int const index = pass * 128 + thread;  // consecutive threads take consecutive chunks of a row
      int const row = index / kChunks;
      int const chunk = index % kChunks;
      uint4 const v = *reinterpret_cast<uint4 const*>(stage + row * kHeadDimV + (chunk ^ (row % kSwizzle)) * 8);
      if (wg * kWgRows + row < rows_valid) { *reinterpret_cast<uint4*>(out + row * a.out_row_stride + chunk * 8) = v; }
    }
  }

  template <class TensorO, class TensorC, int kRows>
  CUTE_DEVICE static void store_direct(FwdKernelParams<Cfg> const& p, FwdTileInfo const& tile, TensorO const& o,
                                       TensorC const& coords, float const (&lse)[kRows]) {
    AttnFwdParams const& a = p.args;
    int const rows_valid = tile.seq.len_q - tile.m_block * kBlockM;
    int64_t const row0 = int64_t(tile.m_block) * kBlockM;
    Element* out = static_cast<Element*>(a.out) + tile.seq.tensor_batch * a.out_batch_stride +
                   tile.head * a.out_head_stride + (tile.seq.row_q + row0) * a.out_row_stride;
    float* lse_out = a.softmax_lse + a.geo.lse_offset(tile.seq, tile.head) + row0;
    cutlass::NumericArrayConverter<Element, float, 2> convert;
    CUTE_UNROLL
    for (int r = 0; r < size<0>(o); ++r) {
      int const row = get<0>(coords(r, 0));
      if (row < rows_valid) {
        // Columns (2j, 2j+1) of the view are adjacent head-dim entries.
        CUTE_UNROLL
        for (int c = 0; c < size<1>(o); c += 2) {
          cutlass::Array<float, 2> pair{o(r, c), o(r, c + 1)};
          *reinterpret_cast<cutlass::Array<Element, 2>*>(out + row * a.out_row_stride + get<1>(coords(r, c))) =
              convert(pair);
        }
        if (get<1>(coords(r, 0)) == 0) { lse_out[row] = lse[r]; }  // one lane of the quad
      }
    }
  }
};

}  // namespace dash
