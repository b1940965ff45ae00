// Prints what the kernel headers compute, for tests/test_schedule_model.py to compare with
// the Python mirrors (dash/schedule.py, dash/geometry.py). One case per stdin line:
// A mask is two tokens, the band's `left right` (negative: unbounded; full -1 -1, causal -1 0).
//   sched num_m num_n heads heads_kv batch seqlen_q seqlen_k block_m block_n left right schedule grid parts chunk
//         tail_cap
//     -> which schedules apply, then for every CTA its tasks in order, each with its
//        (query head : Q tile : rank) steps (csrc/kernels/bwd/schedule.h)
//   vsched heads heads_kv batch block_m block_n left right schedule grid numbering parts cu_q[batch+1] cu_k[batch+1]
//     -> the same for a packed (variable-length) call, its item table built on the host
//   vtable batch block key_side num_slabs units reverse numbering cu_q[batch+1] cu_k[batch+1]
//     -> the VarlenTiles table and every item's (tile, sequence, unit)
//   kvparts items group resident longest_q_tiles packed deterministic full_mask
//           det_band_walk_steps nondet_band_walk_steps nondet_full_walk_steps band_min_parts det_full_walk_steps
//     -> kv_parts_for's answer (the planner's split of query-head groups, schedule.h)
//   chunk seqlen_q num_n head_dim head_dim_v walk_heads parts
//     -> deal_chunk_for's answer (walks per dealing chunk of full-mask ascending, schedule.h)
//   bandchunk seqlen_q head_dim head_dim_v walk_heads deterministic
//     -> band_deal_chunk_for's answer (walks per dealing chunk of banded ascending, schedule.h)
//   tailcap deterministic items_per_head grid
//     -> diagonal_tail_cap's answer (the longest tail diagonal deals longest first, schedule.h)
//   geo heads heads_kv batch max_q max_k block_m block_n left right used cu_q[batch+1] cu_k[batch+1]
//       [seqused_q[batch] seqused_k[batch] if used]  (batch 0: a fixed-length geometry of
//       max_q x max_k with one sequence per head group; see the test)
//     -> per sequence its SeqInfo, workspace / LSE / dQ-tile offsets, and the mask's tile
//        ranges and an element mask (csrc/kernels/common/seq_geometry.h, mask.h)
//   window causal left right seqlen_q seqlen_k
//     -> make_mask_window's band and its kind (mask.h)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/bwd/schedule.h"
#include "kernels/common/mask.h"
#include "kernels/common/seq_geometry.h"
#include "kernels/common/varlen_tiles.h"

namespace {

std::vector<int> read_ints(int n) {
  std::vector<int> out(n);
  for (int& x : out) { std::scanf("%d", &x); }
  return out;
}

void print_schedule(dash::BwdScheduleView const& v) {
  std::printf("case shift=%d symmetric=%d diagonal=%d\n", int(dash::shift_applies(v)),
              int(dash::symmetric_shift_applies(v)), int(dash::diagonal_applies(v)));
  std::printf("tail %d", v.tail_items());  // the items diagonal's tail may deal, in dealing order
  for (int drawn = v.num_items() - v.tail_items(); drawn < v.num_items(); ++drawn) { std::printf(" %d", v.tail_item(drawn)); }
  std::printf("\n");
  for (int cta = 0; cta < v.grid; ++cta) {
    int ordinal = 0;
    for (int round = 0; round < v.num_rounds(); ++round) {
      int const item = v.item_id(cta, round);
      if (item < 0) { continue; }
      for (int member = 0; member < v.members(); ++member, ++ordinal) {
        dash::BwdTask const task = v.task(item, member);
        std::printf("cta %d #%d item %d member %d n %d h %d p %d b %d steps", cta, ordinal, task.item, task.member,
                    task.n_block, task.kv_head, task.part, task.batch);
        dash::QWalk const walk = v.q_walk(task);
        dash::TaskRanks const ranks = v.task_ranks(task);
        // The producer's loop: Q tiles of the walk (stepped with next, which must agree with
        // at), the group's query heads within each.
        for (int i = 0, m = walk.at(0); i < v.num_q_tiles(task); m = walk.next(m, i), ++i) {
          if (walk.at(i) != m) { std::printf(" BADNEXT"); }
          for (int sub = 0; sub < v.group(); ++sub) {
            int const step = i * v.group() + sub;
            if (v.q_tile_at(task, step) != m) { std::printf(" BAD"); }
            std::printf(" %d:%d:%d", v.q_head(task, sub), m, ranks.at(m));
          }
        }
        std::printf("\n");
      }
    }
  }
}

void dump_schedule() {
  dash::BwdScheduleView v{};
  int schedule = 0;
  if (std::scanf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", &v.num_m_blocks, &v.num_n_blocks, &v.heads,
                 &v.heads_kv, &v.batch, &v.seqlen_q, &v.seqlen_k, &v.block_m, &v.block_n, &v.mask.left,
                 &v.mask.right, &schedule, &v.grid, &v.parts, &v.chunk, &v.tail_cap) != 16) {
    return;
  }
  v.schedule = static_cast<dash::BwdSchedule>(schedule);
  v.geo = dash::fixed_seq_geometry(v.batch, v.heads, v.heads_kv, v.seqlen_q, v.seqlen_k, v.block_m);
  print_schedule(v);
}

