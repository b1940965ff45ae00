#include "bwd_plan.h"

#include <stdexcept>

#include "../kernels/schedule.h"

namespace dash {

char const* schedule_name(BwdSchedule schedule) {
  switch (schedule) {
    case BwdSchedule::kAuto: return "auto";
    case BwdSchedule::kAscending: return "ascending";
    case BwdSchedule::kShift: return "shift";
  }
  return "unknown";
}

BwdSchedule parse_schedule(std::string const& name) {
  if (name == "auto") { return BwdSchedule::kAuto; }
  if (name == "ascending") { return BwdSchedule::kAscending; }
  if (name == "shift") { return BwdSchedule::kShift; }
  throw std::invalid_argument("dash: unknown schedule '" + name + "' (choose auto, ascending or shift)");
}

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
  int64_t const tasks = int64_t(p.num_n_blocks) * p.heads * p.batch;
  int64_t const resident = int64_t(ctas_per_sm) * usable_sms;
  plan.grid = int(tasks < resident ? tasks : resident);

  AttnBwdParams probe = p;
  probe.grid = plan.grid;
  probe.planned_schedule = BwdSchedule::kShift;
  bool const shift_ok = shift_applies(make_schedule_view(probe));
  std::string const why_not_shift =
      p.causal ? "shift needs a full mask"
               : "shift needs at least as many Q tiles (" + std::to_string(p.num_m_blocks) +
                     ") as KV tiles of a head in one round (" +
                     std::to_string(p.num_n_blocks < plan.grid ? p.num_n_blocks : plan.grid) + ")";
  switch (p.schedule) {
    case BwdSchedule::kAscending:
      plan.schedule = BwdSchedule::kAscending;
      plan.reason = "requested";
      break;
    case BwdSchedule::kShift:
      plan.schedule = shift_ok ? BwdSchedule::kShift : BwdSchedule::kAscending;
      plan.reason = shift_ok ? "requested" : "shift requested but " + why_not_shift + "; ran ascending";
      break;
    case BwdSchedule::kAuto:
    default:
      plan.schedule = shift_ok ? BwdSchedule::kShift : BwdSchedule::kAscending;
      plan.reason = shift_ok ? "auto: full mask with enough Q tiles, shift removes the semaphore stalls"
                             : "auto: " + why_not_shift + ", ascending";
      break;
  }
  return plan;
}

}  // namespace dash
