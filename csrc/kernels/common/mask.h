// The attention mask, as policy types and as the tile ranges every role asks.
//
// Every mask is a band, as FlashAttention-3 defines window_size = (left, right): query i
// sees key j iff  i + shift - left <= j <= i + shift + right,  with shift = len_k - len_q
// (bottom-right aligned) and a negative bound unbounded. No mask is (-1, -1), causal is
// (-1, 0), a Mistral-style sliding window (W, 0), HF transformers' (W, W).
//
// A mask policy (FullMask, BandMask) is a kernel template parameter: the main loops fold
// its checks at compile time. The band's bounds are run-time values (MaskWindow), so
// causal masks and sliding windows share one instantiation; the element test of a band
// costs two compares on the few tiles that cross its edges. SeqTiles is the mask seen at
// tile granularity for one sequence and one tile shape: which KV tiles a Q tile needs
// ([n_block_begin, n_block_end)), which Q tiles a KV tile needs ([m_block_begin,
// m_block_end)), and which tile pairs need element masks (partial). The forward tile
// scheduler and main loop, the backward's producer (which tells the MMA warpgroups which steps
// to mask) and the backward schedule (schedule.h, dash/schedule.py) all use these, so the
// geometry of a mask is written once.
#pragma once

#include "../../host_device.h"
#include "seq_geometry.h"

namespace dash {

enum class MaskKind : int { kFull = 0, kBand = 1 };

struct MaskWindow;

struct FullMask {
  static constexpr MaskKind kKind = MaskKind::kFull;
  static constexpr bool kBanded = false;
  // The window the kernels use: a constant, so the band checks fold away.
  DASH_HOST_DEVICE static constexpr MaskWindow window(MaskWindow const&);
};
// Causal masks and sliding windows: the bounds come from the call's MaskWindow.
struct BandMask {
  static constexpr MaskKind kKind = MaskKind::kBand;
  static constexpr bool kBanded = true;
  DASH_HOST_DEVICE static constexpr MaskWindow window(MaskWindow const& call);
};

// The call's band (negative: unbounded), normalized by make_mask_window.
struct MaskWindow {
  int left;
  int right;
  DASH_HOST_DEVICE bool full() const { return left < 0 && right < 0; }
  DASH_HOST_DEVICE bool causal() const { return left < 0 && right == 0; }
  // A band other than the causal one: the causal schedules' shapes do not apply.
  DASH_HOST_DEVICE bool windowed() const { return !full() && !causal(); }
  DASH_HOST_DEVICE MaskKind kind() const { return full() ? MaskKind::kFull : MaskKind::kBand; }
};

DASH_HOST_DEVICE constexpr MaskWindow FullMask::window(MaskWindow const&) { return MaskWindow{-1, -1}; }
DASH_HOST_DEVICE constexpr MaskWindow BandMask::window(MaskWindow const& call) { return call; }

// FlashAttention-3's rules: causal sets right = 0; any negative bound, and a bound that
// covers the whole sequence (left >= seqlen_k - 1, right >= seqlen_q - 1; packed: the
// longest), is unbounded, so a window wider than every sequence runs as no window.
DASH_HOST_DEVICE MaskWindow make_mask_window(bool causal, int left, int right, int seqlen_q, int seqlen_k) {
  if (left < 0 || left >= seqlen_k - 1) { left = -1; }
  if (right < 0 || right >= seqlen_q - 1) { right = -1; }
  if (causal) { right = 0; }
  return MaskWindow{left, right};
}

// Element-level mask of one (Q tile, KV tile) pair in tile-local coordinates relative to
// a thread's first accumulator element, so the per-element test compares compile-time
// constants (thread 0's coordinates q0, kv0) against three per-thread scalars.
struct ElementMask {
  static constexpr int kUnbounded = 1 << 30;  // a diagonal no tile-local kv0 - q0 reaches
  int kv_limit;        // keys kv0 >= kv_limit are past the sequence's end
  int right_diagonal;  // band: keys with kv0 - q0 > right_diagonal are right of the band
  int left_diagonal;   // band: keys with kv0 - q0 < left_diagonal are left of it
  template <bool kBanded>
  DASH_HOST_DEVICE bool hidden(int q0, int kv0) const {
    return kv0 >= kv_limit || (kBanded && (kv0 - q0 > right_diagonal || kv0 - q0 < left_diagonal));
  }
  // Whether only the band's right edge can hide an entry of a block_m x block_n tile (q0 < block_m,
  // kv0 < block_n): its left edge and the keys' end lie past every entry, as on a causal diagonal
  // inside the keys. hidden() is then right_of_band(): one compare an entry instead of three.
  DASH_HOST_DEVICE bool right_edge_only(int block_m, int block_n) const {
    return left_diagonal <= 1 - block_m && kv_limit >= block_n;
  }
  DASH_HOST_DEVICE bool right_of_band(int q0, int kv0) const { return kv0 - q0 > right_diagonal; }
};

// One sequence's tiles under the mask.
struct SeqTiles {
  int len_q, len_k;
  int block_m, block_n;
  MaskWindow window;

