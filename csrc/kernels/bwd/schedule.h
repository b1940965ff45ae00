// The backward schedule: which (KV tile, head, batch) tasks each persistent CTA runs, in
// which order a task visits its Q tiles, and each dQ tile's fixed accumulation order (the
// value its semaphore must show before a task may add its partial).
//
// This file is the single definition of that index math. The producer warp, the MMA
// warpgroups and the dQ writer warps all walk the same BwdScheduleView; the host planner
// (launch/bwd_plan.cpp) checks its preconditions; dash/schedule.py mirrors it line for
// line, and tests compare both on random cases and against the kernel's recorded order.
//
// Work is dealt in *items*: one KV tile, or (symmetric shift) a pair of KV tiles of one
// K/V head that one CTA runs back to back. Items go to the G persistent CTAs in rounds of G.
//
// GQA / MQA: a task is a KV tile of a K/V head, and it walks the whole query-head group
// of that head, so its dK / dV stay in registers and no cross-CTA reduction exists. Each
// Q tile of the walk becomes `group` consecutive steps, one per query head (heads
// fastest), all with that Q tile's rank: the dQ tiles of the group's heads see exactly
// the MHA order, and at any step the tasks of a shift group still touch distinct dQ tiles.
// (The alternative, tasks of single query heads whose dK / dV partials are reduced in a
// fixed order across CTAs, is modelled in dash/schedule_sim.py; bench/RESULTS.md compares.)
// When the group walks cannot keep the grid busy (MQA: few K/V heads, long walks), each
// is split over `parts` tasks of group / parts query heads; each part leaves its fp32
// dK / dV partial in a workspace and a small kernel adds them in part order afterwards
// (bwd/epilogue.h, prepost.h), so the split adds no wait. A part is a *unit*: the schedule
// deals units as it deals K/V heads (unit = kv_head * parts + part).
//
// Packed (variable-length) batches: items are numbered densely through the VarlenTiles
// table (common/varlen_tiles.h) and CTAs draw them from a counter in item order (the
// tasks' lengths differ too much for static rounds); each task carries its own sequence's
// tiles. Causal: the diagonal schedule. A sequence's tasks are numbered consecutively
// (sequence-major), its last KV tile first, and they start at about the same time; each
// walks up from its diagonal Q tile, so at Q tile m the task of KV tile n arrives sigma
// steps after the task of KV tile n + 1: adding in that order (from the diagonal KV tile
// back to KV tile 0) is the order the partials arrive in, and every wait targets a
// smaller item. Full masks: ascending, numbered sequence by sequence and KV tile by KV tile
// (heads fastest), so a sequence's KV tile n + 1 starts after its KV tile n. Shift / symmetric shift are not dealt per
// sequence (their waits are not ordered by item, which the counter needs).
//
// Sliding windows (any band other than the causal one): KV tile n visits the Q tiles
// [m_block_begin(n), m_block_end(n)) and dQ tile m receives the KV tiles [n_block_begin(m),
// n_block_end(m)). The diagonal order carries over unchanged: walking up from m_block_begin,
// the task of KV tile n + 1 reaches any Q tile sigma steps before the task of KV tile n, so
// dQ tile m adds from n_block_end(m) - 1 down; fixed-length calls number a head's tasks
// consecutively, last KV tile first, and deal them in static rounds (the band's tasks are of
// about equal length). Shift and symmetric shift assume a full or causal shape and do not apply.
//
// Grid invariance (what `deterministic=True` gives by default). A dQ tile's order of adds
// is fixed before the launch by its rank; for ascending, descending and diagonal that rank
// is a function of the tile and its sequence's shape alone, and so is every task's walk
// (hence the order in which its dK / dV accumulate). Fixed-length full masks deal ascending
// and bands deal diagonal from a counter, like packed calls: nothing then depends on the
// grid, sm_margin, the SM count, or which heads and sequences share the launch. Shift and
// symmetric shift define their groups by rounds of the grid: faster where they apply, but
// their bits change with the grid (an explicit opt-in). A single CTA can run a
// fixed-order schedule only if every dQ tile's order follows the order the items are
// dealt in, so no per-tile cyclic order such as shift's can be grid-invariant without
// holding partials back (bench/RESULTS.md item 63).
//
// Deadlock freedom. A CTA runs its rounds in order. Every wait targets a task of the same
// or an earlier round and is well-founded within the round: ascending / descending /
// diagonal (and fa3_baseline) wait on a smaller item number; shift / symmetric shift on a strictly earlier step of the
// same round group (their order of adds *is* the order of the visiting steps). So, with
// all G CTAs resident (G is sized from the device's real occupancy and a deterministic
// kernel dealt in static rounds is a cooperative launch), the smallest blocked (round, item /
// step) can always make progress. Counter-dealt calls (packed, fixed-length diagonal and
// ascending): every wait targets a smaller item, and a CTA draws every item it runs
// (its first too; each larger than every item drawn before) only while it runs, so the
// smallest unfinished item is running and only waits on finished ones, on any grid of >= 1
// CTA and however many of them are resident (no cooperative launch needed). The one
// exception is fixed-length diagonal's tail, dealt longest first (tail_items): its items wait
// on items drawn after them, so it is dealt so only once every CTA of the launch runs, and a
// CTA running one of them draws its next item only when that one's adds are done; its
// grid - 1 items then cannot all be waited on by G blocked CTAs (bwd/producer.h).
// (Within a CTA the waits are the pipelines' and the task hand-off of producer.h, whose dO
// warp follows the tasks the Q warp publishes: a task without steps needs its own
// handshake there, do_records_read.)
#pragma once

