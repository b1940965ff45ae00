// Plain description of one attention-backward call: pointers, strides, sizes, flags.
// No torch and no CUTLASS here, so the kernels and the binding can both include it.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "generated/kernel_traits.h"
#include "kernels/common/mask.h"
#include "kernels/common/seq_geometry.h"
#include "kernels/common/varlen_tiles.h"

namespace dash {

// Which order each KV tile visits its Q tiles, and the fixed order in which every dQ
// tile accepts its partial sums. The index math lives in kernels/bwd/schedule.h and is
// mirrored by dash/schedule.py.
enum class BwdSchedule : int {
  kAuto = -1,      // let the planner choose (see plan_attn_bwd)
  kAscending = 0,  // FlashAttention-3 baseline: visit Q tiles ascending, dQ_i adds in ascending KV tile
  kShift = 1,      // full mask: KV tile s of a round's group starts at Q tile s and wraps around
  kDescending = 2, // causal: visit Q tiles from the last down; dQ_i adds in ascending KV tile
  kSymmetricShift = 3,  // causal, seqlen_q == seqlen_k: pair KV tiles p and N-1-p on one CTA
  kFa3Baseline = 4,     // the DASH paper's baseline (FlashAttention-3 before SPT): as kAscending,
                        // but KV tiles dealt head by head in index order, not longest first
  kDiagonal = 5,        // causal, packed batches: visit Q tiles upward from the diagonal; dQ_i adds
                        // from its diagonal KV tile back to KV tile 0 (the order they arrive in)
};

struct AttnBwdParams {
  // Inputs, laid out (batch, seqlen, heads, head_dim) with the last dim contiguous (k, v:
  // heads_kv heads). Strides are in elements.
  const void* q;
  const void* k;
  const void* v;
  const void* out;
  const void* dout;
  const float* lse;  // (batch, heads, seqlen_q), natural log, contiguous (geo.lse_offset)
  int64_t q_batch_stride, q_row_stride, q_head_stride;
  int64_t k_batch_stride, k_row_stride, k_head_stride;
  int64_t v_batch_stride, v_row_stride, v_head_stride;
  int64_t out_batch_stride, out_row_stride, out_head_stride;
  int64_t dout_batch_stride, dout_row_stride, dout_head_stride;

  // Outputs, same layout convention (dk, dv: heads_kv heads, like k and v).
  void* dq;
  void* dk;
  void* dv;
  int64_t dq_batch_stride, dq_row_stride, dq_head_stride;
  int64_t dk_batch_stride, dk_row_stride, dk_head_stride;
  int64_t dv_batch_stride, dv_row_stride, dv_head_stride;

  // Workspaces, allocated by the caller, in the geometry's workspace rows (geo.stats_offset;
  // fixed length: (batch, heads, geo.stats_rows)).
  float* dq_accum;      // (rows, head_dim) fp32, each kBlockM x d tile in fragment order
  float* lse_log2;      // (rows): lse * log2(e), +inf on padding rows
  float* dpsum;         // (rows): rowsum(dO * O), 0 on padding rows
  int* dq_semaphore;    // (geo.num_dq_tiles()): zeroed by the caller before every call
  // Split query-head groups (kv_parts > 1): each part's fp32 dK / dV partial, in fragment
  // order, (heads_kv * geo.kv_tiles_per_head(block_n) * kv_parts) tiles of
  // 2 * block_n * head_dim floats, summed in part order after the main kernel. nullptr when
  // kv_parts == 1.
  float* dkv_accum;
  // Optional accumulation trace (nullptr = off): for every dQ tile, the KV tiles in the
  // order their partials were added. trace: (geo.num_dq_tiles(), num_n_blocks),
  // trace_count: (geo.num_dq_tiles()), both zeroed by the caller.
  int* dq_trace;
  int* dq_trace_count;
  // Watchdog: a semaphore wait that lasts longer than this traps the kernel (an error
  // instead of a hang). 0 disables it.
  uint64_t watchdog_ns;
  // Testing: where it follows the published tasks, the dO producer warp pauses this long before
  // each kv_full wait (0: off), which widens the window that do_records_read closes
  // (bwd/producer.h; DASH_TEST_DO_LAG_NS, tests/test_deadlock.py).
  uint64_t test_do_lag_ns;

  SeqGeometry geo;  // sequences, heads, lengths, workspace rows (stats_block = kBlockM)
  // Packed batches: the dense table of (KV tile, K/V head, sequence) items, filled on the
  // device by the prepare kernel before the main kernel (table == nullptr: fixed length).
  VarlenTiles varlen_tiles;
  // Counter-dealt schedules (packed batches, fixed-length diagonal and full-mask ascending):
  // CTAs draw every item from task_counter[0]; task_counter[1] counts the CTAs that have
  // started and task_counter[2] records how diagonal's tail is dealt (0: not yet decided,
  // 1: in item order, 2: longest first; see bwd/producer.h). Three int32, zeroed by the
  // caller before every call. nullptr otherwise.
  int* task_counter;
  int head_dim;    // of q and k (and dq, dk)
  int head_dim_v;  // of v, out and dout (and dv)
  int num_m_blocks, num_n_blocks;  // Q and KV tiles of the longest sequence
  float softmax_scale;
  float softcap;  // > 0: scores capped to softcap * tanh(score / softcap) (kernels/common/score_scale.h)
  MaskWindow mask;  // the band (kernels/common/mask.h); full: (-1, -1), causal: (-1, 0)
  bool deterministic;
  // Kernels whose pair deals diagonal's tail longest first ("bwd_tail") do so where they may
  // (schedule.h tail_items, bwd/producer.h). test_tail_cap < 0: the tail is as long as
  // schedule.h's diagonal_tail_cap allows; >= 0: at most that many items (DASH_TEST_TAIL_ITEMS;
  // DASH_TEST_ITEM_ORDER_TAIL=1 gives 0: every item in item order; A/B runs and tests).
  int test_tail_cap;
  BwdSchedule schedule;  // as requested; plan_attn_bwd() resolves kAuto and unmet preconditions

  // Persistent grid: CTAs = min(tasks, max_ctas_per_sm * (sm_count - sm_margin)).
  int sm_margin;
  int device;

  // Filled in by plan_attn_bwd(): the grid that runs, the schedule it follows, the CTAs
  // each query-head group is split over (1: one task walks the whole group) and, for a
  // fixed-length full-mask ascending call, the walks per dealing chunk (schedule.h).
  int grid;
  BwdSchedule planned_schedule;
  int kv_parts;
  int deal_chunk;
};

// The tile of the kernel that runs the call (softcap kernels may have their own: the trait
// table's "bwd_softcap" block); every host-side use of block_m / block_n asks this.
inline TileShape bwd_tile_of(AttnBwdParams const& p) {
  return bwd_tile_shape(p.head_dim, p.head_dim_v, p.softcap > 0);
}

// Runs preprocess, the main backward kernel and postprocess on `stream`.
// Throws std::runtime_error (with the CUDA error string) on any launch failure, and
// std::invalid_argument for a (head_dim, dtype) combination that was not compiled in.
void run_attn_bwd(AttnBwdParams& params, DType dtype, void* stream);

}  // namespace dash
