// Which Q tiles a CTA of the persistent forward kernel runs, and in which order. The
// producer warp evaluates it and publishes each tile to the MMA warpgroups.
//
// Full mask: all tiles cost the same. They are numbered head by head (the Q tiles of one
// (batch, head) adjacent, so CTAs running at the same time share a few heads' K and V in
// L2) and CTA c runs tiles c, c + grid, c + 2 grid, ...
//
// Banded masks (causal, sliding windows): tile m of a causal head costs m + 1 KV tiles, so fixed shares are badly uneven
// (with grid = 132 and 22 Q tiles a head, CTA c would get the same m every time). Tiles
// are numbered longest first within sections of heads small enough for the section's K
// and V to stay in L2, and each CTA, near the end of a tile, draws its next one from a
// global counter: a greedy longest-first assignment. The counter starts at 0 (the first
// `grid` tiles are taken as blockIdx.x) and is zeroed by the caller before each call.
//
// Packed (variable-length) batches number their tiles densely through the VarlenTiles table
// (common/varlen_tiles.h). Banded masks: sequence-major, the longest sequence first, head by head
// within it, each (sequence, head)'s Q tiles from the last down, drawn from the counter: close to
// longest first over the whole call, so the launch ends on the short documents' tiles (numbered
// head by head, every head ended on its longest document's tiles: bench/RESULTS.md item 186). Full
// masks: unit-major, head by head, slab by slab (every sequence with that many Q tiles).
#pragma once

#include "../../attn_fwd_params.h"
#include "config.h"

namespace dash {

template <class Cfg>
struct FwdTileScheduler {
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  // L2 share (bytes) the K and V of one section of heads may take.
  static constexpr int64_t kL2SectionBytes = 32ll << 20;

  SeqGeometry geo;
  VarlenTiles varlen;  // packed: the dense tile table (table == nullptr: fixed length)
  int num_m_blocks, heads, num_heads_total, num_tiles;
  int section_heads;  // banded: heads per section
  int* counter;       // banded: the dynamic tile counter
  MaskWindow window;

  static FwdTileScheduler make(AttnFwdParams const& a) {
    FwdTileScheduler s;
    s.geo = a.geo;
    s.varlen = a.varlen_tiles;
    s.num_m_blocks = ceil_div(a.geo.seqlen_q, kBlockM);
    s.heads = a.geo.heads;
    s.num_heads_total = a.geo.heads * a.geo.batch;
    s.num_tiles = s.num_m_blocks * s.num_heads_total;
    int64_t const kv_bytes_per_head = int64_t(a.geo.seqlen_k) * (a.head_dim + a.head_dim_v) * 2;
    int64_t const fit = kL2SectionBytes / (kv_bytes_per_head > 0 ? kv_bytes_per_head : 1);
    s.section_heads = int(fit < 1 ? 1 : fit > s.num_heads_total ? s.num_heads_total : fit);
    s.counter = a.tile_counter;
    s.window = a.mask;
    return s;
  }

  CUTE_DEVICE int first_tile() const { return blockIdx.x; }
  // Tiles of the call (packed: read from the tile table, which the prepare kernel filled).
  CUTE_DEVICE int total_tiles() const { return varlen.table != nullptr ? varlen.num_items() : num_tiles; }

  // Called by the producer once it has issued tile `current`'s K loads: the tile to run after it.
  CUTE_DEVICE int next_tile(int current) const {
    if (Cfg::kBanded && counter != nullptr) { return int(gridDim.x) + atomicAdd(counter, 1); }
    return current + int(gridDim.x);
  }

  // The tile with global index t (t < num_tiles).
  CUTE_DEVICE FwdTileInfo tile(int t) const {
    if (varlen.table != nullptr) {
      VarlenItem const v = varlen.locate(t);
      SeqInfo const seq = geo.seq(v.batch);
      return info(seq, v.tile, v.unit);
    }
    int m_block, bh;
    if constexpr (Cfg::kBanded) {
      int const section_tiles = section_heads * num_m_blocks;
      int const section = t / section_tiles;
      int const in_section = t - section * section_tiles;
      int const first_head = section * section_heads;
      int const heads_here = min(section_heads, num_heads_total - first_head);
      int const rank = in_section / heads_here;  // 0 = the longest tiles
      bh = first_head + (in_section - rank * heads_here);
      m_block = num_m_blocks - 1 - rank;
    } else {
      bh = t / num_m_blocks;
      m_block = t - bh * num_m_blocks;
    }
    return info(geo.seq(bh / heads), m_block, bh % heads);
  }

  CUTE_DEVICE FwdTileInfo info(SeqInfo const& seq, int m_block, int head) const {
    SeqTiles const tiles = seq_tiles(seq, kBlockM, kBlockN, Cfg::Mask::window(window));
    return FwdTileInfo{seq, m_block, head, tiles.n_block_begin(m_block), tiles.n_block_end(m_block)};
  }
};

}  // namespace dash