#include "../../attn_bwd_params.h"
#include "../../host_device.h"
#include "../common/mask.h"
#include "../common/seq_geometry.h"
#include "../common/varlen_tiles.h"

namespace dash {

struct BwdTask {
  int item;     // work item number (decides the round)
  int member;   // 0, or 1 for the short tile of a symmetric-shift pair
  int n_block;  // KV tile
  int kv_head;  // K/V head (= query head without GQA)
  int part;     // which slice of the K/V head's query-head group it walks (0 unless split)
  int batch;
  SeqTiles tiles;  // the task's sequence under the mask
};

// The items of one K/V head that fall into one round form a group: local indices 0..size-1,
// preceded in every dQ tile's order by the `first` items of earlier rounds.
struct ItemGroup {
  int first;  // items of this head in earlier rounds
  int size;   // items of this head in this round
};

// Q tile at `step`: step < jump_step ? base + (offset + step) % period
//                                    : jump_to + dir * (step - jump_step)
struct QWalk {
  int base, offset, period, jump_step, jump_to, dir;
  DASH_HOST_DEVICE int at(int step) const {
    return step < jump_step ? base + (offset + step) % period : jump_to + dir * (step - jump_step);
  }
  // at(step + 1) from m_block = at(step), without at()'s division: the producer walks its
  // tasks' Q tiles in order (tests/cpp/schedule_dump.cpp checks next against at).
  DASH_HOST_DEVICE int next(int m_block, int step) const {
    int const following = step + 1;
    if (following < jump_step) { return m_block + 1 == base + period ? base : m_block + 1; }
    return following == jump_step ? jump_to : m_block + dir;
  }
};

// Per-task constants for the rank of each add (so the per-step cost is a few int ops).
struct TaskRanks {
  BwdSchedule schedule;
  int n_block, member;
  int first, size, local;  // item group and this item's local index in it
  int sigma, rho, num_n_blocks;
  SeqTiles tiles;          // the task's sequence under the mask
  DASH_HOST_DEVICE int at(int m_block) const {
    switch (schedule) {
      case BwdSchedule::kDiagonal:  // KV tiles n_block_end(m) - 1, ..., n_block_begin(m)
        return tiles.n_block_end(m_block) - 1 - n_block;
      case BwdSchedule::kShift: {
        int const top = m_block < size - 1 ? m_block : size - 1;
        int const d = top - local;
        return first + (d >= 0 ? d : d + size);
      }
      case BwdSchedule::kSymmetricShift: {
        // Adds from earlier rounds' pairs come first: their long tiles j < first and short
        // tiles j >= N - first that see Q tile m (sigma * j <= m).
        int const visible = m_block / sigma + 1;  // KV tiles 0..visible-1 see Q tile m
        int const early_long = visible < first ? visible : first;
        int const early_short_end = visible < num_n_blocks ? visible : num_n_blocks;
        int const early_short = early_short_end - (num_n_blocks - first) > 0 ? early_short_end - (num_n_blocks - first) : 0;
        int const earlier = early_long + early_short;
        if (member == 1) { return earlier + size + (size - 1 - local); }  // after the group's long tiles
        if (m_block >= rho) {                                             // rectangle: cyclic shift
          int const row = m_block - rho;
          int const top = row < size - 1 ? row : size - 1;
          int const d = top - local;
          return earlier + (d >= 0 ? d : d + size);
        }
        return earlier + (m_block / sigma - first) - local;               // triangle: from the diagonal
      }
      case BwdSchedule::kAscending:
      case BwdSchedule::kDescending:
      case BwdSchedule::kFa3Baseline:
      default:  // KV tiles n_block_begin(m), ..., n_block_end(m) - 1
        return n_block - tiles.n_block_begin(m_block);
    }
  }
};

// Which schedules draw their items from a counter: every packed call (tasks of very
// unequal length), and the fixed-length schedules whose every dQ tile adds its KV tiles in
// one order common to the whole head (ascending, diagonal). Their waits all target smaller
// items, so a counter deals them on any number of CTAs; and with no rounds, nothing about
// their order depends on the grid (see "Grid invariance" above). Ascending deals chunks of
// walks KV tile by KV tile (task()): on a band that is the longest tasks first, as
// FlashAttention-3's non-deterministic causal backward deals them.
// (Banded descending dealt from a counter, longest first, measured slower than diagonal:
// bench/RESULTS.md item 143.)
DASH_HOST_DEVICE bool counter_dealt_schedule(BwdSchedule schedule, bool packed) {
  return packed || schedule == BwdSchedule::kDiagonal || schedule == BwdSchedule::kAscending;
}

struct BwdScheduleView {
  int num_m_blocks;  // Q tiles per (batch, head): M
  int num_n_blocks;  // KV tiles per (batch, head): N
  int heads;         // query heads
  int heads_kv;      // K/V heads: tasks are per K/V head (per part of its group when split)
  int parts;         // tasks a K/V head's query-head group is split over (1: one walk)
  int batch;
  int seqlen_q;
  int seqlen_k;
  int block_m;
  int block_n;
  MaskWindow mask;       // the call's band (full: (-1, -1), causal: (-1, 0))
  BwdSchedule schedule;  // resolved: never kAuto
  int grid;              // persistent CTAs (G)
  SeqGeometry geo;       // the call's sequences (stats_block = block_m)
  VarlenTiles varlen;    // packed batches: the dense item table (table == nullptr: fixed length)
  int chunk;             // fixed-length ascending: (batch, unit) walks per dealing chunk
  int tail_cap = -1;     // diagonal's tail at most this many items (diagonal_tail_cap; < 0: no cap)

