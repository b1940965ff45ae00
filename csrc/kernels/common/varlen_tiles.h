// Work items of a packed (variable-length) call, numbered densely.
//
// A fixed-length call numbers its items over (tile, head, batch) with every sequence the
// same length. Packed sequences differ, and numbering over the longest one would leave most
// items empty (a 16k-token row of 100 documents, one of 8k tokens, has ~64x more slots than
// work), each costing the persistent CTAs a visit. So items are grouped in *slabs*: slab s
// holds the item at tile threshold(s) of every sequence with more than threshold(s) tiles,
// for each unit (units = K/V heads for the backward's KV tiles, query heads for the
// forward's Q tiles). Two numberings of the same items:
//   unit-major: unit by unit, slabs within a unit. CTAs working at the same time share one
//     head's rows in L2 (the forward; the non-deterministic backward).
//   slab-major: slab by slab, (sequence, unit) within a slab. CTAs working at the same
//     time are spread over the heads, so the tasks of one dQ tile rarely run at once (the
//     deterministic backward's descending / ascending add order would make them wait on
//     each other); the cost is a working set of every head (bench/RESULTS.md item 23).
// Sorting the sequences by tile count (descending, ties by index) makes the sequences of
// every slab a prefix of that order, so the table (per unit) is
//   num_items, slab_begin[0 .. num_slabs] (a unit's item where slab s starts; the last entry
//   is the items per unit), order[0 .. batch)
// built on the device by varlen_tiles_prepare_kernel (no host sync), which also validates
// cu_seqlens. The backward's slabs run over KV tiles 0, 1, ... (slab s = KV tile s: every
// dQ wait targets a smaller KV tile of the same sequence and head, i.e. a smaller item:
// deadlock freedom as for fixed-length ascending / descending). The forward's causal slabs run from
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
  bool unit_major;   // the numbering (see above)

  static constexpr int64_t table_size(int num_slabs, int batch) { return 1 + (num_slabs + 1) + batch; }
  DASH_HOST_DEVICE int num_items() const { return table[0]; }
  DASH_HOST_DEVICE int slab_begin(int s) const { return table[1 + s]; }
  DASH_HOST_DEVICE int order(int i) const { return table[2 + num_slabs + i]; }
  DASH_HOST_DEVICE int tile_of_slab(int s) const { return reverse ? num_slabs - 1 - s : s; }

  DASH_HOST_DEVICE int items_per_unit() const { return table[1 + num_slabs]; }

  DASH_HOST_DEVICE VarlenItem locate(int item) const {
    int unit = 0;
    int scale = units;  // slab-major: slab s starts at item slab_begin(s) * units
    if (unit_major) {
      int const per_unit = items_per_unit();
      unit = item / per_unit;
      item -= unit * per_unit;
      scale = 1;
    }
    int lo = 0, hi = num_slabs - 1;  // the last slab that begins at or before the item
    while (lo < hi) {
      int const mid = (lo + hi + 1) / 2;
      if (slab_begin(mid) * scale <= item) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    int const index = item - slab_begin(lo) * scale;
    return unit_major ? VarlenItem{lo, order(index), unit} : VarlenItem{lo, order(index / units), index % units};
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
    for (int b = 0; b < g.batch; ++b) { items += count.of(g.seq(b)) > threshold ? 1 : 0; }
  }
  slab_begin[num_slabs] = items;
  table[0] = items * units;
}

}  // namespace dash
