#include "bwd_plan.h"

#include <cstdlib>
#include <stdexcept>

#include "../kernels/bwd/schedule.h"

namespace dash {

char const* schedule_name(BwdSchedule schedule) {
  switch (schedule) {
    case BwdSchedule::kAuto: return "auto";
    case BwdSchedule::kAscending: return "ascending";
    case BwdSchedule::kShift: return "shift";
    case BwdSchedule::kDescending: return "descending";
    case BwdSchedule::kSymmetricShift: return "symmetric_shift";
    case BwdSchedule::kFa3Baseline: return "fa3_baseline";
    case BwdSchedule::kDiagonal: return "diagonal";
  }
  return "unknown";
}

std::string describe_plan(BwdPlan const& plan) {
  return std::string("schedule=") + schedule_name(plan.schedule) + ";grid=" + std::to_string(plan.grid) +
         ";sm_count=" + std::to_string(plan.sm_count) + ";kv_parts=" + std::to_string(plan.kv_parts) +
         ";deal_chunk=" + std::to_string(plan.deal_chunk) + ";reason=" + plan.reason;
}

BwdSchedule parse_schedule(std::string const& name) {
  if (name == "auto") { return BwdSchedule::kAuto; }
  if (name == "ascending") { return BwdSchedule::kAscending; }
  if (name == "shift") { return BwdSchedule::kShift; }
  if (name == "descending") { return BwdSchedule::kDescending; }
  if (name == "symmetric_shift") { return BwdSchedule::kSymmetricShift; }
  if (name == "fa3_baseline") { return BwdSchedule::kFa3Baseline; }
  if (name == "diagonal") { return BwdSchedule::kDiagonal; }
  throw std::invalid_argument("dash: unknown schedule '" + name +
                              "' (choose auto, ascending, descending, shift, symmetric_shift, diagonal or fa3_baseline)");
}

namespace {

int env_positive(char const* name, int fallback) {
  char const* text = std::getenv(name);
  if (text == nullptr) { return fallback; }
  int const value = std::atoi(text);
  if (value < 1) { throw std::invalid_argument(std::string("dash: ") + name + "=" + text + " must be a positive integer"); }
  return value;
}

// Splits each query-head group over kv_parts tasks (kv_parts_for: deterministic and packed
// calls by the walk's length alone, others by the grid or, for bands, a longer walk); DASH_KV_PARTS
// (a power of two dividing the group) overrides it, to measure the rule. Then the dealing
// chunk of a fixed-length ascending call (deal_chunk_for, band_deal_chunk_for;
// DASH_DEAL_CHUNK overrides it). Neither changes what a dQ tile adds in which order; kv_parts changes how
// dK / dV are summed, which is why the deterministic rule ignores the grid.
void plan_kv_parts(BwdPlan& plan, AttnBwdParams const& p, int64_t items, int64_t resident) {
  int const group = p.geo.heads / p.geo.heads_kv;
  TileShape const tile = bwd_tile_of(p);
  // The longest task's Q tiles: the longest sequence's, or fewer inside a two-sided window.
  int longest_q_tiles = ceil_div(p.geo.seqlen_q, tile.block_m);
  if (p.mask.left >= 0 && p.mask.right >= 0) {
    int const band = (tile.block_n - 1 + p.mask.left + p.mask.right) / tile.block_m + 2;
    longest_q_tiles = band < longest_q_tiles ? band : longest_q_tiles;
  }
  GroupSplitTraits const traits = group_split_traits(p.head_dim, p.head_dim_v);
  int const step_limit = walk_step_limit(p.geo.packed(), p.deterministic, p.mask.full(), traits);
  bool const fill_grid = kv_parts_fill_grid(p.geo.packed(), p.deterministic);
  int const min_parts = kv_parts_minimum(p.geo.packed(), p.mask.full(), traits);
  plan.kv_parts = kv_parts_for(items, group, int(resident), longest_q_tiles, step_limit, fill_grid, min_parts);
  if (char const* forced = std::getenv("DASH_KV_PARTS")) {
    int const parts = std::atoi(forced);
    if (parts < 1 || group % parts != 0 || (parts & (parts - 1)) != 0) {
      throw std::invalid_argument("dash: DASH_KV_PARTS=" + std::string(forced) +
                                  " must be a power of two dividing the query heads per K/V head (" +
                                  std::to_string(group) + ")");
    }
    plan.kv_parts = parts;
  }
  plan.deal_chunk = 1;
  if (!p.geo.packed() && plan.schedule == BwdSchedule::kAscending) {
    int const walk_heads = group / plan.kv_parts;
    plan.deal_chunk = env_positive(
        "DASH_DEAL_CHUNK",
        p.mask.full() ? deal_chunk_for(p.geo.seqlen_q, p.num_n_blocks, p.head_dim, p.head_dim_v, walk_heads,
                                       plan.kv_parts)
                      : band_deal_chunk_for(p.geo.seqlen_q, p.head_dim, p.head_dim_v, walk_heads, p.deterministic));
  }
  int64_t const tasks = items * plan.kv_parts;
  plan.grid = int(tasks < resident ? (tasks > 0 ? tasks : 1) : resident);
  if (plan.kv_parts > 1) {
    plan.reason += "; query-head groups split in " + std::to_string(plan.kv_parts) +
                   " (dK / dV added in part order) " +
                   (fill_grid && items < resident ? std::string("to fill the grid")
                                                  : "to keep walks within " + std::to_string(step_limit) + " steps") +
                   (min_parts > 1 ? ", at least " + std::to_string(min_parts) + " parts" : std::string());
  }
}

// Non-deterministic causal `auto`: whether ascending's L2 sections of walks (longest tasks first,
// band_deal_chunk_for) hold at least a grid's worth of items. With fewer, a whole section,
// its longest tasks included, is dealt in the launch's last wave, and the old choices ran
// faster (bench/RESULTS.md item 177: Llama 32 / 8 at 2k-4k, MQA 16 / 1). The split of the
// query-head groups it assumes is ascending's (plan_kv_parts, one item a task).
bool nondet_sections_fill_grid(AttnBwdParams const& p, int64_t tasks, int64_t resident) {
  BwdPlan trial{};
  trial.schedule = BwdSchedule::kAscending;
  plan_kv_parts(trial, p, tasks, resident);
  int64_t const walks = int64_t(p.geo.heads_kv) * trial.kv_parts * p.geo.batch;
  int64_t const section_walks = trial.deal_chunk < walks ? trial.deal_chunk : walks;
  return section_walks * p.num_n_blocks >= resident;
}

}  // namespace

BwdPlan plan_attn_bwd(AttnBwdParams const& p, int ctas_per_sm, int sm_count) {
  BwdPlan plan;
  plan.sm_count = sm_count;
  plan.ctas_per_sm = ctas_per_sm;
  int const usable_sms = sm_count - p.sm_margin;
  if (usable_sms < 1) {
    throw std::invalid_argument("dash: sm_margin=" + std::to_string(p.sm_margin) + " leaves none of the " +
                                std::to_string(sm_count) + " SMs");
  }
  if (ctas_per_sm < 1) { throw std::runtime_error("dash: the backward kernel does not fit on an SM"); }
  // Packed: an upper bound (the exact count is on the device): sum_b ceil(len_k_b / block_n)
  // <= total_k / block_n + batch. CTAs past the last item exit at once.
  int const block_n = bwd_tile_of(p).block_n;
  int64_t const tasks = p.geo.packed()
                            ? (int64_t(p.geo.total_k) / block_n + p.geo.batch) * p.geo.heads_kv
                            : int64_t(p.num_n_blocks) * p.geo.heads_kv * p.geo.batch;
  int64_t const resident = int64_t(ctas_per_sm) * usable_sms;
  plan.grid = int(tasks < resident ? tasks : resident);

  AttnBwdParams probe = p;
  probe.grid = plan.grid;
  probe.planned_schedule = BwdSchedule::kShift;
  bool const shift_ok = shift_applies(make_schedule_view(probe));
  probe.planned_schedule = BwdSchedule::kSymmetricShift;
  bool const symmetric_ok = symmetric_shift_applies(make_schedule_view(probe));
  bool const full = p.mask.full();
  bool const windowed = p.mask.windowed();
  std::string const why_not_shift =
      !full ? "shift needs a full mask"
               : "shift needs at least as many Q tiles (" + std::to_string(p.num_m_blocks) +
                     ") as KV tiles of a head in one round (" +
                     std::to_string(p.num_n_blocks < plan.grid ? p.num_n_blocks : plan.grid) + ")";
  std::string const why_not_symmetric =
      !p.mask.causal() ? "symmetric_shift needs a causal mask without a window"
      : p.geo.seqlen_q != p.geo.seqlen_k ? "symmetric_shift needs seqlen_q == seqlen_k"
      : p.num_n_blocks % 2 != 0 ? "symmetric_shift needs an even number of KV tiles (have " +
                                      std::to_string(p.num_n_blocks) + ")"
                                : "symmetric_shift needs a rectangle of Q tiles at least as tall as a round's pairs";
  auto fallback = [&](std::string const& why) {
    plan.schedule = windowed ? BwdSchedule::kDiagonal : !full ? BwdSchedule::kDescending : BwdSchedule::kAscending;
    plan.reason = why + "; ran " + schedule_name(plan.schedule);
  };
  if (p.geo.packed()) {  // the counter deals ascending, descending and diagonal (schedule.h)
    BwdSchedule const natural = !full ? BwdSchedule::kDiagonal : BwdSchedule::kAscending;
    bool const requested = p.schedule == BwdSchedule::kAscending || p.schedule == BwdSchedule::kDescending ||
                           (p.schedule == BwdSchedule::kDiagonal && !full);
    plan.schedule = requested ? p.schedule : natural;
    if (requested) {
      plan.reason = "requested (variable-length batch)";
    } else if (p.schedule == BwdSchedule::kAuto) {
      plan.reason = !full ? "auto: variable-length batch with a banded mask, diagonal adds each dQ tile's "
                            "partials in the order its sequence's tasks reach it"
                             : "auto: variable-length batch with a full mask: ascending, dealt KV tile by KV tile";
    } else {
      plan.reason = std::string(schedule_name(p.schedule)) + " requested but " +
                    (p.schedule == BwdSchedule::kDiagonal ? std::string("diagonal needs a causal mask or a window")
                                                          : std::string("it is not dealt per sequence")) +
                    "; ran " + schedule_name(plan.schedule);
    }
    plan_kv_parts(plan, p, tasks, resident);
    return plan;
  }
  switch (p.schedule) {
    case BwdSchedule::kAscending:
      plan.schedule = BwdSchedule::kAscending;
      plan.reason = "requested";
      break;
    case BwdSchedule::kFa3Baseline:
      plan.schedule = BwdSchedule::kFa3Baseline;
      plan.reason = !full ? "requested" : "requested (with a full mask it is the same order as ascending)";
      break;
    case BwdSchedule::kDescending:  // with a full mask it adds in ascending's order: the kernel runs ascending
      plan.schedule = full ? BwdSchedule::kAscending : BwdSchedule::kDescending;
      plan.reason = !full ? "requested" : "descending requested; with a full mask it is ascending's order; ran ascending";
      break;
    case BwdSchedule::kShift:
      if (shift_ok) {
        plan.schedule = BwdSchedule::kShift;
        plan.reason = "requested";
      } else {
        fallback("shift requested but " + why_not_shift);
      }
      break;
    case BwdSchedule::kDiagonal:
      if (!full) {
        plan.schedule = BwdSchedule::kDiagonal;
        plan.reason = "requested";
      } else {
        fallback("diagonal requested but it needs a causal mask or a window");
      }
      break;
    case BwdSchedule::kSymmetricShift:
      if (symmetric_ok) {
        plan.schedule = BwdSchedule::kSymmetricShift;
        plan.reason = "requested";
      } else {
        fallback("symmetric_shift requested but " + why_not_symmetric);
      }
      break;
    case BwdSchedule::kAuto:
    default:
      if (p.deterministic) {  // the same bits on any grid (schedule.h, "Grid invariance")
        plan.schedule = full ? BwdSchedule::kAscending : BwdSchedule::kDiagonal;
        plan.reason = full ? "auto, deterministic: ascending, the same bits on any grid (walks dealt in chunks "
                             "from a counter; shift is the faster grid-dependent opt-in)"
                  : windowed ? "auto, deterministic: sliding window, diagonal adds each dQ tile's partials in the "
                               "order its tasks reach it, the same bits on any grid"
                             : "auto, deterministic: diagonal, the same bits on any grid (dealt from a counter"
                               "; symmetric_shift is the faster grid-dependent opt-in where it applies)";
      } else if (full && shift_ok) {
        plan.schedule = BwdSchedule::kShift;
        plan.reason = "auto: full mask, shift removes the semaphore stalls";
      } else if (windowed) {
        plan.schedule = BwdSchedule::kDiagonal;
        plan.reason = "auto: sliding window, diagonal adds each dQ tile's partials in the order its tasks reach it";
      } else if (!full && nondet_sections_fill_grid(p, tasks, resident)) {
        // Causal, adds unordered: the longest tasks first from a counter, in L2-sized sections
        // of walks (FlashAttention-3's order), which ends the launch on its shortest tasks; it
        // ran faster than symmetric shift (static rounds) and diagonal (shortest first within a
        // head) wherever a section holds a grid's worth of items (bench/RESULTS.md item 177).
        plan.schedule = BwdSchedule::kAscending;
        plan.reason = "auto: causal, ascending dealt longest first from a counter in L2-sized sections of walks";
      } else if (symmetric_ok) {
        plan.schedule = BwdSchedule::kSymmetricShift;
        plan.reason = "auto: causal with seqlen_q == seqlen_k, symmetric shift balances and removes stalls "
                      "(L2 sections of walks hold fewer items than the grid)";
      } else if (!full) {
        // Where symmetric shift does not apply (e.g. 64 x 96 tiles at head dim 192, an odd number
        // of KV tiles, seqlen_q != seqlen_k), diagonal dealt from a counter balances the band;
        // descending in static rounds ran much slower at short lengths (bench/RESULTS.md item 143).
        plan.schedule = BwdSchedule::kDiagonal;
        plan.reason = "auto: causal, " + why_not_symmetric + "; diagonal dealt from a counter balances the band";
      } else {  // a full mask where shift does not apply
        fallback("auto: " + why_not_shift);
      }
      break;
  }
  // Symmetric shift deals pairs: never more CTAs than pairs.
  plan_kv_parts(plan, p, plan.schedule == BwdSchedule::kSymmetricShift ? tasks / 2 : tasks, resident);
  return plan;
}

}  // namespace dash