  DASH_HOST_DEVICE bool packed() const { return varlen.table != nullptr; }
  // Items drawn from a counter in item order (else dealt in static rounds, item_id).
  DASH_HOST_DEVICE bool counter_dealt() const { return counter_dealt_schedule(schedule, packed()); }

  DASH_HOST_DEVICE bool paired() const { return schedule == BwdSchedule::kSymmetricShift; }
  DASH_HOST_DEVICE int members() const { return paired() ? 2 : 1; }
  DASH_HOST_DEVICE int items_per_head() const { return paired() ? num_n_blocks / 2 : num_n_blocks; }
  DASH_HOST_DEVICE int units() const { return heads_kv * parts; }  // what items are dealt per, as heads
  DASH_HOST_DEVICE int num_items() const {
    return packed() ? varlen.num_items() : items_per_head() * units() * batch;
  }
  DASH_HOST_DEVICE int group() const { return heads / units(); }  // query heads per task
  DASH_HOST_DEVICE int num_rounds() const { return (num_items() + grid - 1) / grid; }
  // Banded descending deals the longest tasks first in static rounds (see item_id and task);
  // banded ascending does so from a counter, in chunks of walks (task); fa3_baseline keeps
  // FlashAttention-3's order (KV tile fastest, head by head).
  DASH_HOST_DEVICE bool longest_first() const { return !mask.full() && schedule == BwdSchedule::kDescending; }
  // Diagonal (fixed length): a head's items consecutive, its last KV tile first, so each wait
  // (on KV tile n + 1) targets a smaller item and a round's tasks share few heads' rows (the
  // bands' walks are short, so numbering all heads' tile n together spread a round over
  // every head: bench/RESULTS.md item 34).
  DASH_HOST_DEVICE bool last_tile_first() const { return schedule == BwdSchedule::kDiagonal; }