dash::SeqGeometry read_packed_geometry(int heads, int heads_kv, int batch, int stats_block, std::vector<int>& cu_q,
                                       std::vector<int>& cu_k) {
  cu_q = read_ints(batch + 1);
  cu_k = read_ints(batch + 1);
  int max_q = 0, max_k = 0;
  for (int b = 0; b < batch; ++b) {
    max_q = std::max(max_q, cu_q[b + 1] - cu_q[b]);
    max_k = std::max(max_k, cu_k[b + 1] - cu_k[b]);
  }
  return dash::packed_seq_geometry(batch, heads, heads_kv, max_q, max_k, cu_q[batch], cu_k[batch], cu_q.data(),
                                   cu_k.data(), nullptr, nullptr, stats_block);
}

void dump_varlen_schedule() {
  int heads, heads_kv, batch, block_m, block_n, schedule, grid, numbering, parts;
  dash::MaskWindow mask;
  if (std::scanf("%d %d %d %d %d %d %d %d %d %d %d", &heads, &heads_kv, &batch, &block_m, &block_n, &mask.left,
                 &mask.right, &schedule, &grid, &numbering, &parts) != 11) {
    return;
  }
  std::vector<int> cu_q, cu_k;
  dash::BwdScheduleView v{};
  v.geo = read_packed_geometry(heads, heads_kv, batch, block_m, cu_q, cu_k);
  v.num_m_blocks = dash::ceil_div(v.geo.seqlen_q, block_m);
  v.num_n_blocks = dash::ceil_div(v.geo.seqlen_k, block_n);
  v.heads = heads;
  v.heads_kv = heads_kv;
  v.parts = parts;
  v.batch = batch;
  v.seqlen_q = v.geo.seqlen_q;
  v.seqlen_k = v.geo.seqlen_k;
  v.block_m = block_m;
  v.block_n = block_n;
  v.mask = mask;
  v.schedule = static_cast<dash::BwdSchedule>(schedule);
  v.grid = grid;
  std::vector<int> table(dash::VarlenTiles::table_size(v.num_n_blocks, batch));
  dash::build_varlen_tiles_host(v.geo, dash::VarlenTileCount{block_n, true}, v.num_n_blocks, v.units(), false,
                                table.data());
  v.varlen = dash::VarlenTiles{table.data(), v.num_n_blocks, batch, v.units(), false,
                               static_cast<dash::VarlenOrder>(numbering)};
  print_schedule(v);
}

