// Work items of a packed (variable-length) call, numbered densely.
//
// A fixed-length call numbers its items over (tile, head, batch) with every sequence the
// same length. Packed sequences differ, and numbering over the longest one would leave most
// items empty (a 16k-token row of 100 documents, one of 8k tokens, has ~64x more slots than
// work), each costing the persistent CTAs a visit. Sequences are sorted by tile count
// (descending, ties by index), and three numberings of the same items exist:
//   unit-major: unit by unit (units = K/V heads for the backward's KV tiles, query heads
//     for the forward's Q tiles); within a unit, slab by slab, where slab s holds the
//     item at tile threshold(s) of every sequence with more than threshold(s) tiles (the
//     sequences of a slab are a prefix of the sorted order). CTAs working at the same time
//     share one head's rows in L2 (the forward's full masks).
//   sequence-major: sequence by sequence (longest first), unit by unit within a sequence,
//     and a (sequence, unit)'s tiles from the last down. The tasks of one sequence and head
//     run together (that head's rows of the sequence stay in L2; numbering a sequence's
//     tiles across all its heads at once measured 8-12% slower, bench/RESULTS.md), the
//     longest sequences start first, and the backward's diagonal add order (schedule.h)
//     only ever waits on a smaller item. The forward's banded calls take it too: their
//     longest tiles are the longest sequences' (bench/RESULTS.md item 186).
//   sequence-tile-major: sequence by sequence (longest first), tile by tile from the first,
//     unit by unit within a tile. A sequence's KV tile n + 1 of a head starts `units` items
//     after its KV tile n, which staggers the backward's ascending adds (each waits on the
//     tile before) without spreading the working set beyond one sequence. (It replaced a
//     slab-major numbering, slab by slab over all sequences and heads, whose working set of
//     every head cost the deterministic full-mask backward a third: bench/RESULTS.md.)
// The table (per unit) is
//   num_items, slab_begin[0 .. num_slabs] (a unit's item where slab s starts; the last entry
//   is the items per unit), order[0 .. batch), seq_begin[0 .. batch] (a unit's items
//   before the order[i]-th sequence, i.e. the tiles of the longer ones)
// built on the device by varlen_tiles_prepare_kernel (no host sync), which also validates
// cu_seqlens. The forward's causal slabs run from the last Q tile down (longest tiles first).
// dash/geometry.py mirrors the table (VarlenTiles) and tests compare both.
#pragma once

#include <cstdint>

#include "../../host_device.h"
#include "seq_geometry.h"

namespace dash {

enum class VarlenOrder : int { kUnitMajor = 0, kSequenceMajor = 2, kSequenceTileMajor = 3 };

struct VarlenItem {
  int tile;   // the item's tile in its sequence (KV tile: backward; Q tile: forward)
  int batch;  // the sequence
  int unit;   // the head (K/V head for the backward, query head for the forward)
};

// A view of the table in global memory.
struct VarlenTiles {
  int const* table;  // [num_items, slab_begin[num_slabs + 1], order[batch], seq_begin[batch + 1]]
  int num_slabs;     // tiles of the longest sequence
  int batch;
  int units;
  bool reverse;      // slab s is tile num_slabs - 1 - s (forward, causal) instead of tile s
  VarlenOrder numbering;

  static constexpr int64_t table_size(int num_slabs, int batch) { return 1 + (num_slabs + 1) + batch + (batch + 1); }
  DASH_HOST_DEVICE int num_items() const { return table[0]; }
  DASH_HOST_DEVICE int slab_begin(int s) const { return table[1 + s]; }
  DASH_HOST_DEVICE int order(int i) const { return table[2 + num_slabs + i]; }
  DASH_HOST_DEVICE int seq_begin(int i) const { return table[2 + num_slabs + batch + i]; }
  DASH_HOST_DEVICE int tile_of_slab(int s) const { return reverse ? num_slabs - 1 - s : s; }

  DASH_HOST_DEVICE int items_per_unit() const { return table[1 + num_slabs]; }

  // The last index i in [0, n) with begin[i] * scale <= item (begin non-decreasing).
  DASH_HOST_DEVICE static int last_at_or_before(int const* begin, int n, int item, int scale) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
      int const mid = (lo + hi + 1) / 2;
      if (begin[mid] * scale <= item) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  DASH_HOST_DEVICE VarlenItem locate(int item) const {
    switch (numbering) {
      case VarlenOrder::kSequenceMajor: {
        int const i = last_at_or_before(table + 2 + num_slabs + batch, batch, item, units);
        int const tiles = seq_begin(i + 1) - seq_begin(i);
        int const index = item - seq_begin(i) * units;
        int const unit = index / tiles;
        return VarlenItem{tiles - 1 - (index - unit * tiles), order(i), unit};
      }
      case VarlenOrder::kSequenceTileMajor: {
        int const i = last_at_or_before(table + 2 + num_slabs + batch, batch, item, units);
        int const index = item - seq_begin(i) * units;
        int const tile = index / units;
        return VarlenItem{tile, order(i), index - tile * units};
      }
      case VarlenOrder::kUnitMajor:
      default: {
        int const per_unit = items_per_unit();
        int const unit = item / per_unit;
        int const local = item - unit * per_unit;
        int const s = last_at_or_before(table + 1, num_slabs, local, 1);
        return VarlenItem{tile_of_slab(s), order(local - slab_begin(s)), unit};
      }
    }
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
  int* seq_begin = order + g.batch;
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
  seq_begin[0] = 0;
  for (int i = 0; i < g.batch; ++i) { seq_begin[i + 1] = seq_begin[i] + count.of(g.seq(order[i])); }
}

}  // namespace dash