  // Diagonal, fixed length: the launch's last tail_items() items (fewer than its CTAs) may be
  // dealt longest first, each head's share of them in reverse (tail_item), so the launch does
  // not end on its longest walks (last KV tile first puts a head's KV tile 0, its longest
  // walk, last). Only the dealing changes: an item's walk and its dQ ranks are those of its
  // task, so the bits are the same. But there a task's waits (on KV tile n + 1) target items
  // drawn after it, so the kernel deals the tail so only where no CTA can block on an item
  // nobody runs (bwd/producer.h): every CTA of the launch resident when the tail's first
  // item is drawn, and a CTA running a tail item draws the next only once its adds are done.
  // Then the tail's items all run: with every CTA waiting on an undrawn one, the tail would
  // hold grid items.
  // A deterministic tail is shorter (tail_cap, diagonal_tail_cap).
  // The tail starts after the first grid items, so its first value is a draw after a finished
  // task, when a resident launch's CTAs have all started; a tail among the first draws was
  // decided while CTAs were still starting, so its dealing hung on their start-up timing (at
  // the launch's very first draw, item order all but surely). A launch of at most grid items
  // deals every item at once: it has no tail.
  DASH_HOST_DEVICE int tail_items() const {
    if (schedule != BwdSchedule::kDiagonal || packed()) { return 0; }
    int const after_first_draws = num_items() - grid;
    int const items = after_first_draws <= 0 ? 0 : (grid - 1 < after_first_draws ? grid - 1 : after_first_draws);
    return tail_cap >= 0 && tail_cap < items ? tail_cap : items;
  }
  // The item dealt as the tail's `drawn`-th counter value (num_items() - tail_items() <= drawn
  // < num_items()): each head's items in the tail, in reverse.
  DASH_HOST_DEVICE int tail_item(int drawn) const {
    int const first = num_items() - tail_items();
    int const head_begin = drawn / items_per_head() * items_per_head();
    int const lo = head_begin > first ? head_begin : first;
    return lo + head_begin + items_per_head() - 1 - drawn;
  }
  DASH_HOST_DEVICE int sigma() const { return block_n / block_m; }  // Q tiles per KV tile

  // Item of CTA `cta` in round `round`, or -1 if that slot of the last round is empty.
  // Causal items of unequal length (ascending / descending) are dealt "snake"-wise: odd
  // rounds in reverse CTA order, so a CTA with a long item in one round gets a short one
  // in the next. Equal items keep their CTA index, so ordering lags do not compound
  // across rounds.
  DASH_HOST_DEVICE int item_id(int cta, int round) const {
    bool const snake = longest_first();
    int const slot = (snake && round % 2 == 1) ? grid - 1 - cta : cta;
    int const item = round * grid + slot;
    return item < num_items() ? item : -1;
  }

  // Item numbering. Shift, symmetric-shift pairs, fa3_baseline and diagonal: a head's
  // items are consecutive (they share a round: the groups of the shift schedules; diagonal:
  // last KV tile first). Ascending: chunks of walks, KV tile by KV tile within a chunk (on a
  // band, the longest tasks first). Banded descending: KV tile slowest, all heads together.
  DASH_HOST_DEVICE BwdTask task(int item, int member) const {
    BwdTask task;
    task.item = item;
    task.member = member;
    if (packed()) {
      VarlenItem const v = varlen.locate(item);
      task.n_block = v.tile;
      task.kv_head = v.unit / parts;
      task.part = v.unit - task.kv_head * parts;
      task.batch = v.batch;
      task.tiles = seq_tiles(geo.seq(v.batch), block_m, block_n, mask);
      return task;
    }
    task.tiles = tiles();
    int bh;
    if (schedule == BwdSchedule::kAscending) {
      // Chunks of `chunk` (batch, unit) walks; within a chunk KV tile by KV tile, walks
      // fastest: KV tile n + 1 of a walk starts about a chunk's width of items after KV tile n,
      // and a chunk's Q / dO stay in L2 while its tiles run.
      int const walks = units() * batch;
      int const width_max = chunk >= 1 && chunk < walks ? chunk : walks;
      int const span = width_max * num_n_blocks;
      int const first = (item / span) * width_max;
      int const width = walks - first < width_max ? walks - first : width_max;
      int const rest = item - (item / span) * span;
      task.n_block = rest / width;
      bh = first + rest % width;
    } else if (longest_first()) {
      task.n_block = item / (units() * batch);
      bh = item % (units() * batch);
    } else {
      int const p = item % items_per_head();
      bh = item / items_per_head();
      task.n_block = member == 0 && !last_tile_first() ? p : num_n_blocks - 1 - p;
    }
    int const unit = bh % units();
    task.kv_head = unit / parts;
    task.part = unit - task.kv_head * parts;
    task.batch = bh / units();
    return task;
  }

