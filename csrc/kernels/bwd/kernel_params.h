// What the main backward kernel receives by value (__grid_constant__): the plain call
// description, the schedule view and the TMA descriptors built on the host.
#pragma once

#include <cute/tensor.hpp>

#include "../../attn_bwd_params.h"
#include "../common/gmem_tensors.h"
#include "../common/score_scale.h"
#include "config.h"
#include "schedule.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdKernelParams {
  using Element = typename Cfg::Element;
  template <class SmemLayout>
  using Tma = decltype(make_tma_copy(SM90_TMA_LOAD{}, QkvGmemTensor<Element>{}, SmemLayout{}));

  AttnBwdParams args;
  BwdScheduleView sched;
  ScoreScale score;  // raw score -> base-2 exponent (softmax scale, softcap)
  Tma<decltype(take<0, 2>(typename Cfg::SmemLayoutQ{}))> tma_q;    // one stage's tile
  Tma<decltype(take<0, 2>(typename Cfg::SmemLayoutdO{}))> tma_do;
  Tma<typename Cfg::SmemLayoutK> tma_k;
  Tma<typename Cfg::SmemLayoutV> tma_v;

  CUTE_HOST_DEVICE ShapeQKV shape_q() const { return q_side_shape(args.geo, args.head_dim); }
  CUTE_HOST_DEVICE ShapeQKV shape_do() const { return q_side_shape(args.geo, args.head_dim_v); }
  CUTE_HOST_DEVICE ShapeQKV shape_k() const { return kv_side_shape(args.geo, args.head_dim); }
  CUTE_HOST_DEVICE ShapeQKV shape_v() const { return kv_side_shape(args.geo, args.head_dim_v); }
};

}  // namespace dash
