// Prints the schedule of csrc/kernels/schedule.h for the cases given on stdin, one per
// line: "num_m num_n heads batch seqlen_q seqlen_k block_m block_n causal schedule grid".
// For each case: for every CTA its tasks in order, each with its (Q tile : rank) steps.
// tests/test_schedule_model.py compares this with dash/schedule.py.
#include <cstdio>

#include "kernels/schedule.h"

int main() {
  dash::BwdScheduleView v;
  int causal = 0, schedule = 0;
  while (std::scanf("%d %d %d %d %d %d %d %d %d %d %d", &v.num_m_blocks, &v.num_n_blocks, &v.heads, &v.batch,
                    &v.seqlen_q, &v.seqlen_k, &v.block_m, &v.block_n, &causal, &schedule, &v.grid) == 11) {
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
                    task.n_block, task.head, task.batch);
        dash::QWalk const walk = v.q_walk(task);
        dash::TaskRanks const ranks = v.task_ranks(task);
        for (int step = 0; step < v.num_steps(task); ++step) {
          int const m = walk.at(step);
          std::printf(" %d:%d", m, ranks.at(m));
        }
        std::printf("\n");
        }
      }
    }
  }
  return 0;
}
