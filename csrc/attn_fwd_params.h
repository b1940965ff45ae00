// Plain description of one attention-forward call: pointers, strides, sizes, flags.
// No torch and no CUTLASS here, so the kernels and the binding can both include it.
#pragma once

#include <cstdint>

#include "generated/kernel_traits.h"
#include "kernels/common/mask.h"
#include "kernels/common/seq_geometry.h"
#include "kernels/common/varlen_tiles.h"

namespace dash {

struct AttnFwdParams {
  // Inputs, laid out (batch, seqlen, heads, head_dim) with the last dim contiguous (k, v:
  // heads_kv heads).
  // Strides are in elements.
  const void* q;
  const void* k;
  const void* v;
  int64_t q_batch_stride, q_row_stride, q_head_stride;
  int64_t k_batch_stride, k_row_stride, k_head_stride;
  int64_t v_batch_stride, v_row_stride, v_head_stride;

  // Outputs: out like q; softmax_lse fp32 contiguous (geo.lse_offset: fixed length
  // (batch, heads, seqlen_q)), natural log, -inf for a query that sees no key (out row 0).
  void* out;
  float* softmax_lse;
  int64_t out_batch_stride, out_row_stride, out_head_stride;

  SeqGeometry geo;  // sequences, heads, lengths (stats_block: unused by the forward)
  // Packed batches: the dense table of (Q tile, query head, sequence) tiles, filled on the
  // device by the prepare kernel (table == nullptr: fixed length).
  VarlenTiles varlen_tiles;
  int head_dim;    // of q and k
  int head_dim_v;  // of v and out
  float softmax_scale;
  float softcap;  // > 0: scores capped to softcap * tanh(score / softcap) (kernels/common/score_scale.h)
  MaskWindow mask;  // the band (kernels/common/mask.h); full: (-1, -1), causal: (-1, 0)

  // Banded masks give tiles of unequal length: CTAs then draw their next tile from this
  // counter (one int32, zeroed by the caller before every call) instead of taking a
  // fixed share. nullptr: fixed shares (used for full masks, where tiles are equal).
  int* tile_counter;

  // Persistent grid: CTAs = min(tiles, ctas_per_sm * (sm_count - sm_margin)).
  int sm_margin;
  int device;

  // The call runs the forward's short-walk kernel (its own tile; fwd_registry.h
  // fwd_takes_short_walk decides, once per call, before anything is sized by the tile). Last, so
  // the fields the kernels read keep their offsets.
  bool short_walk;
};

}  // namespace dash