  DASH_HOST_DEVICE SeqTiles tiles() const { return SeqTiles{seqlen_q, seqlen_k, block_m, block_n, mask}; }

  // Q tiles the task visits (those with a query that sees a key of its KV tile); each is
  // `group()` steps, one per query head of the group.
  DASH_HOST_DEVICE int num_q_tiles(BwdTask const& task) const {
    int const n = task.tiles.m_block_end(task.n_block) - task.tiles.m_block_begin(task.n_block);
    return n > 0 ? n : 0;
  }
  DASH_HOST_DEVICE int num_steps(BwdTask const& task) const { return num_q_tiles(task) * group(); }
  // Query head of a task's step-within-Q-tile (0 .. group-1).
  DASH_HOST_DEVICE int q_head(BwdTask const& task, int sub) const {
    return (task.kv_head * parts + task.part) * group() + sub;
  }

  DASH_HOST_DEVICE ItemGroup item_group(BwdTask const& task) const {
    int const local_item = task.item % items_per_head();
    int const head_first_item = task.item - local_item;
    int const round_begin = (task.item / grid) * grid;
    int const round_end = round_begin + grid;
    ItemGroup group;
    group.first = round_begin > head_first_item ? round_begin - head_first_item : 0;
    int const end = round_end - head_first_item < items_per_head() ? round_end - head_first_item : items_per_head();
    group.size = end - group.first;
    return group;
  }

  // Symmetric shift: the long tiles of a group all cover Q tiles [rho, M) (the dense
  // rectangle); below rho each covers a triangle part starting at its diagonal.
  DASH_HOST_DEVICE int rectangle_begin(ItemGroup const& g) const { return sigma() * (g.first + g.size - 1); }

  // The order in which a task visits its Q tiles.
  //   ascending, fa3_baseline, diagonal: m_begin, m_begin + 1, ..., M-1 (FlashAttention-3's order)
  //   descending: M-1, M-2, ..., m_begin (the last Q tiles first)
  //   shift:      local index s starts at Q tile s and wraps: s, ..., M-1, 0, ..., s-1
  //   symmetric shift, long tile s: the rectangle rows cyclically from rho + s, then its
  //               triangle rows upward from its diagonal; short tile: M-1 downward.
  //   At every step the tasks of a shift / symmetric-shift group touch distinct Q tiles.
  DASH_HOST_DEVICE QWalk q_walk(BwdTask const& task) const {
    int const m_total = task.tiles.num_m_blocks();
    QWalk w{0, 0, m_total > 0 ? m_total : 1, 0, task.tiles.m_block_end(task.n_block) - 1, -1};  // descending
    switch (schedule) {
      case BwdSchedule::kAscending:
      case BwdSchedule::kFa3Baseline:
      case BwdSchedule::kDiagonal:
        w = QWalk{task.tiles.m_block_begin(task.n_block), 0, m_total, m_total, 0, 1};
        break;
      case BwdSchedule::kShift: {
        ItemGroup const g = item_group(task);
        w = QWalk{0, task.n_block - g.first, m_total, m_total, 0, 1};
        break;
      }
      case BwdSchedule::kSymmetricShift:
        if (task.member == 0) {
          ItemGroup const g = item_group(task);
          int const rho = rectangle_begin(g);
          int const s = task.n_block - g.first;
          w = QWalk{rho, s, m_total - rho, m_total - rho, sigma() * task.n_block, 1};
        }
        break;
      case BwdSchedule::kDescending:
      default:
        break;
    }
    return w;
  }

  // Q tile of the task's step (q_walk counts Q tiles; steps are Q tiles x group heads).
  DASH_HOST_DEVICE int q_tile_at(BwdTask const& task, int step) const { return q_walk(task).at(step / group()); }

