// Epilogue of a backward task: dK (scaled by softmax_scale) and dV go from the MMA
// warpgroups' registers straight to global memory, rows past the sequence's keys masked off.
// Written once per task, so plain 4-byte stores are a negligible share of the time and
// keep shared memory free for the next task's loads.
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

  template <class FragDkv>
  CUTE_DEVICE static void store(BwdKernelParams<Cfg> const& p, BwdTaskInfo const& task,
                                FragDkv const& acc_dk, FragDkv const& acc_dv, int mma_thread) {
    AttnBwdParams const& a = p.args;
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
    cutlass::NumericArrayConverter<Element, float, 2> convert;
    // Accumulator values (2i, 2i+1) are adjacent columns of one row.
    CUTE_UNROLL
    for (int i = 0; i < size(acc_dk); i += 2) {
      int const row = get<0>(coords(i));
      int const col = get<1>(coords(i));
      if (row < rows_valid) {
        cutlass::Array<float, 2> k2{acc_dk(i) * a.softmax_scale, acc_dk(i + 1) * a.softmax_scale};
        cutlass::Array<float, 2> v2{acc_dv(i), acc_dv(i + 1)};
        *reinterpret_cast<cutlass::Array<Element, 2>*>(dk + row * a.dk_row_stride + col) = convert(k2);
        *reinterpret_cast<cutlass::Array<Element, 2>*>(dv + row * a.dv_row_stride + col) = convert(v2);
      }
    }
  }
};

}  // namespace dash
