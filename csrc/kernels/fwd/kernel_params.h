// What the forward kernel receives by value (__grid_constant__): the plain call
// description, the tile order and the TMA descriptors built on the host.
#pragma once

#include <cute/tensor.hpp>

#include "../../attn_fwd_params.h"
#include "../common/gmem_tensors.h"
#include "../common/score_scale.h"
#include "config.h"
#include "tile_scheduler.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct FwdKernelParams {
  using Element = typename Cfg::Element;
  using TmaQ = decltype(make_tma_copy(SM90_TMA_LOAD{}, QkvGmemTensor<Element>{}, typename Cfg::SmemLayoutQ{}));
  // K / V: plain loads, or (Cfg::kKvMulticast) loads of half a tile each, multicast to a cluster's two CTAs.
  template <class SmemLayout>
  static auto make_tma_kv(QkvGmemTensor<Element> const& gmem, SmemLayout const& smem) {
    if constexpr (Cfg::kKvMulticast) {
      return make_tma_copy(SM90_TMA_LOAD_MULTICAST{}, gmem, smem, Int<2>{});
    } else {
      return make_tma_copy(SM90_TMA_LOAD{}, gmem, smem);
    }
  }
  using TmaK = decltype(make_tma_kv(QkvGmemTensor<Element>{}, take<0, 2>(typename Cfg::SmemLayoutK{})));
  using TmaV = decltype(make_tma_kv(QkvGmemTensor<Element>{}, take<0, 2>(typename Cfg::SmemLayoutV{})));

  // O's TMA store, a warp's box at a time (Cfg::kStagedEpilogue only).
  struct NoTmaO {};
  using TmaO = cute::conditional_t<Cfg::kStagedEpilogue,
                                   decltype(make_tma_copy(SM90_TMA_STORE{}, QkvGmemTensor<Element>{},
                                                          typename Cfg::SmemLayoutOBox{})),
                                   NoTmaO>;

  AttnFwdParams args;
  FwdTileScheduler<Cfg> sched;
  ScoreScale score;  // raw score -> base-2 exponent (softmax scale, softcap)
  TmaQ tma_q;
  TmaK tma_k;
  TmaV tma_v;
  TmaO tma_o;

  // The global tensors' shapes, one definition for the host (the TMA descriptors) and the device.
  CUTE_HOST_DEVICE static ShapeQKV shape_q(AttnFwdParams const& a) { return q_side_shape(a.geo, a.head_dim); }
  CUTE_HOST_DEVICE static ShapeQKV shape_k(AttnFwdParams const& a) { return kv_side_shape(a.geo, a.head_dim); }
  CUTE_HOST_DEVICE static ShapeQKV shape_v(AttnFwdParams const& a) { return kv_side_shape(a.geo, a.head_dim_v); }
  CUTE_HOST_DEVICE static ShapeQKV shape_o(AttnFwdParams const& a) { return q_side_shape(a.geo, a.head_dim_v); }
  CUTE_HOST_DEVICE ShapeQKV shape_q() const { return shape_q(args); }
  CUTE_HOST_DEVICE ShapeQKV shape_k() const { return shape_k(args); }
  CUTE_HOST_DEVICE ShapeQKV shape_v() const { return shape_v(args); }
  CUTE_HOST_DEVICE ShapeQKV shape_o() const { return shape_o(args); }
};

}  // namespace dash
