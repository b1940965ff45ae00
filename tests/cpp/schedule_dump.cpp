// Prints the schedule of csrc/kernels/schedule.h for the cases given on stdin, one per
// line: "num_m num_n heads batch seqlen_q seqlen_k block_m block_n causal schedule grid".
// For each case: for every CTA and round its task, then for every step the Q tile and
// the rank. tests/test_schedule_model.py compares this with dash/schedule.py.
#include <cstdio>

#include "kernels/schedule.h"

int main() {
  dash::BwdScheduleView v;
  int causal = 0, schedule = 0;
  while (std::scanf("%d %d %d %d %d %d %d %d %d %d %d", &v.num_m_blocks, &v.num_n_blocks, &v.heads, &v.batch,
                    &v.seqlen_q, &v.seqlen_k, &v.block_m, &v.block_n, &causal, &schedule, &v.grid) == 11) {
    v.causal = causal != 0;
    v.schedule = static_cast<dash::BwdSchedule>(schedule);
    std::printf("case applies=%d\n", int(dash::shift_applies(v)));
    for (int cta = 0; cta < v.grid; ++cta) {
      for (int round = 0; round < v.num_rounds(); ++round) {
        int const t = v.task_id(cta, round);
        if (t < 0) { continue; }
        dash::BwdTask const task = v.task(t);
        std::printf("cta %d round %d task %d n %d h %d b %d steps", cta, round, t, task.n_block, task.head,
                    task.batch);
        for (int step = 0; step < v.num_steps(task); ++step) {
          int const m = v.q_tile_at(task, step);
          std::printf(" %d:%d", m, v.dq_rank(task, m));
        }
        std::printf("\n");
      }
    }
  }
  return 0;
}
