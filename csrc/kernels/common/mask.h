// The attention mask, as policy types and as the tile ranges every role asks.
//
// A mask policy (FullMask, CausalMask) is a kernel template parameter: the main loops
// fold its checks at compile time. SeqTiles is the same mask seen at tile granularity for
// one sequence and one tile shape: which KV tiles a Q tile needs (n_block_end), which Q
// tiles a KV tile needs (m_block_begin), and which tile pairs need element masks
// (partial). The forward tile scheduler, the forward and backward main loops and the
// backward schedule (schedule.h, dash/schedule.py) all use these, so the geometry of a
// mask is written once. Causal masks are aligned bottom-right: query i sees key j iff
// j <= i + len_k - len_q. A sliding window or a score modifier becomes one more policy.
#pragma once

#include "../../host_device.h"
#include "seq_geometry.h"

namespace dash {

enum class MaskKind : int { kFull = 0, kCausal = 1 };

struct FullMask {
  static constexpr MaskKind kKind = MaskKind::kFull;
  static constexpr bool kCausal = false;
};
struct CausalMask {
  static constexpr MaskKind kKind = MaskKind::kCausal;
  static constexpr bool kCausal = true;
};

// Element-level mask of one (Q tile, KV tile) pair in tile-local coordinates relative to
// a thread's first accumulator element, so the per-element test compares compile-time
// constants (thread 0's coordinates q0, kv0) against two per-thread scalars.
struct ElementMask {
  int kv_limit;  // keys kv0 >= kv_limit are past the sequence's end
  int diagonal;  // causal: keys with kv0 - q0 > diagonal are right of the diagonal
  template <bool kCausal>
  DASH_HOST_DEVICE bool hidden(int q0, int kv0) const {
    return kv0 >= kv_limit || (kCausal && kv0 - q0 > diagonal);
  }
};

// One sequence's tiles under the mask.
struct SeqTiles {
  int len_q, len_k;
  int block_m, block_n;
  bool causal;

  DASH_HOST_DEVICE int num_m_blocks() const { return ceil_div(len_q, block_m); }
  DASH_HOST_DEVICE int num_n_blocks() const { return ceil_div(len_k, block_n); }
  DASH_HOST_DEVICE int causal_shift() const { return len_k - len_q; }

  // KV tiles [0, n_block_end(m)) hold a key that some query of Q tile m sees. A tile whose
  // rows all lie above the causal diagonal (len_q > len_k) sees none.
  DASH_HOST_DEVICE int n_block_end(int m_block) const {
    int const n = num_n_blocks();
    if (!causal) { return n; }
    int const last_key = (m_block + 1) * block_m - 1 + causal_shift();
    int const visible = last_key < 0 ? 0 : last_key / block_n + 1;
    return visible < n ? visible : n;
  }
  // Q tiles [m_block_begin(n), num_m_blocks) hold a query that sees some key of KV tile n.
  DASH_HOST_DEVICE int m_block_begin(int n_block) const {
    if (!causal) { return 0; }
    int const first_query = n_block * block_n - causal_shift();
    return first_query <= 0 ? 0 : first_query / block_m;
  }
  // Whether some entries of the pair are hidden (so the element mask must run): the KV
  // tile reaches past len_k, or (causal) reaches right of the tile's first query's diagonal.
  DASH_HOST_DEVICE bool partial(int m_block, int n_block) const {
    return (n_block + 1) * block_n > len_k ||
           (causal && (n_block + 1) * block_n - 1 > m_block * block_m + causal_shift());
  }
  DASH_HOST_DEVICE ElementMask element_mask(int m_block, int n_block, int q_offset, int kv_offset) const {
    return ElementMask{len_k - n_block * block_n - kv_offset,
                       m_block * block_m + causal_shift() - n_block * block_n + q_offset - kv_offset};
  }
};

DASH_HOST_DEVICE SeqTiles seq_tiles(SeqInfo const& s, int block_m, int block_n, bool causal) {
  return SeqTiles{s.len_q, s.len_k, block_m, block_n, causal};
}

}  // namespace dash
