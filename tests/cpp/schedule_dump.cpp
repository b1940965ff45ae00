// Prints what the kernel headers compute, for tests/test_schedule_model.py to compare with
// the Python mirrors (dash/schedule.py, dash/geometry.py). One case per stdin line:
//   sched num_m num_n heads heads_kv batch seqlen_q seqlen_k block_m block_n causal schedule grid
//     -> for every CTA its tasks in order, each with its (query head : Q tile : rank) steps
//        (csrc/kernels/bwd/schedule.h)
//   geo heads heads_kv batch max_q max_k block_m block_n causal used cu_q[batch+1] cu_k[batch+1]
//       [seqused_q[batch] seqused_k[batch] if used]  (batch 0: a fixed-length geometry of
//       max_q x max_k with one sequence per head group; see the test)
//     -> per sequence its SeqInfo, workspace / LSE / dQ-tile offsets, and the mask's tile
//        ranges (csrc/kernels/common/seq_geometry.h, mask.h)
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/bwd/schedule.h"
#include "kernels/common/mask.h"
#include "kernels/common/seq_geometry.h"

namespace {

void dump_schedule() {
  dash::BwdScheduleView v;
  int causal = 0, schedule = 0;
  if (std::scanf("%d %d %d %d %d %d %d %d %d %d %d %d", &v.num_m_blocks, &v.num_n_blocks, &v.heads, &v.heads_kv,
                 &v.batch, &v.seqlen_q, &v.seqlen_k, &v.block_m, &v.block_n, &causal, &schedule, &v.grid) != 12) {
    return;
  }
  v.causal = causal != 0;
  v.schedule = static_cast<dash::BwdSchedule>(schedule);
  std::printf("case shift=%d symmetric=%d\n", int(dash::shift_applies(v)), int(dash::symmetric_shift_applies(v)));
  for (int cta = 0; cta < v.grid; ++cta) {
    int ordinal = 0;
    for (int round = 0; round < v.num_rounds(); ++round) {
      int const item = v.item_id(cta, round);
      if (item < 0) { continue; }
      for (int member = 0; member < v.members(); ++member, ++ordinal) {
        dash::BwdTask const task = v.task(item, member);
        std::printf("cta %d #%d item %d member %d n %d h %d b %d steps", cta, ordinal, task.item, task.member,
                    task.n_block, task.kv_head, task.batch);
        dash::QWalk const walk = v.q_walk(task);
        dash::TaskRanks const ranks = v.task_ranks(task);
        // The producer's loop: Q tiles of the walk, the group's query heads within each.
        for (int i = 0; i < v.num_q_tiles(task); ++i) {
          int const m = walk.at(i);
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

void dump_geometry() {
  int heads, heads_kv, batch, max_q, max_k, block_m, block_n, causal, used;
  if (std::scanf("%d %d %d %d %d %d %d %d %d", &heads, &heads_kv, &batch, &max_q, &max_k, &block_m, &block_n,
                 &causal, &used) != 9) {
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
  std::printf("geo stats_rows=%d dq_tiles=%lld batches=%d group=%d\n", g.stats_rows,
              (long long)g.num_dq_tiles(), g.tensor_batches(), g.group());
  for (int b = 0; b < batch; ++b) {
    dash::SeqInfo const s = g.seq(b);
    dash::SeqTiles const t = dash::seq_tiles(s, block_m, block_n, causal != 0);
    std::printf("seq %d lens %d %d rows %d %d tb %d stats %d", b, s.len_q, s.len_k, s.row_q, s.row_k,
                s.tensor_batch, s.stats_row);
    for (int h = 0; h < heads; h += heads > 1 ? heads - 1 : 1) {
      std::printf(" h%d:%lld:%lld:%lld:kv%d", h, (long long)g.stats_offset(s, h), (long long)g.lse_offset(s, h),
                  (long long)g.dq_tile(s, h, 0), g.kv_head(h));
    }
    std::printf(" m %d n %d ends", t.num_m_blocks(), t.num_n_blocks());
    for (int m = 0; m < t.num_m_blocks(); ++m) { std::printf(" %d", t.n_block_end(m)); }
    std::printf(" begins");
    for (int n = 0; n < t.num_n_blocks(); ++n) { std::printf(" %d", t.m_block_begin(n)); }
    std::printf(" partial");
    for (int m = 0; m < t.num_m_blocks(); ++m) {
      for (int n = 0; n < t.num_n_blocks(); ++n) { std::printf("%d", int(t.partial(m, n))); }
    }
    dash::ElementMask const e = t.element_mask(t.num_m_blocks() - 1, 0, 3, 5);
    std::printf(" em %d %d\n", e.kv_limit, e.diagonal);
  }
}

}  // namespace

int main() {
  char kind[16];
  while (std::scanf("%15s", kind) == 1) {
    if (std::strcmp(kind, "sched") == 0) {
      dump_schedule();
    } else if (std::strcmp(kind, "geo") == 0) {
      dump_geometry();
    } else {
      return 1;
    }
  }
  return 0;
}
