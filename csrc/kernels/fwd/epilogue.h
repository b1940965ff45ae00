// Epilogue of a forward tile: O (already normalized) from the MMA warpgroups' registers
// straight to global memory as 16-bit pairs, and each row's LSE, rows past the sequence's
// queries masked off.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/numeric_conversion.h>

#include "kernel_params.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct FwdEpilogue {
  using Element = typename Cfg::Element;
  static constexpr int kBlockM = Cfg::kBlockM;

  // o: (rows, cols) view of the accumulator; coords: the same view of its (q, d)
  // coordinates; lse: one value per row of the view.
  template <class TensorO, class TensorC, int kRows>
  CUTE_DEVICE static void store(FwdKernelParams<Cfg> const& p, FwdTileInfo const& tile, TensorO const& o,
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