  // Rank of this task's partial in Q tile m's accumulation order = the semaphore value it
  // waits for.
  //   ascending, descending, fa3_baseline: KV tiles 0 .. n_max(m)-1 add in ascending order (a causal
  //              mask only removes the *last* KV tiles of a Q tile), so rank = n.
  //   diagonal:  the reverse, n_max(m)-1 first: rank = n_max(m) - 1 - n.
  //   shift:     earlier rounds' tiles first; within the group, tile m is reached at step
  //              (m - s) mod M by local index s, so the adds go in the order of those
  //              steps: s = min(m, R-1), then descending, wrapping around.
  //   symmetric shift: earlier rounds' pairs first; then the group's long tiles (in the
  //              rectangle in cyclic-shift order, in the triangle from the diagonal up,
  //              i.e. larger s first), then its short tiles, s = R-1 first (it starts first).
  DASH_HOST_DEVICE TaskRanks task_ranks(BwdTask const& task) const {
    TaskRanks r;
    r.schedule = schedule;
    r.n_block = task.n_block;
    r.member = task.member;
    ItemGroup const g = (schedule == BwdSchedule::kShift || paired()) ? item_group(task) : ItemGroup{0, 1};
    r.first = g.first;
    r.size = g.size;
    int const p = paired() ? task.item % items_per_head() : task.n_block;
    r.local = p - g.first;
    r.sigma = sigma() > 0 ? sigma() : 1;
    r.rho = rectangle_begin(g);
    r.num_n_blocks = num_n_blocks;
    r.tiles = task.tiles;
    return r;
  }
  DASH_HOST_DEVICE int dq_rank(BwdTask const& task, int m_block) const { return task_ranks(task).at(m_block); }

