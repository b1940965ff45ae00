// Online softmax over the rows of a WGMMA accumulator, for the forward kernel.
//
// Each thread holds kRows rows of S (and the same rows of O), a few columns of each; the
// four lanes of a quad hold one row between them. Scores are exponentiated base 2:
// p = exp2(s * scale_log2 - m * scale_log2) with m the running row max of the raw
// scores (scale > 0, checked by the binding), so one FFMA per element. The row sums stay
// per-thread partial sums until finalize() (they are only ever scaled, never compared).
#pragma once

#include <cmath>

#include <cute/tensor.hpp>

namespace dash {

using namespace cute;

CUTE_DEVICE float quad_allreduce_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffff, x, 2));
}
CUTE_DEVICE float quad_allreduce_sum(float x) {
  x += __shfl_xor_sync(0xffffffff, x, 1);
  return x + __shfl_xor_sync(0xffffffff, x, 2);
}

template <int kRows>
struct OnlineSoftmax {
  float row_max[kRows];  // running max of the raw scores (-inf: nothing visible yet)
  float row_sum[kRows];  // this thread's share of the running sum of exp2(...)

  // s: (rows, cols) view of the scores of one KV tile, overwritten with P (fp32).
  // Returns in o_scale the factor the rows of O must be multiplied by (exp2 of the max
  // change); unused for the first KV tile of a Q tile.
  template <bool kFirst, class TensorS>
  CUTE_DEVICE void update(TensorS& s, float scale_log2, float (&o_scale)[kRows]) {
    static_assert(decltype(size<0>(s))::value == kRows);
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float m = kFirst ? -INFINITY : row_max[r];
      CUTE_UNROLL
      for (int c = 0; c < size<1>(s); ++c) { m = fmaxf(m, s(r, c)); }
      m = quad_allreduce_max(m);
      // A row with nothing visible yet keeps m = -inf; subtract 0 so P = exp2(-inf) = 0.
      float const m_scaled = m == -INFINITY ? 0.f : m * scale_log2;
      if constexpr (!kFirst) {
        o_scale[r] = exp2f(row_max[r] * scale_log2 - m_scaled);  // old max -inf: 0
      }
      row_max[r] = m;
      float sum = 0.f;
      CUTE_UNROLL
      for (int c = 0; c < size<1>(s); ++c) {
        float const p = exp2f(fmaf(s(r, c), scale_log2, -m_scaled));
        s(r, c) = p;
        sum += p;
      }
      row_sum[r] = kFirst ? sum : row_sum[r] * o_scale[r] + sum;
    }
  }

  // Normalizes O's rows and returns each row's natural-log LSE (-inf for a row that saw
  // no key; its O row is 0).
  template <class TensorO>
  CUTE_DEVICE void finalize(TensorO& o, float scale_log2, float (&lse)[kRows]) {
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float const sum = quad_allreduce_sum(row_sum[r]);
      bool const empty = sum == 0.f || sum != sum;
      float const inv = empty ? 0.f : 1.f / sum;
      float const m_scaled = row_max[r] == -INFINITY ? 0.f : row_max[r] * scale_log2;
      lse[r] = empty ? -INFINITY : (m_scaled + log2f(sum)) * float(M_LN2);
      CUTE_UNROLL
      for (int c = 0; c < size<1>(o); ++c) { o(r, c) *= inv; }
    }
  }

  template <class TensorO>
  CUTE_DEVICE static void rescale(TensorO& o, float const (&o_scale)[kRows]) {
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      CUTE_UNROLL
      for (int c = 0; c < size<1>(o); ++c) { o(r, c) *= o_scale[r]; }
    }
  }
};

}  // namespace dash
