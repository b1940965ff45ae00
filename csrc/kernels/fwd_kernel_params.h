// What the forward kernel receives by value (__grid_constant__): the plain call
// description, the tile order and the TMA descriptors built on the host.
#pragma once

#include <cute/tensor.hpp>

#include "../attn_fwd_params.h"
#include "fwd_config.h"
#include "fwd_tile_scheduler.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct FwdKernelParams {
  using Element = typename Cfg::Element;
  // (seqlen, head_dim, heads, batch) with strides (row, 1, head, batch), in elements.
  using ShapeQKV = Shape<int32_t, int32_t, int32_t, int32_t>;
  using StrideQKV = Stride<int64_t, _1, int64_t, int64_t>;
  using GmemTensor = decltype(make_tensor(make_gmem_ptr(static_cast<Element const*>(nullptr)),
                                          ShapeQKV{}, StrideQKV{}));
  using TmaQ = decltype(make_tma_copy(SM90_TMA_LOAD{}, GmemTensor{}, typename Cfg::SmemLayoutQ{}));
  using TmaKV = decltype(make_tma_copy(SM90_TMA_LOAD{}, GmemTensor{},
                                       take<0, 2>(typename Cfg::SmemLayoutK{})));

  AttnFwdParams args;
  FwdTileScheduler<Cfg> sched;
  float scale_log2;  // softmax_scale * log2(e): scores are exponentiated with exp2
  TmaQ tma_q;
  TmaKV tma_k;
  TmaKV tma_v;

  CUTE_HOST_DEVICE ShapeQKV shape_q() const {
    return make_shape(args.seqlen_q, args.head_dim, args.heads, args.batch);
  }
  CUTE_HOST_DEVICE ShapeQKV shape_k() const {
    return make_shape(args.seqlen_k, args.head_dim, args.heads, args.batch);
  }
};

}  // namespace dash
