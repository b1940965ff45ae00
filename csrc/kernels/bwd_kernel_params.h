// What the main backward kernel receives by value (__grid_constant__): the plain call
// description, the schedule view and the TMA descriptors built on the host.
#pragma once

#include <cute/tensor.hpp>

#include "../attn_bwd_params.h"
#include "bwd_config.h"
#include "schedule.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdKernelParams {
  using Element = typename Cfg::Element;
  // (seqlen, head_dim, heads, batch) with strides (row, 1, head, batch), in elements.
  using ShapeQKV = Shape<int32_t, int32_t, int32_t, int32_t>;
  using StrideQKV = Stride<int64_t, _1, int64_t, int64_t>;
  using GmemTensor = decltype(make_tensor(make_gmem_ptr(static_cast<Element const*>(nullptr)),
                                          ShapeQKV{}, StrideQKV{}));
  using TmaQdO = decltype(make_tma_copy(SM90_TMA_LOAD{}, GmemTensor{},
                                        take<0, 2>(typename Cfg::SmemLayoutQ{})));
  using TmaKV = decltype(make_tma_copy(SM90_TMA_LOAD{}, GmemTensor{},
                                       typename Cfg::SmemLayoutK{}));

  AttnBwdParams args;
  BwdScheduleView sched;
  float scale_log2;  // softmax_scale * log2(e): scores are exponentiated with exp2
  TmaQdO tma_q;
  TmaQdO tma_do;
  TmaKV tma_k;
  TmaKV tma_v;

  CUTE_HOST_DEVICE ShapeQKV shape_q() const {
    return make_shape(args.seqlen_q, args.head_dim, args.heads, args.batch);
  }
  CUTE_HOST_DEVICE ShapeQKV shape_k() const {
    return make_shape(args.seqlen_k, args.head_dim, args.heads, args.batch);
  }
  // Offset of (batch, head)'s padded per-row statistics (lse_log2, dpsum).
  CUTE_HOST_DEVICE int64_t row_stats_offset(int batch, int head) const {
    return (int64_t(batch) * args.heads + head) * args.seqlen_q_rounded;
  }
  // dq_accum offset of Q tile m_block of (batch, head): tiles are kBlockM * d floats.
  CUTE_HOST_DEVICE int64_t dq_accum_offset(int batch, int head, int m_block) const {
    return (row_stats_offset(batch, head) + int64_t(m_block) * Cfg::kBlockM) * Cfg::kHeadDim;
  }
};

}  // namespace dash
