// Online softmax over the rows of a WGMMA accumulator, for the forward kernel.
//
// Each thread holds kRows rows of S (and the same rows of O), a few columns of each; the
// four lanes of a quad hold one row between them. Scores are exponentiated base 2:
// p = exp2(s * scale_log2 - m * scale_log2) with m the running row max of the raw
// scores (scale > 0, checked by the binding), so one FFMA per element. The row sums stay
// per-thread partial sums until finalize() (they are only ever scaled, never compared).
//
// With kLazy (traits.py "fwd_lazy_rescale"), the max P is scaled by may lag a row's true running
// max by up to kRescaleThreshold (log2 units, FlashAttention-4's rule on Blackwell): a row whose
// max a KV tile raises by no more keeps its old one, so its P <= 2^kRescaleThreshold (256, far
// inside bf16 and fp16) and its O row and sum need no rescaling (factor 1). Each row decides on
// its own, so its exponentials wait for nothing but its own max; the warp then votes, and only
// when some row of its 16 moved are O's multiplications run, for all its rows (update() returns
// it, warp-uniform, so they are skipped by a branch, not predicated). The choice depends on the
// scores alone: the bits still depend on nothing but the inputs.
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

template <int kRows, bool kLazy>
struct OnlineSoftmax {
  float row_max[kRows];  // running max of the raw scores (-inf: nothing visible yet)
  float row_sum[kRows];  // this thread's share of the running sum of exp2(...)

  static constexpr float kRescaleThreshold = 8.f;

  // s: (rows, cols) view of the scores of one KV tile, overwritten with P (fp32).
  // Returns whether the rows of O must be multiplied by o_scale (exp2 of the max change; 1 in
  // rows that kept their max) before the next P V accumulates into them: the same in every
  // thread of the warp; false for the first KV tile of a Q tile, always true past it without kLazy.
  template <bool kFirst, class TensorS>
  CUTE_DEVICE bool update(TensorS& s, float scale_log2, float (&o_scale)[kRows]) {
    static_assert(decltype(size<0>(s))::value == kRows);
    bool grows = false;  // some row of this thread moved its max (kLazy)
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float m = kFirst ? -INFINITY : row_max[r];
      CUTE_UNROLL
      for (int c = 0; c < size<1>(s); ++c) { m = fmaxf(m, s(r, c)); }
      m = quad_allreduce_max(m);
      // kLazy: the row keeps its max unless the new one is past it by the threshold (-inf ->
      // finite: +inf, moves; -inf -> -inf: NaN, keeps, nothing to rescale).
      bool const moves = kFirst || !kLazy || (m - row_max[r]) * scale_log2 > kRescaleThreshold;
      if constexpr (kLazy && !kFirst) {
        m = moves ? m : row_max[r];
        grows |= moves;
      }
      // A row with nothing visible yet keeps m = -inf; subtract 0 so P = exp2(-inf) = 0.
      float const m_scaled = m == -INFINITY ? 0.f : m * scale_log2;
      if constexpr (!kFirst) {
        o_scale[r] = moves ? exp2f(row_max[r] * scale_log2 - m_scaled) : 1.f;  // old max -inf: 0
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
    // O is rescaled by the whole warp when any of its rows moved (o_scale is 1 in the others).
    bool const rescale = !kFirst && (!kLazy || __any_sync(0xffffffff, grows));
    return rescale;
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

// 2^x on the FMA pipe, to take some of a capped score's two MUFU ops (tanh, ex2) off the MUFU, which
// binds the fixed-offset walk at hdim 64 (traits.py "fwd_capped_exp2"): x = j + f with j an integer
// and |f| <= 1/2, 2^f by a minimax cubic (relative error 7.5e-5, far below P's 16-bit rounding), j added
// to the exponent field. x is clamped to -127 first, where the result is exactly +0 (so is -inf's:
// hidden scores still give P 0).
CUTE_DEVICE float exp2_on_fma(float x) {
  float const kRound = 12582912.f;  // 1.5 * 2^23: t's low mantissa bits hold j
  x = fmaxf(x, -127.f);
  float const t = __fadd_rn(x, kRound);
  float const f = __fsub_rn(x, __fsub_rn(t, kRound));
  float const p = fmaf(fmaf(fmaf(0.0551714525f, f, 0.242610615f), f, 0.693260974f), f, 0.999928104f);
  int const bits = __float_as_int(p) + (__float_as_int(t) << 23);
  return __int_as_float(max(bits, 0));
}

// The softmax of capped scores with a fixed offset (common/score_scale.h fixed_offset_fits): P =
// exp2(t * scale_log2 - offset) with one offset for every row, so an exponential waits for its own
// score only (no row max, no quad shuffles, no vote) and O is never rescaled. OnlineSoftmax's
// interface; update() never asks for a rescale. No entry of P is exactly 1 here (with the running max
// a row's largest is), so O is divided by the sums of P as the P V GEMM took it (16-bit), which a GEMM
// of P with ones gives (fwd/config.h kRowSumCols): a row that sees one key gets that key's v exactly.
// The LSE comes from the fp32 sum, as accurate as the running max's. kExp2OnFmaPerFour of every four
// columns' exponentials run on the FMA pipe (exp2_on_fma).
template <int kRows, int kExp2OnFmaPerFour = 0>
struct CappedSoftmax {
  float offset_log2;
  float row_sum[kRows];  // this thread's share of the row's sum of P (fp32)

  template <bool kFirst, class TensorS>
  CUTE_DEVICE bool update(TensorS& s, float scale_log2, float (&)[kRows]) {
    static_assert(decltype(size<0>(s))::value == kRows);
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float sum = 0.f;
      CUTE_UNROLL
      for (int c = 0; c < size<1>(s); ++c) {
        float const x = fmaf(s(r, c), scale_log2, -offset_log2);  // hidden (-inf): P 0
        float const p = c % 4 < kExp2OnFmaPerFour ? exp2_on_fma(x) : exp2f(x);
        s(r, c) = p;
        sum += p;
      }
      row_sum[r] = kFirst ? sum : row_sum[r] + sum;
    }
    return false;
  }

  // gemm_sums: (rows, cols) view of the row-sum GEMM's accumulator (every column a row's sum).
  template <class TensorO, class TensorSums>
  CUTE_DEVICE void finalize(TensorO& o, TensorSums const& gemm_sums, float (&lse)[kRows]) {
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float const sum = quad_allreduce_sum(row_sum[r]);
      bool const empty = sum == 0.f || sum != sum;
      float const inv = empty ? 0.f : 1.f / gemm_sums(r, 0);
      lse[r] = empty ? -INFINITY : (offset_log2 + log2f(sum)) * float(M_LN2);
      CUTE_UNROLL
      for (int c = 0; c < size<1>(o); ++c) { o(r, c) *= inv; }
    }
  }
};

}  // namespace dash
