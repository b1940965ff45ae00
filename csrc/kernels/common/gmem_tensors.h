// Global-memory views of q, k, v, out, dout that the forward and the backward share: every
// input is seen as (rows, head_dim, heads, batches) with strides (row, 1, head, batch), the
// layout the TMA descriptors are built over. The extents come from the sequence geometry:
// fixed length (seqlen, d, heads, batch); packed (total rows, d, heads, 1).
#pragma once

#include <cute/tensor.hpp>

#include "seq_geometry.h"

namespace dash {

using namespace cute;

using ShapeQKV = Shape<int32_t, int32_t, int32_t, int32_t>;
using StrideQKV = Stride<int64_t, _1, int64_t, int64_t>;

template <class Element>
using QkvGmemTensor =
    decltype(make_tensor(make_gmem_ptr(static_cast<Element const*>(nullptr)), ShapeQKV{}, StrideQKV{}));

// Extents of the query side (q, out, dout) and of the key side (k, v).
CUTE_HOST_DEVICE ShapeQKV q_side_shape(SeqGeometry const& g, int head_dim) {
  return make_shape(g.total_q, int32_t(head_dim), int32_t(g.heads), int32_t(g.tensor_batches()));
}
CUTE_HOST_DEVICE ShapeQKV kv_side_shape(SeqGeometry const& g, int head_dim) {
  return make_shape(g.total_k, int32_t(head_dim), int32_t(g.heads_kv), int32_t(g.tensor_batches()));
}

template <class Element>
QkvGmemTensor<Element> qkv_gmem_tensor(void const* ptr, ShapeQKV const& shape, int64_t row_stride,
                                       int64_t head_stride, int64_t batch_stride) {
  return make_tensor(make_gmem_ptr(static_cast<Element const*>(ptr)), shape,
                     make_stride(row_stride, _1{}, head_stride, batch_stride));
}

}  // namespace dash
