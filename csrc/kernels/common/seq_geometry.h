// The sequence geometry of one attention call, as every role sees it (host and device):
// which sequences there are, how long each is on the query and key side, where its rows
// live in q / k / v / out, where its rows live in the padded fp32 workspaces of the
// backward (LSE * log2 e, D, dq_accum) and in softmax_lse, and how query heads map to
// K/V heads (GQA / MQA).
//
// Two layouts:
//   fixed length  q (batch, seqlen_q, heads, d), k / v (batch, seqlen_k, heads_kv, d);
//                 softmax_lse (batch, heads, seqlen_q); workspaces (batch, heads, rows)
//                 with rows = seqlen_q rounded up to the workspace block.
//   packed        q (total_q, heads, d), k / v (total_k, heads_kv, d), sequence b at rows
//   (varlen)      cu_seqlens[b] .. cu_seqlens[b + 1] (seqused[b] of them used if given);
//                 softmax_lse (heads, total_q) as FlashAttention-3 returns it;
//                 workspaces (heads, rows) with each sequence starting at a multiple of the
//                 workspace block: (cu_seqlens_q[b] + b * block) rounded down, so a
//                 sequence's padded tiles never reach the next one's.
// dash/geometry.py mirrors this file; tests/test_schedule_model.py compares the two.
#pragma once

#include <cstdint>

#include "../../host_device.h"

namespace dash {

DASH_HOST_DEVICE int64_t ceil_div_i64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One sequence of the call. Row numbers are 32-bit: the op checks keep every row count,
// times the heads, below 2^31 (element offsets, which multiply by strides, are 64-bit).
struct SeqInfo {
  int batch;
  int len_q, len_k;  // its query and key rows
  int row_q;         // its first row on the row axis of q / out / dout (packed: within total_q)
  int row_k;         // its first row on the row axis of k / v
  int tensor_batch;  // its index on the tensors' batch axis (packed: always 0)
  int stats_row;     // its first row in a head's workspace rows (a multiple of the block)
};

struct SeqGeometry {
  int batch;
  int heads;     // query heads
  int heads_kv;  // K/V heads: heads is a multiple of heads_kv (GQA; MQA: 1)
  // Fixed length: every sequence's lengths. Packed: upper bounds (max_seqlen_q / _k).
  int seqlen_q, seqlen_k;
  // Packed: (batch + 1) prefix sums of the rows, int32, on the device that reads them;
  // nullptr for fixed length. seqused_*: optional per-sequence rows actually used.
  int const* cu_seqlens_q;
  int const* cu_seqlens_k;
  int const* seqused_q;
  int const* seqused_k;
  int total_q;  // rows on the row axis of q (packed: total_q; fixed: seqlen_q)
  int total_k;
  // Workspace rows: sequences are padded to multiples of stats_block (the backward's
  // query tile), and each head (packed) or (batch, head) (fixed) owns stats_rows of them,
  // so consecutive query heads of a sequence are stats_rows apart in both layouts.
  int stats_block;
  int stats_rows;

  DASH_HOST_DEVICE bool packed() const { return cu_seqlens_q != nullptr; }
  DASH_HOST_DEVICE int group() const { return heads / heads_kv; }  // query heads per K/V head
  DASH_HOST_DEVICE int kv_head(int head) const { return head / group(); }
  // Batch index on the tensors' batch axis and its extent.
  DASH_HOST_DEVICE int tensor_batches() const { return packed() ? 1 : batch; }

  DASH_HOST_DEVICE SeqInfo seq(int b) const {
    SeqInfo s;
    s.batch = b;
    if (!packed()) {
      s.len_q = seqlen_q;
      s.len_k = seqlen_k;
      s.row_q = 0;
      s.row_k = 0;
      s.tensor_batch = b;
      s.stats_row = 0;
      return s;
    }
    s.row_q = cu_seqlens_q[b];
    s.row_k = cu_seqlens_k[b];
    s.len_q = seqused_q != nullptr ? seqused_q[b] : cu_seqlens_q[b + 1] - s.row_q;
    s.len_k = seqused_k != nullptr ? seqused_k[b] : cu_seqlens_k[b + 1] - s.row_k;
    s.tensor_batch = 0;
    s.stats_row = (s.row_q + b * stats_block) / stats_block * stats_block;
    return s;
  }

