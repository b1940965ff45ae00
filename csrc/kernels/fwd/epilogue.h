// Epilogue of a forward tile: O (already normalized) from the MMA warpgroups' registers to
// global memory, either through smem and the bulk-copy engine (Cfg::kStagedEpilogue) or
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

  // o: (rows, cols) view of the accumulator; coords: the same view of its (q, d)
  // coordinates; lse: one value per row of the view.
  template <class TensorO, class TensorC, int kRows>
  CUTE_DEVICE static void store(FwdKernelParams<Cfg> const& p, typename Cfg::SharedStorage& ss,
                                FwdTileInfo const& tile, TensorO const& o, TensorC const& coords,
                                float const (&lse)[kRows]) {
    if constexpr (Cfg::kStagedEpilogue) {
      store_staged(p, ss, tile, o, coords, lse);
    } else {
      store_direct(p, tile, o, coords, lse);
    }
  }

  // O through smem, each warp on its own: WGMMA gives warp w of the MMA threads the accumulator's
  // rows 16w .. 16w+15; the warp writes them to the staged tile with STSM and its lane 0 stores them
  // with TMA (one box per atom's columns), which runs while the warp goes on to its next tile. So
  // no barrier joins the warps and no MMA thread waits for O's global stores; lane 0 waits only, at
  // the warp's next epilogue, until its stores have read the stage (long done by then).
  // TMA writes every row of a box up to the tensor's row extent, which is the sequence's end for
  // fixed-length calls but, for packed ones, runs into the next sequence: a warp whose rows pass
  // its sequence's end before the tensor's copies its valid rows with 16-byte stores instead.
  template <class TensorO, class TensorC, int kRows>
  CUTE_DEVICE static void store_staged(FwdKernelParams<Cfg> const& p, typename Cfg::SharedStorage& ss,
                                       FwdTileInfo const& tile, TensorO const& o, TensorC const& coords,
                                       float const (&lse)[kRows]) {
    constexpr int kWarpRows = Cfg::kWarpRows;
    constexpr int kAtomCols = Cfg::kAtomColsO;
    AttnFwdParams const& a = p.args;
    int const rows_valid = tile.seq.len_q - tile.m_block * kBlockM;
    int64_t const row0 = int64_t(tile.m_block) * kBlockM;
    int const mma_thread = threadIdx.x - 128;  // the producer warpgroup is threads 0..127 (kernel.h)
    int const lane = threadIdx.x % 32;
    int const warp_row0 = mma_thread / 32 * kWarpRows;  // within the tile
    if (lane == 0) { tma_store_wait<0>(); }
    __syncwarp();  // the warp's rows of the stage are free

    // The accumulator as the P V GEMM's fragment, converted, then written with STSM.
    typename Cfg::TiledMmaO mma_o;
    Tensor acc16 = make_tensor<Element>(partition_fragment_C(mma_o, Shape<Int<kBlockM>, Int<kHeadDimV>>{}).layout());
    {
      Tensor acc = make_tensor(o.data(), acc16.layout());
      auto src = recast<cutlass::Array<float, 2> const>(acc);
      auto dst = recast<cutlass::Array<Element, 2>>(acc16);
      cutlass::NumericArrayConverter<Element, float, 2> convert;
      CUTE_UNROLL
      for (int i = 0; i < size(src); ++i) { dst(i) = convert(src(i)); }
    }
    Tensor sO = make_tensor(make_smem_ptr(ss.o.data()), typename Cfg::SmemLayoutOStage{});
    auto r2s = make_tiled_copy_C(Copy_Atom<SM90_U32x4_STSM_N, Element>{}, mma_o);
    auto thr_r2s = r2s.get_thread_slice(mma_thread);
    copy(r2s, thr_r2s.retile_S(acc16), thr_r2s.partition_D(sO));

    float* lse_out = a.softmax_lse + a.geo.lse_offset(tile.seq, tile.head) + row0;
    CUTE_UNROLL
    for (int r = 0; r < size<0>(o); ++r) {
      int const row = get<0>(coords(r, 0));
      if (row < rows_valid && get<1>(coords(r, 0)) == 0) { lse_out[row] = lse[r]; }  // one lane of the quad
    }

    fence_proxy_async_smem();  // this thread's STSM writes, visible to TMA
    __syncwarp();              // ... once every lane's are, for lane 0's stores and the copy below
    bool const rows_all_valid = warp_row0 + kWarpRows <= rows_valid;
    bool const clipped_at_end = tile.seq.row_q + tile.seq.len_q == a.geo.total_q;  // TMA stops at the end
    if (rows_all_valid || (clipped_at_end && warp_row0 < rows_valid)) {
      if (lane == 0) {
        Tensor mO = p.tma_o.get_tma_tensor(p.shape_o());
        Tensor mO_rows = domain_offset(make_coord(tile.seq.row_q + int(row0) + warp_row0, _0{}),
                                       mO(_, _, tile.head, tile.seq.tensor_batch));
        auto tma = p.tma_o.get_slice(_0{});
        CUTE_UNROLL
        for (int c = 0; c < kHeadDimV / kAtomCols; ++c) {
          Tensor sBox = make_tensor(make_smem_ptr(&sO(warp_row0, c * kAtomCols)), typename Cfg::SmemLayoutOBox{});
          Tensor gBox = local_tile(mO_rows, Shape<Int<kWarpRows>, Int<kAtomCols>>{}, make_coord(_0{}, c));
          copy(p.tma_o, tma.partition_S(sBox), tma.partition_D(gBox));
        }
        tma_store_arrive();
      }
    } else if (warp_row0 < rows_valid) {
      constexpr int kChunks = kHeadDimV / 8;  // 16-byte chunks of a row
      Element* out = static_cast<Element*>(a.out) + tile.seq.tensor_batch * a.out_batch_stride +
                     tile.head * a.out_head_stride + (tile.seq.row_q + row0 + warp_row0) * a.out_row_stride;
      for (int i = lane; i < kWarpRows * kChunks; i += 32) {
        int const row = i / kChunks;
        int const chunk = i % kChunks;
        if (warp_row0 + row < rows_valid) {
          *reinterpret_cast<uint4*>(out + row * a.out_row_stride + chunk * 8) =
              *reinterpret_cast<uint4 const*>(&sO(warp_row0 + row, chunk * 8));
        }
      }
    }
  }

  // Before the CTA exits: the last tile's TMA stores have read the stage (the writes to global
  // memory complete with the kernel, as CUTLASS's TMA-store epilogues also assume).
  CUTE_DEVICE static void drain() {
    if constexpr (Cfg::kStagedEpilogue) {
      if (threadIdx.x % 32 == 0) { tma_store_wait<0>(); }
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
