// The backward schedule: which (KV tile, head, batch) tasks each persistent CTA runs, in
// which order a task visits its Q tiles, and each dQ tile's fixed accumulation order (the
// value its semaphore must show before a task may add its partial).
//
// This file is the single definition of that index math. The producer warp, the MMA
// warpgroups and the dQ writer warp all walk the same BwdScheduleView; the host planner
// (launch/bwd_plan.cpp) uses it to check preconditions; dash/schedule.py mirrors it line
// for line, and tests compare both on a table of cases and against the kernel's recorded
// accumulation order.
//
// Deadlock freedom. Tasks are numbered 0..T-1 and dealt to the G CTAs in rounds: round r
// holds tasks [rG, (r+1)G), one per CTA, and a CTA runs its rounds in order. A wait
// always targets a task of the same or an earlier round and is well-founded within the
// round: in ascending order a task waits on a smaller task number; in shift order on a
// strictly earlier step of its group. So, with all G CTAs resident (the launcher sizes G
// from the device's real occupancy and launches cooperatively when CTAs wait on each
// other), the smallest blocked (round, number / step) can always make progress.
#pragma once

#include "../host_device.h"

#include "../attn_bwd_params.h"

namespace dash {

struct BwdTask {
  int id;       // position in the task numbering (decides the round / wave)
  int n_block;  // KV tile
  int head;
  int batch;
};

// The KV tiles of one head that fall into one round form a shift group: local indices
// 0..size-1, preceded in every dQ tile's order by the `first` tiles of earlier rounds.
struct ShiftGroup {
  int first;  // KV tiles of this head in earlier rounds (they add first)
  int size;   // KV tiles of this head in this round
};

struct BwdScheduleView {
  int num_m_blocks;  // Q tiles per (batch, head)
  int num_n_blocks;  // KV tiles per (batch, head)
  int heads;
  int batch;
  int seqlen_q;
  int seqlen_k;
  int block_m;
  int block_n;
  bool causal;
  BwdSchedule schedule;  // resolved: kAscending or kShift
  int grid;              // persistent CTAs (G)

  DASH_HOST_DEVICE int num_tasks() const { return num_n_blocks * heads * batch; }
  DASH_HOST_DEVICE int num_rounds() const { return (num_tasks() + grid - 1) / grid; }

  // Task of CTA `cta` in round `round`, or -1 if that slot of the last round is empty.
  // Odd rounds deal in reverse CTA order ("snake"), so a CTA that got a long causal task
  // in one round gets a short one in the next.
  DASH_HOST_DEVICE int task_id(int cta, int round) const {
    int const slot = (round % 2 == 0) ? cta : grid - 1 - cta;
    int const t = round * grid + slot;
    return t < num_tasks() ? t : -1;
  }

  // Full mask: KV tile fastest, so a head's tiles share a round (shift groups).
  // Causal: KV tile slowest. KV tile n has fewer Q tiles the larger n is, so this deals
  // the longest tasks first, all heads together.
  DASH_HOST_DEVICE BwdTask task(int t) const {
    BwdTask task;
    task.id = t;
    int bh;
    if (causal) {
      task.n_block = t / (heads * batch);
      bh = t % (heads * batch);
    } else {
      task.n_block = t % num_n_blocks;
      bh = t / num_n_blocks;
    }
    task.head = bh % heads;
    task.batch = bh / heads;
    return task;
  }

  // First Q tile that sees any key of KV tile n. Causal masks are aligned bottom-right:
  // query i sees key j iff j <= i + seqlen_k - seqlen_q.
  DASH_HOST_DEVICE int m_block_begin(int n_block) const {
    if (!causal) { return 0; }
    int const first_query = n_block * block_n - (seqlen_k - seqlen_q);
    return first_query <= 0 ? 0 : first_query / block_m;
  }

  DASH_HOST_DEVICE int num_steps(BwdTask const& task) const {
    int const n = num_m_blocks - m_block_begin(task.n_block);
    return n > 0 ? n : 0;
  }

