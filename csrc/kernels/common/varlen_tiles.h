// Work items of a packed (variable-length) call, numbered densely.
//
// A fixed-length call numbers its items over (tile, head, batch) with every sequence the
// same length. Packed sequences differ, and numbering over the longest one would leave most
// items empty (a 16k-token row of 100 documents, one of 8k tokens, has ~64x more slots than
// work), each costing the persistent CTAs a visit. So items are grouped in *slabs*: slab s
// holds, for every sequence with more than threshold(s) tiles, its `units` items at tile
// threshold(s) (units = K/V heads for the backward's KV tiles, query heads for the forward's
// Q tiles). Sorting the sequences by tile count (descending, ties by index) makes the
// sequences of every slab a prefix of that order, so the table is
//   num_items, slab_begin[0 .. num_slabs] (item number where slab s starts), order[0 .. batch)
// built on the device by varlen_tiles_prepare_kernel (no host sync), which also validates
// cu_seqlens. The backward's slabs run over KV tiles 0, 1, ... (slab s = KV tile s: every
// dQ wait targets a smaller KV tile of the same sequence, i.e. an earlier slab: deadlock
// freedom as for fixed-length ascending / descending). The forward's causal slabs run from
// the last Q tile down (longest tiles first).
// dash/geometry.py mirrors the table (VarlenTiles) and tests compare both.
#pragma once

#include <cstdint>

#include "../../host_device.h"
#include "seq_geometry.h"

namespace dash {

struct VarlenItem {
  int slab;   // the tile threshold's slab
  int batch;  // the sequence
  int unit;   // the head (K/V head for the backward, query head for the forward)
};

// A view of the table in global memory.
struct VarlenTiles {
  int const* table;  // [num_items, slab_begin[num_slabs + 1], order[batch]]
  int num_slabs;     // tiles of the longest sequence
  int batch;
  int units;
  bool reverse;      // slab s is tile num_slabs - 1 - s (forward, causal) instead of tile s

  static constexpr int64_t table_size(int num_slabs, int batch) { return 1 + (num_slabs + 1) + batch; }
  DASH_HOST_DEVICE int num_items() const { return table[0]; }
  DASH_HOST_DEVICE int slab_begin(int s) const { return table[1 + s]; }
  DASH_HOST_DEVICE int order(int i) const { return table[2 + num_slabs + i]; }
  DASH_HOST_DEVICE int tile_of_slab(int s) const { return reverse ? num_slabs - 1 - s : s; }

  DASH_HOST_DEVICE VarlenItem locate(int item) const {
    int lo = 0, hi = num_slabs - 1;  // the last slab whose begin <= item
    while (lo < hi) {
      int const mid = (lo + hi + 1) / 2;
      if (slab_begin(mid) <= item) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    int const index = item - slab_begin(lo);
    return VarlenItem{lo, order(index / units), index % units};
  }
};

// Tiles of sequence b for a table: Q tiles (forward) or KV tiles (backward).
struct VarlenTileCount {
  int block;       // rows per tile
  bool key_side;   // count the sequence's keys (backward) instead of its queries (forward)
  DASH_HOST_DEVICE int of(SeqInfo const& s) const { return ceil_div(key_side ? s.len_k : s.len_q, block); }
};

// Host reference of the table (the dump tool and tests); the kernel below computes the same.
inline void build_varlen_tiles_host(SeqGeometry const& g, VarlenTileCount count, int num_slabs, int units,
                                    bool reverse, int* table) {
  int* slab_begin = table + 1;
  int* order = table + 2 + num_slabs;
  for (int b = 0; b < g.batch; ++b) {
    int const tb = count.of(g.seq(b));
    int rank = 0;
    for (int o = 0; o < g.batch; ++o) {
      int const to = count.of(g.seq(o));
      rank += (to > tb || (to == tb && o < b)) ? 1 : 0;
    }
    order[rank] = b;
  }
  int items = 0;
  for (int s = 0; s < num_slabs; ++s) {
    slab_begin[s] = items;
    int const threshold = reverse ? num_slabs - 1 - s : s;
    for (int b = 0; b < g.batch; ++b) { items += count.of(g.seq(b)) > threshold ? units : 0; }
  }
  slab_begin[num_slabs] = items;
  table[0] = items;
}

}  // namespace dash