  // Workspace row of (sequence, head)'s first query row.
  DASH_HOST_DEVICE int64_t stats_offset(SeqInfo const& s, int head) const {
    return packed() ? int64_t(head) * stats_rows + s.stats_row : (int64_t(s.batch) * heads + head) * stats_rows;
  }
  // dQ tile number of (sequence, head, Q tile m): the index of its semaphore and of its
  // kBlockM x d slab of dq_accum.
  DASH_HOST_DEVICE int64_t dq_tile(SeqInfo const& s, int head, int m_block) const {
    return stats_offset(s, head) / stats_block + m_block;
  }
  DASH_HOST_DEVICE int64_t num_dq_tiles() const {
    return (packed() ? int64_t(heads) : int64_t(batch) * heads) * stats_rows / stats_block;
  }
  // Key-side tiles: slot of (sequence, K/V head, KV tile n) in a per-tile workspace (the
  // split groups' dK / dV merge). Packed sequences start at slot (row_k + b * block_n) /
  // block_n, which leaves room for their padded last tile before the next one.
  DASH_HOST_DEVICE int64_t kv_tiles_per_head(int block_n) const {
    return packed() ? (int64_t(total_k) + int64_t(batch) * block_n) / block_n + 1
                    : int64_t(batch) * ceil_div_i64(seqlen_k, block_n);
  }
  DASH_HOST_DEVICE int64_t kv_tile(SeqInfo const& s, int kv_head, int n_block, int block_n) const {
    int64_t const first = packed() ? (int64_t(s.row_k) + int64_t(s.batch) * block_n) / block_n
                                   : int64_t(s.batch) * ceil_div_i64(seqlen_k, block_n);
    return int64_t(kv_head) * kv_tiles_per_head(block_n) + first + n_block;
  }
  // softmax_lse index of (sequence, head)'s first query row.
  DASH_HOST_DEVICE int64_t lse_offset(SeqInfo const& s, int head) const {
    return packed() ? int64_t(head) * total_q + s.row_q : (int64_t(s.batch) * heads + head) * seqlen_q;
  }
};

DASH_HOST_DEVICE int ceil_div(int a, int b) { return (a + b - 1) / b; }
// Rounds toward -inf (b > 0), for bounds that may be negative.
DASH_HOST_DEVICE int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Geometry of a fixed-length call.
DASH_HOST_DEVICE SeqGeometry fixed_seq_geometry(int batch, int heads, int heads_kv, int seqlen_q, int seqlen_k,
                                                int stats_block) {
  SeqGeometry g{};
  g.batch = batch;
  g.heads = heads;
  g.heads_kv = heads_kv;
  g.seqlen_q = seqlen_q;
  g.seqlen_k = seqlen_k;
  g.total_q = seqlen_q;
  g.total_k = seqlen_k;
  g.stats_block = stats_block;
  g.stats_rows = ceil_div(seqlen_q, stats_block) * stats_block;
  return g;
}

// Geometry of a packed call (cu_seqlens_* may point to device memory: only seq() reads them).
DASH_HOST_DEVICE SeqGeometry packed_seq_geometry(int batch, int heads, int heads_kv, int max_seqlen_q,
                                                 int max_seqlen_k, int total_q, int total_k,
                                                 int const* cu_seqlens_q, int const* cu_seqlens_k,
                                                 int const* seqused_q, int const* seqused_k, int stats_block) {
  SeqGeometry g{};
  g.batch = batch;
  g.heads = heads;
  g.heads_kv = heads_kv;
  g.seqlen_q = max_seqlen_q;
  g.seqlen_k = max_seqlen_k;
  g.cu_seqlens_q = cu_seqlens_q;
  g.cu_seqlens_k = cu_seqlens_k;
  g.seqused_q = seqused_q;
  g.seqused_k = seqused_k;
  g.total_q = total_q;
  g.total_k = total_k;
  g.stats_block = stats_block;
  // The last sequence starts at most at (total_q + (batch - 1) * block) and pads to a block.
  g.stats_rows = ceil_div(total_q + batch * stats_block, stats_block) * stats_block;
  return g;
}

}  // namespace dash
