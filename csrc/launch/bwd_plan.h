// Host-side planning of one backward call: the persistent grid size and the schedule
// that will run (requests whose preconditions fail fall back to a safe schedule, with
// the reason recorded so callers can see what ran and why).
#pragma once

#include <string>

#include "../attn_bwd_params.h"

namespace dash {

struct BwdPlan {
  BwdSchedule schedule;  // resolved: never kAuto
  int grid;              // persistent CTAs
  int sm_count;          // SMs on the device
  int ctas_per_sm;       // occupancy of the kernel
  int kv_parts;          // tasks each query-head group is split over (1: one walk per group)
  int deal_chunk;        // fixed-length ascending: walks per dealing chunk (else 1)
  std::string reason;    // why this schedule
};

// ctas_per_sm: the kernel's occupancy on this device; sm_count: the device's SMs.
BwdPlan plan_attn_bwd(AttnBwdParams const& params, int ctas_per_sm, int sm_count);

// "schedule=<name>;grid=<ctas>;sm_count=<n>;kv_parts=<p>;deal_chunk=<c>;reason=<text>" (the plan ops' answer).
std::string describe_plan(BwdPlan const& plan);

char const* schedule_name(BwdSchedule schedule);
BwdSchedule parse_schedule(std::string const& name);  // throws std::invalid_argument

}  // namespace dash