  DASH_HOST_DEVICE int num_m_blocks() const { return ceil_div(len_q, block_m); }
  DASH_HOST_DEVICE int num_n_blocks() const { return ceil_div(len_k, block_n); }
  DASH_HOST_DEVICE int shift() const { return len_k - len_q; }

  // KV tiles [n_block_begin(m), n_block_end(m)) hold a key that some query row of Q tile m
  // may see (an empty range when none: rows above a causal diagonal, a window left of the
  // keys).
  DASH_HOST_DEVICE int n_block_begin(int m_block) const {
    if (window.left < 0) { return 0; }
    int const first_key = m_block * block_m + shift() - window.left;  // of the tile's first row
    int const begin = first_key <= 0 ? 0 : first_key / block_n;
    return begin < num_n_blocks() ? begin : num_n_blocks();
  }
  DASH_HOST_DEVICE int n_block_end(int m_block) const { return n_block_end_of_rows(m_block, block_m); }
  // The same end for the first `rows` rows of Q tile m alone (a warpgroup's share of a tall tile
  // and those above it): the right edge's reach grows with the row, so their last row bounds it.
  DASH_HOST_DEVICE int n_block_end_of_rows(int m_block, int rows) const {
    int const n = num_n_blocks();
    if (window.right < 0) { return n; }
    int const last_key = m_block * block_m + rows - 1 + shift() + window.right;  // of their last row
    int const visible = last_key < 0 ? 0 : last_key / block_n + 1;
    return visible < n ? visible : n;
  }
  // Q tiles [m_block_begin(n), m_block_end(n)) hold a query that may see some key of KV tile n.
  DASH_HOST_DEVICE int m_block_begin(int n_block) const {
    if (window.right < 0) { return 0; }
    int const first_query = n_block * block_n - shift() - window.right;  // sees the tile's first key
    int const begin = first_query <= 0 ? 0 : first_query / block_m;
    return begin < num_m_blocks() ? begin : num_m_blocks();
  }
  DASH_HOST_DEVICE int m_block_end(int n_block) const {
    int const m = num_m_blocks();
    if (window.left < 0) { return m; }
    int const last_query = (n_block + 1) * block_n - 1 - shift() + window.left;  // sees its last key
    int const visible = last_query < 0 ? 0 : last_query / block_m + 1;
    return visible < m ? visible : m;
  }
  // Whether some entries of the pair are hidden (so the element mask must run): the KV
  // tile reaches past len_k, right of the tile's first row's band, or left of its last row's.
  DASH_HOST_DEVICE bool partial(int m_block, int n_block) const {
    return (n_block + 1) * block_n > len_k ||
           (window.right >= 0 && (n_block + 1) * block_n - 1 > m_block * block_m + shift() + window.right) ||
           (window.left >= 0 && n_block * block_n < (m_block + 1) * block_m - 1 + shift() - window.left);
  }
  // The KV tiles of Q tile m that need no element mask: [lo, hi) within [n_block_begin(m),
  // n_block_end(m)), the partial tiles being exactly the rest, [n_block_begin, lo) and [hi,
  // n_block_end) (partial() is monotone in n from either side). Empty: lo = hi = n_block_end(m).
  // The forward walks these three runs as loops with plain bounds, so its unmasked loop tests
  // one integer a tile whatever the mask.
  struct NRange { int lo, hi; };
  DASH_HOST_DEVICE NRange unmasked_n_blocks(int m_block) const {
    int const begin = n_block_begin(m_block), end = n_block_end(m_block);
    int hi = len_k / block_n;  // tiles wholly inside the keys
    if (window.right >= 0) {   // and wholly left of the first row's right edge
      int const edge = floor_div(m_block * block_m + shift() + window.right + 1, block_n);
      hi = edge < hi ? edge : hi;
    }
    int lo = 0;
    if (window.left >= 0) {  // wholly right of the last row's left edge
      lo = -floor_div(-((m_block + 1) * block_m - 1 + shift() - window.left), block_n);
    }
    lo = lo > begin ? lo : begin;
    hi = hi < end ? hi : end;
    return lo < hi ? NRange{lo, hi} : NRange{end, end};
  }
  DASH_HOST_DEVICE ElementMask element_mask(int m_block, int n_block, int q_offset, int kv_offset) const {
    int const diagonal = m_block * block_m + shift() - n_block * block_n + q_offset - kv_offset;
    return ElementMask{len_k - n_block * block_n - kv_offset,
                       window.right < 0 ? ElementMask::kUnbounded : diagonal + window.right,
                       window.left < 0 ? -ElementMask::kUnbounded : diagonal - window.left};
  }
};

DASH_HOST_DEVICE SeqTiles seq_tiles(SeqInfo const& s, int block_m, int block_n, MaskWindow window) {
  return SeqTiles{s.len_q, s.len_k, block_m, block_n, window};
}

}  // namespace dash