  // Index of (sequence, query head, m_block) in the semaphore / trace arrays.
  DASH_HOST_DEVICE int dq_tile_index(BwdTask const& task, int head, int m_block) const {
    return int(geo.dq_tile(geo.seq(task.batch), head, m_block));
  }
};

// Shift: full mask, and every group's tiles fit on distinct Q tiles (M >= group size;
// groups are at most min(N, G) tiles).
DASH_HOST_DEVICE bool shift_applies(BwdScheduleView const& v) {
  int const max_group = v.num_n_blocks < v.grid ? v.num_n_blocks : v.grid;
  return v.mask.full() && v.num_m_blocks >= max_group;
}

// Symmetric shift: causal with seqlen_q == seqlen_k (KV tile j starts at Q tile sigma*j),
// whole Q tiles per KV tile, an even number of KV tiles to pair, and a rectangle at least
// as tall as a group (M - rho >= R) for the cyclic phase, checked for the largest group.
DASH_HOST_DEVICE bool symmetric_shift_applies(BwdScheduleView const& v) {
  if (!v.mask.causal() || v.seqlen_q != v.seqlen_k || v.block_n % v.block_m != 0) { return false; }
  if (v.num_n_blocks < 2 || v.num_n_blocks % 2 != 0) { return false; }
  int const pairs = v.num_n_blocks / 2;
  int const max_group = pairs < v.grid ? pairs : v.grid;
  int const max_rho = (v.block_n / v.block_m) * (pairs - 1);
  return v.num_m_blocks - max_rho >= max_group;
}

// The item numbering of a packed backward: the diagonal schedule needs a sequence's tasks
// consecutive, last KV tile first (its waits then target smaller items); so does the
// non-deterministic backward's L2 reuse. The deterministic ascending / descending orders
// (each dQ tile adds KV tile n after n - 1) need a sequence's KV tile n + 1 to start a little
// after its KV tile n, or their waits would line up: sequence-tile-major.
DASH_HOST_DEVICE VarlenOrder bwd_varlen_order(BwdSchedule schedule, bool deterministic) {
  return schedule == BwdSchedule::kDiagonal || !deterministic ? VarlenOrder::kSequenceMajor
                                                              : VarlenOrder::kSequenceTileMajor;
}

// Diagonal: any band (causal or a sliding window), packed or fixed length. What `auto` deals
// it to: causal packed batches and every sliding window (see plan_attn_bwd).
DASH_HOST_DEVICE bool diagonal_applies(BwdScheduleView const& v) { return !v.mask.full(); }

// Parts per query-head group (GQA / MQA), halving the group while it divides (measured,
// bench/RESULTS.md items 28, 63, 152 and 155):
//   deterministic, and every packed call: until the longest task (longest_q_tiles Q tiles x
//     its query heads) is at most walk_step_limit steps (deterministic: the head dims' own
//     limits, det_band_walk_steps and det_full_walk_steps). A function of the group, the mask
//     and the sequence length alone, so the bits (a part's dK / dV partial is added to the
//     others' in part order) do not depend on the grid, the batch or the heads in the
//     launch. Packed: no single task outlasts the dealing's tail (GQA 32/8 on documents up
//     to 3.9k tokens best with 2 parts, up to 1k tokens unsplit). Fixed length: bands
//     (diagonal) want short walks, full masks (ascending) long ones (Llama 32/8 causal at 2k
//     best with 2 parts, full at 4k-8k unsplit).
//   fixed length, not deterministic (kv_parts_fill_grid: the bits may follow the grid): when
//     the group walks (`items`: one per KV tile or pair) cannot fill the `resident` CTAs,
//     until there are 3 rounds of tasks: MQA 16/1 at 16k tokens runs fastest with 8 parts
//     (shorter walks: a round touches fewer query heads, which stay in L2; item 28).
//     Otherwise a step limit of the head dims' own, one for bands (nondet_band_walk_steps)
//     and one for full masks (nondet_full_walk_steps); 0: never (items 152, 155).
//   fixed-length bands, both modes: at least band_min_parts parts.
// The per-head-dim values, and why each was chosen, are the trait table's (traits.py); they
// reach the planner as the generated GroupSplitTraits (generated/kernel_traits.h).
constexpr int kMaxPackedWalkSteps = 128;
DASH_HOST_DEVICE int walk_step_limit(bool packed, bool deterministic, bool full_mask, GroupSplitTraits const& t) {
  if (packed) { return kMaxPackedWalkSteps; }
  if (!deterministic) { return full_mask ? t.nondet_full_walk_steps : t.nondet_band_walk_steps; }
  return full_mask ? t.det_full_walk_steps : t.det_band_walk_steps;
}
DASH_HOST_DEVICE bool kv_parts_fill_grid(bool packed, bool deterministic) { return !packed && !deterministic; }
DASH_HOST_DEVICE int kv_parts_minimum(bool packed, bool full_mask, GroupSplitTraits const& t) {
  return packed || full_mask ? 1 : t.band_min_parts;
}
DASH_HOST_DEVICE int kv_parts_for(int64_t items, int group, int resident, int longest_q_tiles, int max_walk_steps,
                                  bool fill_grid, int min_parts) {
  int parts = 1;
  if (fill_grid && items < resident) {
    while (group % (2 * parts) == 0 && (parts < min_parts || items * parts < 3 * int64_t(resident))) { parts *= 2; }
  } else {
    while (group % (2 * parts) == 0 &&
           (parts < min_parts || (max_walk_steps > 0 && int64_t(longest_q_tiles) * (group / parts) > max_walk_steps))) {
      parts *= 2;
    }
  }
  return parts;
}

// Fixed-length full-mask ascending deals chunks of whole walks, KV tile by KV tile: about
// one grid's worth of items (kDealChunkItems), and no more walks than keep their Q and dO
// (every query head of the walk, the whole sequence) in kDealChunkBytes, so the walks a
// chunk's CTAs stream stay in L2 while every KV tile of theirs is visited. The chunk only
// decides which CTA runs what when, never a dQ tile's order of adds (bench/RESULTS.md
// item 63 has the sweep).
// A split group's walks are `parts` times shorter, so the walks of one chunk, dealt KV tile by
// KV tile, start that much closer together, and each KV tile's walk waits on the previous
// one's adds (the dealing interval falls below the hand-off): split calls deal at least
// kDealChunkSplitWalks walks a chunk, within kDealChunkSplitBytes (bench/RESULTS.md items 155,
// 160-164: 4 ran best at 2 and at 4 parts).
constexpr int kDealChunkItems = 128;
constexpr int kOneChunk = 1 << 20;  // every walk in one chunk
constexpr int64_t kDealChunkBytes = int64_t(8) << 20;
constexpr int kDealChunkSplitWalks = 4;
constexpr int64_t kDealChunkSplitBytes = int64_t(32) << 20;
DASH_HOST_DEVICE int deal_chunk_for(int seqlen_q, int num_n_blocks, int head_dim, int head_dim_v, int walk_heads,
                                    int parts) {
  int64_t const bytes = int64_t(seqlen_q) * (head_dim + head_dim_v) * 2 * walk_heads;
  int64_t chunk = bytes > 0 ? kDealChunkBytes / bytes : 1;
  int64_t const by_items = num_n_blocks > 0 ? kDealChunkItems / num_n_blocks : 1;
  chunk = by_items < chunk ? by_items : chunk;
  if (parts > 1) {
    int64_t const by_split_bytes = bytes > 0 ? kDealChunkSplitBytes / bytes : 1;
    int64_t const floor = kDealChunkSplitWalks < by_split_bytes ? kDealChunkSplitWalks : by_split_bytes;
    chunk = floor > chunk ? floor : chunk;
  }
  return chunk < 1 ? 1 : chunk > kOneChunk ? kOneChunk : int(chunk);
}

// Fixed-length banded ascending deals the longest tasks first (KV tile by KV tile within a
// chunk). Non-deterministic calls deal sections of walks as FlashAttention-3's causal
// backward does: as many walks as keep their Q, dO and fp32 dQ accumulator (the whole
// sequence, every query head of the walk) within kBandSectionBytes, rounded down to a power
// of two, so the section's rows stay in L2 while its KV tiles run. Deterministic calls deal
// every walk in one chunk: there a dQ tile adds KV tile n after n - 1, and a walk's next KV
// tile, dealt only a section's width of items later, would reach its first Q tile before the
// previous one had added there (the start-up chains of bench/RESULTS.md item 102).
constexpr int64_t kBandSectionBytes = int64_t(40) << 20;
DASH_HOST_DEVICE int band_deal_chunk_for(int seqlen_q, int head_dim, int head_dim_v, int walk_heads,
                                         bool deterministic) {
  if (deterministic) { return kOneChunk; }
  int64_t const bytes = int64_t(seqlen_q) * ((head_dim + head_dim_v) * 2 + head_dim * 4) * walk_heads;
  int64_t const fit = bytes > 0 ? kBandSectionBytes / bytes : 1;
  int chunk = 1;
  while (chunk < kOneChunk && 2 * int64_t(chunk) <= fit) { chunk *= 2; }
  return chunk;
}

// The longest tail (BwdScheduleView::tail_items) a call deals longest first. A deterministic tail
// item waits on KV tile n + 1's adds, drawn after it, so reversing more of a head's walks
// chains more hand-offs: at most half the grid or 5/8 of a head's items, whichever is more,
// ran fastest of the lengths measured (bench/RESULTS.md item 321; the schedule model, with a
// hand-off of one step, finds the same optimum). Adds that never wait take the whole tail.
DASH_HOST_DEVICE int diagonal_tail_cap(bool deterministic, int items_per_head, int grid) {
  if (!deterministic) { return grid; }
  int const half_grid = grid / 2;
  int const head_share = 5 * items_per_head / 8;
  return half_grid > head_share ? half_grid : head_share;
}

inline BwdScheduleView make_schedule_view(AttnBwdParams const& p) {
  TileShape const tile = bwd_tile_of(p);
  BwdScheduleView view;
  view.num_m_blocks = p.num_m_blocks;
  view.num_n_blocks = p.num_n_blocks;
  view.heads = p.geo.heads;
  view.heads_kv = p.geo.heads_kv;
  view.parts = p.kv_parts > 0 ? p.kv_parts : 1;
  view.batch = p.geo.batch;
  view.seqlen_q = p.geo.seqlen_q;
  view.seqlen_k = p.geo.seqlen_k;
  view.block_m = tile.block_m;
  view.block_n = tile.block_n;
  view.mask = p.mask;
  view.schedule = p.planned_schedule;
  view.grid = p.grid;
  view.geo = p.geo;
  view.varlen = p.varlen_tiles;
  view.chunk = p.deal_chunk > 0 ? p.deal_chunk : 1;
  view.tail_cap = p.test_tail_cap >= 0 ? p.test_tail_cap
                                        : diagonal_tail_cap(p.deterministic, view.items_per_head(), view.grid);
  return view;
}

}  // namespace dash