  DASH_HOST_DEVICE ShiftGroup shift_group(BwdTask const& task) const {
    int const head_first_task = task.id - task.n_block;  // full mask: n is fastest
    int const round_begin = (task.id / grid) * grid;
    int const round_end = round_begin + grid;
    ShiftGroup group;
    group.first = round_begin > head_first_task ? round_begin - head_first_task : 0;
    int const end = round_end - head_first_task < num_n_blocks ? round_end - head_first_task : num_n_blocks;
    group.size = end - group.first;
    return group;
  }

  // Q tile visited at `step`: the task starts at first_q_tile() and walks up, wrapping
  // around after the last Q tile (only shift ever wraps).
  //   ascending: m_begin, m_begin + 1, ..., M-1
  //   shift:     local index s starts at Q tile s: s, s+1, ..., M-1, 0, ..., s-1, so the
  //              group's CTAs touch distinct Q tiles at every step.
  DASH_HOST_DEVICE int first_q_tile(BwdTask const& task) const {
    if (schedule == BwdSchedule::kShift) { return task.n_block - shift_group(task).first; }
    return m_block_begin(task.n_block);
  }
  DASH_HOST_DEVICE int next_q_tile(int m_block) const {
    return m_block + 1 < num_m_blocks ? m_block + 1 : 0;
  }
  DASH_HOST_DEVICE int q_tile_at(BwdTask const& task, int step) const {
    return (first_q_tile(task) + step) % num_m_blocks;
  }

  // Rank of this task's partial in Q tile m's accumulation order = the semaphore value
  // it waits for.
  //   ascending: KV tiles 0 .. n_max(m)-1 add in ascending order (a causal mask only
  //              removes the *last* KV tiles of a Q tile), so rank = n.
  //   shift:     earlier rounds' tiles first; within the group, tile m is reached at step
  //              (m - s) mod M by local index s, so the order of adds is the order of
  //              those steps: s = min(m, R-1), then descending, wrapping around.
  struct TaskRanks {  // per-task constants, so the per-step rank is a few integer ops
    bool shift;
    int first, size, local;  // shift group and this task's local index in it
    int n_block;
    DASH_HOST_DEVICE int at(int m_block) const {
      if (!shift) { return n_block; }
      int const top = m_block < size - 1 ? m_block : size - 1;
      int const d = top - local;
      return first + (d >= 0 ? d : d + size);
    }
  };
  DASH_HOST_DEVICE TaskRanks task_ranks(BwdTask const& task) const {
    TaskRanks r;
    r.shift = schedule == BwdSchedule::kShift;
    ShiftGroup const g = r.shift ? shift_group(task) : ShiftGroup{0, 1};
    r.first = g.first;
    r.size = g.size;
    r.local = task.n_block - g.first;
    r.n_block = task.n_block;
    return r;
  }
  DASH_HOST_DEVICE int dq_rank(BwdTask const& task, int m_block) const {
    return task_ranks(task).at(m_block);
  }

  // Index of (batch, head, m_block) in the semaphore / trace arrays.
  DASH_HOST_DEVICE int dq_tile_index(BwdTask const& task, int m_block) const {
    return (task.batch * heads + task.head) * num_m_blocks + m_block;
  }
};

// Shift needs every group's tiles on distinct Q tiles at every step (M >= group size,
// and groups are at most min(N, G) big) and no causal offset.
DASH_HOST_DEVICE bool shift_applies(BwdScheduleView const& v) {
  int const max_group = v.num_n_blocks < v.grid ? v.num_n_blocks : v.grid;
  return !v.causal && v.num_m_blocks >= max_group;
}

inline BwdScheduleView make_schedule_view(AttnBwdParams const& p) {
  BwdTileShape const tile = bwd_tile_shape(p.head_dim);
  BwdScheduleView view;
  view.num_m_blocks = p.num_m_blocks;
  view.num_n_blocks = p.num_n_blocks;
  view.heads = p.heads;
  view.batch = p.batch;
  view.seqlen_q = p.seqlen_q;
  view.seqlen_k = p.seqlen_k;
  view.block_m = tile.block_m;
  view.block_n = tile.block_n;
  view.causal = p.causal;
  view.schedule = p.planned_schedule;
  view.grid = p.grid;
  return view;
}

}  // namespace dash
