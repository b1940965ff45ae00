// How a raw score s = q . k becomes the softmax's base-2 exponent, for both passes.
//
//   no softcap:  x = s * scale_log2                          scale_log2 = softmax_scale * log2(e)
//   softcap c:   t = tanh(s * cap_scale),  x = t * scale_log2 cap_scale = softmax_scale / c,
//                                                             scale_log2 = c * log2(e)
// so FlashAttention-3's capped score c * tanh(softmax_scale * s / c) enters the online softmax
// (forward) and P = exp2(x - LSE * log2(e)) (backward) the way a plain scaled score does, and
// the LSE is that of the capped scores. tanh is the hardware's tanh.approx (one MUFU op, as
// FlashAttention-3 uses); the backward, which needs d(capped)/d(scaled) = 1 - t^2, folds it into
// P in P's pass (P (1 - t^2) in fp32 for dS, P in 16 bits for the dV GEMM; bwd/mainloop.h).
#pragma once

#include <cmath>

#include "../../host_device.h"

namespace dash {

struct ScoreScale {
  float scale_log2;
  float cap_scale;  // 0: no softcap

  static ScoreScale make(float softmax_scale, float softcap) {
    float const log2e = 1.4426950408889634f;
    return softcap > 0.f ? ScoreScale{softcap * log2e, softmax_scale / softcap}
                         : ScoreScale{softmax_scale * log2e, 0.f};
  }
  DASH_HOST_DEVICE bool capped() const { return cap_scale != 0.f; }

  // A capped score's exponent t * scale_log2 lies in [-scale_log2, scale_log2] (|t| <= 1), so the
  // forward may scale P by a fixed 2^-offset instead of a running row max: no max to find, no O to
  // rescale (fwd/softmax.h CappedSoftmax). P then lies in [2^(-scale_log2 - offset),
  // 2^(scale_log2 - offset)]: the offset keeps P <= 2^kFixedOffsetTopLog2, leaving row sums and O
  // far from fp32's 2^128, and the range fits where its low end stays >= 2^kFixedOffsetBottomLog2
  // (normal fp32 and bf16, with room below for P * V): scale_log2 <= 73, softcap <= 50.6 (Gemma-2's
  // 50, Grok's 30). fp16's P (<= 65504, normal from 2^-14) holds no such range: fp16 keeps the
  // running max, as do larger caps.
  static constexpr float kFixedOffsetTopLog2 = 36.f;
  static constexpr float kFixedOffsetBottomLog2 = -110.f;
  DASH_HOST_DEVICE float fixed_offset_log2() const {
    return scale_log2 > kFixedOffsetTopLog2 ? scale_log2 - kFixedOffsetTopLog2 : 0.f;
  }
  DASH_HOST_DEVICE bool fixed_offset_fits() const {
    return capped() && -scale_log2 - fixed_offset_log2() >= kFixedOffsetBottomLog2;
  }

#if defined(__CUDACC__)
  __device__ __forceinline__ static float tanh_approx(float x) {
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
  }
  // A raw score -> its capped value t (the exponent is t * scale_log2).
  __device__ __forceinline__ float cap(float s) const { return tanh_approx(s * cap_scale); }
#endif
};

}  // namespace dash