void dump_varlen_table() {
  int batch, block, key_side, num_slabs, units, reverse, numbering;
  if (std::scanf("%d %d %d %d %d %d %d", &batch, &block, &key_side, &num_slabs, &units, &reverse, &numbering) != 7) {
    return;
  }
  std::vector<int> cu_q, cu_k;
  dash::SeqGeometry const g = read_packed_geometry(1, 1, batch, 64, cu_q, cu_k);
  std::vector<int> table(dash::VarlenTiles::table_size(num_slabs, batch));
  dash::build_varlen_tiles_host(g, dash::VarlenTileCount{block, key_side != 0}, num_slabs, units, reverse != 0,
                                table.data());
  std::printf("table");
  for (int x : table) { std::printf(" %d", x); }
  std::printf("\n");
  dash::VarlenTiles const tiles{table.data(), num_slabs, batch, units, reverse != 0,
                                static_cast<dash::VarlenOrder>(numbering)};
  std::printf("items");
  for (int i = 0; i < tiles.num_items(); ++i) {
    dash::VarlenItem const it = tiles.locate(i);
    std::printf(" %d:%d:%d", it.tile, it.batch, it.unit);
  }
  std::printf("\n");
}

void dump_geometry() {
  int heads, heads_kv, batch, max_q, max_k, block_m, block_n, used;
  dash::MaskWindow mask;
  if (std::scanf("%d %d %d %d %d %d %d %d %d %d", &heads, &heads_kv, &batch, &max_q, &max_k, &block_m, &block_n,
                 &mask.left, &mask.right, &used) != 10) {
    return;
  }
  dash::SeqGeometry g;
  std::vector<int> cu_q, cu_k, used_q, used_k;
  if (batch == 0) {
    batch = 3;
    g = dash::fixed_seq_geometry(batch, heads, heads_kv, max_q, max_k, block_m);
  } else {
    cu_q.resize(batch + 1);
    cu_k.resize(batch + 1);
    for (int& x : cu_q) { std::scanf("%d", &x); }
    for (int& x : cu_k) { std::scanf("%d", &x); }
    if (used) {
      used_q.resize(batch);
      used_k.resize(batch);
      for (int& x : used_q) { std::scanf("%d", &x); }
      for (int& x : used_k) { std::scanf("%d", &x); }
    }
    g = dash::packed_seq_geometry(batch, heads, heads_kv, max_q, max_k, cu_q[batch], cu_k[batch], cu_q.data(),
                                  cu_k.data(), used ? used_q.data() : nullptr, used ? used_k.data() : nullptr,
                                  block_m);
  }
  std::printf("geo stats_rows=%d dq_tiles=%lld batches=%d group=%d kv_tiles=%lld\n", g.stats_rows,
              (long long)g.num_dq_tiles(), g.tensor_batches(), g.group(), (long long)g.kv_tiles_per_head(block_n));
  for (int b = 0; b < batch; ++b) {
    dash::SeqInfo const s = g.seq(b);
    dash::SeqTiles const t = dash::seq_tiles(s, block_m, block_n, mask);
    std::printf("seq %d lens %d %d rows %d %d tb %d stats %d", b, s.len_q, s.len_k, s.row_q, s.row_k,
                s.tensor_batch, s.stats_row);
    for (int h = 0; h < heads; h += heads > 1 ? heads - 1 : 1) {
      std::printf(" h%d:%lld:%lld:%lld:kv%d", h, (long long)g.stats_offset(s, h), (long long)g.lse_offset(s, h),
                  (long long)g.dq_tile(s, h, 0), g.kv_head(h));
    }
    std::printf(" kvt %lld:%lld", (long long)g.kv_tile(s, 0, 0, block_n), (long long)g.kv_tile(s, heads_kv - 1, 1, block_n));
    std::printf(" m %d n %d shift %d n_ranges", t.num_m_blocks(), t.num_n_blocks(), t.shift());
    for (int m = 0; m < t.num_m_blocks(); ++m) { std::printf(" %d:%d", t.n_block_begin(m), t.n_block_end(m)); }
    std::printf(" m_ranges");
    for (int n = 0; n < t.num_n_blocks(); ++n) { std::printf(" %d:%d", t.m_block_begin(n), t.m_block_end(n)); }
    std::printf(" partial");
    for (int m = 0; m < t.num_m_blocks(); ++m) {
      for (int n = 0; n < t.num_n_blocks(); ++n) { std::printf("%d", int(t.partial(m, n))); }
    }
    dash::ElementMask const e = t.element_mask(t.num_m_blocks() - 1, 0, 3, 5);
    std::printf(" em %d %d %d\n", e.kv_limit, e.right_diagonal, e.left_diagonal);
  }
}

}  // namespace

