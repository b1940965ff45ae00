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

  // The global tensors' shapes, one definition for the host (the TMA descriptors) and the device.
  CUTE_HOST_DEVICE static ShapeQKV shape_q(AttnBwdParams const& a) { return q_side_shape(a.geo, a.head_dim); }
  CUTE_HOST_DEVICE static ShapeQKV shape_do(AttnBwdParams const& a) { return q_side_shape(a.geo, a.head_dim_v); }
  CUTE_HOST_DEVICE static ShapeQKV shape_k(AttnBwdParams const& a) { return kv_side_shape(a.geo, a.head_dim); }
  CUTE_HOST_DEVICE static ShapeQKV shape_v(AttnBwdParams const& a) { return kv_side_shape(a.geo, a.head_dim_v); }
  CUTE_HOST_DEVICE ShapeQKV shape_q() const { return shape_q(args); }
  CUTE_HOST_DEVICE ShapeQKV shape_do() const { return shape_do(args); }
  CUTE_HOST_DEVICE ShapeQKV shape_k() const { return shape_k(args); }
  CUTE_HOST_DEVICE ShapeQKV shape_v() const { return shape_v(args); }
};

}  // namespace dash
