// The backward schedule: which (KV tile, head, batch) tasks a persistent CTA runs, in
// which order each task visits its Q tiles, and each dQ tile's fixed accumulation order
// (the value its semaphore must show before a task may add its partial).
//
// This file is the single definition of the index math. The producer warp, the MMA
// warpgroups and the dQ writer warp all walk the same BwdScheduleView, and
// dash/schedule.py mirrors it line for line (tests compare both on a table of cases and
// against the kernel's recorded accumulation order).
#pragma once

#include <cute/config.hpp>

#include "../attn_bwd_params.h"

namespace dash {

struct BwdTask {
  int n_block;  // KV tile
  int head;
  int batch;
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

  CUTE_HOST_DEVICE int num_tasks() const { return num_n_blocks * heads * batch; }

  // Tasks are numbered KV tile fastest, then head, then batch. A persistent CTA c runs
  // tasks c, c + G, c + 2G, ... (G = grid size). Every semaphore wait below targets a
  // task with a smaller number, so the smallest unfinished task can always progress as
  // long as all G CTAs are resident (the launcher sizes G from the device's occupancy).
  CUTE_HOST_DEVICE BwdTask task(int t) const {
    BwdTask task;
    task.n_block = t % num_n_blocks;
    int const bh = t / num_n_blocks;
    task.head = bh % heads;
    task.batch = bh / heads;
    return task;
  }

  // First Q tile that sees any key of KV tile n. Causal masks are aligned bottom-right:
  // query i sees key j iff j <= i + seqlen_k - seqlen_q.
  CUTE_HOST_DEVICE int m_block_begin(int n_block) const {
    if (!causal) { return 0; }
    int const first_query = n_block * block_n - (seqlen_k - seqlen_q);
    return first_query <= 0 ? 0 : first_query / block_m;
  }

  CUTE_HOST_DEVICE int num_steps(BwdTask const& task) const {
    int const n = num_m_blocks - m_block_begin(task.n_block);
    return n > 0 ? n : 0;
  }

  // Q tile visited at `step` (ascending: the FlashAttention-3 baseline order).
  CUTE_HOST_DEVICE int q_tile_at(BwdTask const& task, int step) const {
    return m_block_begin(task.n_block) + step;
  }

  // Rank of this task's partial in Q tile m's accumulation order = the semaphore value
  // it waits for. Ascending: the KV tiles touching m are 0 .. n_max(m)-1 (a causal mask
  // only ever removes the *last* KV tiles of a Q tile), added in ascending order.
  CUTE_HOST_DEVICE int dq_rank(BwdTask const& task, int /*m_block*/) const {
    return task.n_block;
  }

  // Index of (batch, head, m_block) in the semaphore / trace arrays.
  CUTE_HOST_DEVICE int dq_tile_index(BwdTask const& task, int m_block) const {
    return (task.batch * heads + task.head) * num_m_blocks + m_block;
  }
};

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
  return view;
}

}  // namespace dash