int main() {
  char kind[16];
  while (std::scanf("%15s", kind) == 1) {
    if (std::strcmp(kind, "sched") == 0) {
      dump_schedule();
    } else if (std::strcmp(kind, "vsched") == 0) {
      dump_varlen_schedule();
    } else if (std::strcmp(kind, "vtable") == 0) {
      dump_varlen_table();
    } else if (std::strcmp(kind, "kvparts") == 0) {
      long long items;
      int group, resident, longest, packed, deterministic, full_mask;
      dash::GroupSplitTraits t{};
      if (std::scanf("%lld %d %d %d %d %d %d %d %d %d %d %d", &items, &group, &resident, &longest, &packed,
                     &deterministic, &full_mask, &t.det_band_walk_steps, &t.nondet_band_walk_steps,
                     &t.nondet_full_walk_steps, &t.band_min_parts, &t.det_full_walk_steps) == 12) {
        int const limit = dash::walk_step_limit(packed != 0, deterministic != 0, full_mask != 0, t);
        bool const fill = dash::kv_parts_fill_grid(packed != 0, deterministic != 0);
        int const least = dash::kv_parts_minimum(packed != 0, full_mask != 0, t);
        std::printf("parts %d limit %d\n", dash::kv_parts_for(items, group, resident, longest, limit, fill, least),
                    limit);
      }
    } else if (std::strcmp(kind, "chunk") == 0) {
      int seqlen_q, num_n, head_dim, head_dim_v, walk_heads, parts;
      if (std::scanf("%d %d %d %d %d %d", &seqlen_q, &num_n, &head_dim, &head_dim_v, &walk_heads, &parts) == 6) {
        std::printf("chunk %d\n", dash::deal_chunk_for(seqlen_q, num_n, head_dim, head_dim_v, walk_heads, parts));
      }
    } else if (std::strcmp(kind, "bandchunk") == 0) {
      int seqlen_q, head_dim, head_dim_v, walk_heads, deterministic;
      if (std::scanf("%d %d %d %d %d", &seqlen_q, &head_dim, &head_dim_v, &walk_heads, &deterministic) == 5) {
        std::printf("bandchunk %d\n",
                    dash::band_deal_chunk_for(seqlen_q, head_dim, head_dim_v, walk_heads, deterministic != 0));
      }
    } else if (std::strcmp(kind, "tailcap") == 0) {
      int deterministic, items_per_head, grid;
      if (std::scanf("%d %d %d", &deterministic, &items_per_head, &grid) == 3) {
        std::printf("tailcap %d\n", dash::diagonal_tail_cap(deterministic != 0, items_per_head, grid));
      }
    } else if (std::strcmp(kind, "geo") == 0) {
      dump_geometry();
    } else if (std::strcmp(kind, "window") == 0) {
      int causal, left, right, seqlen_q, seqlen_k;
      if (std::scanf("%d %d %d %d %d", &causal, &left, &right, &seqlen_q, &seqlen_k) == 5) {
        dash::MaskWindow const w = dash::make_mask_window(causal != 0, left, right, seqlen_q, seqlen_k);
        std::printf("window %d %d full=%d causal=%d windowed=%d kind=%d\n", w.left, w.right, int(w.full()),
                    int(w.causal()), int(w.windowed()), int(w.kind()));
      }
    } else {
      return 1;
    }
  }
  return 0;
}
