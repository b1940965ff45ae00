// Producer warp of the backward kernel, and the only place the schedule is evaluated:
// for each task of this CTA it loads K and V (TMA, once per task) and, per Q tile in the
// schedule's order, (Q, LSE) and (dO, D) into the two mbarrier pipelines, publishing the
// task, the Q tile index and the dQ rank to the other warps with the data.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#include "dq_writer.h"
#include "kernel_params.h"
#include "../common/sm90_primitives.h"

namespace dash {

using namespace cute;

template <class Cfg>
struct BwdProducer {
  using SharedStorage = typename Cfg::SharedStorage;
  static constexpr int kBlockM = Cfg::kBlockM;
  static constexpr int kBlockN = Cfg::kBlockN;
  static constexpr int kHeadDim = Cfg::kHeadDim;
  static constexpr int kHeadDimV = Cfg::kHeadDimV;

  // Two producer warps walk the schedule side by side: kQStream loads K, V, Q and LSE and
  // publishes the task and the per-step records (Q tile, dQ rank); kDoStream loads dO and D.
  enum Stream { kQStream, kDoStream };

  // The schedule is a run-time choice, but each one gets its own copy of the loop: with the
  // schedule a constant, the index math folds down to what that schedule needs.
  template <Stream kStream>
  CUTE_DEVICE static void run(BwdKernelParams<Cfg> const& p, SharedStorage& ss) {
    if constexpr (Cfg::kBanded) {
      switch (p.sched.schedule) {
        case BwdSchedule::kSymmetricShift: return run_schedule<kStream, BwdSchedule::kSymmetricShift>(p, ss);
        case BwdSchedule::kDiagonal: return run_schedule<kStream, BwdSchedule::kDiagonal>(p, ss);
        case BwdSchedule::kDescending: return run_schedule<kStream, BwdSchedule::kDescending>(p, ss);
        case BwdSchedule::kFa3Baseline: return run_schedule<kStream, BwdSchedule::kFa3Baseline>(p, ss);
        default: return run_schedule<kStream, BwdSchedule::kAscending>(p, ss);
      }
    } else {
      switch (p.sched.schedule) {
        case BwdSchedule::kShift: return run_schedule<kStream, BwdSchedule::kShift>(p, ss);
        // Ascending's order, FlashAttention-3's dealing (head by head, static rounds).
        case BwdSchedule::kFa3Baseline: return run_schedule<kStream, BwdSchedule::kFa3Baseline>(p, ss);
        default: return run_schedule<kStream, BwdSchedule::kAscending>(p, ss);
      }
    }
  }

  template <Stream kStream, BwdSchedule kSchedule>
  CUTE_DEVICE static void run_schedule(BwdKernelParams<Cfg> const& p, SharedStorage& ss) {
    constexpr bool kQ = kStream == kQStream;
    constexpr int kStepCols = kQ ? kHeadDim : kHeadDimV;  // of this stream's tile (Q or dO)
    using Pipeline = cute::conditional_t<kQ, typename Cfg::PipelineQ, typename Cfg::PipelineDo>;
    BwdScheduleView sched = p.sched;
    sched.schedule = kSchedule;
    sched.mask = Cfg::Mask::window(sched.mask);
    // The host plans with the config's tile (bwd_tile_of); as constants here, the schedule's
    // and the mask's divisions by the tile sizes fold, and fewer values stay live in the
    // producer warps' few registers.
    sched.block_m = kBlockM;
    sched.block_n = kBlockN;
    sched.geo.stats_block = kBlockM;
    Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Cfg::SmemLayoutQ{});
    Tensor sdO = make_tensor(make_smem_ptr(ss.dout.data()), typename Cfg::SmemLayoutdO{});
    Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), typename Cfg::SmemLayoutK{});
    Tensor sV = make_tensor(make_smem_ptr(ss.v.data()), typename Cfg::SmemLayoutV{});
    auto const& tma_x = [&]() -> auto const& {  // the per-step tensor of this stream
      if constexpr (kQ) { return p.tma_q; } else { return p.tma_do; }
    }();
    Tensor mX = tma_x.get_tma_tensor(kQ ? p.shape_q() : p.shape_do());
    Tensor mK = p.tma_k.get_tma_tensor(p.shape_k());
    Tensor mV = p.tma_v.get_tma_tensor(p.shape_v());
    auto cta_tma_x = tma_x.get_slice(_0{});
    auto cta_tma_k = p.tma_k.get_slice(_0{});
    auto cta_tma_v = p.tma_v.get_slice(_0{});
    Tensor tXsX = [&]() {  // (TMA, TMA_M, TMA_D, stage)
      if constexpr (kQ) { return cta_tma_x.partition_D(sQ); } else { return cta_tma_x.partition_D(sdO); }
    }();
    Tensor tKsK = cta_tma_k.partition_D(sK);              // (TMA, TMA_N, TMA_D)
    Tensor tVsV = cta_tma_v.partition_D(sV);
    typename Pipeline::SharedStorage& pipe = [&]() -> auto& {
      if constexpr (kQ) { return ss.pipeline_q; } else { return ss.pipeline_do; }
    }();
    float* smem_stats = kQ ? ss.lse_log2.data() : ss.dpsum.data();

    typename Pipeline::State write_state = Pipeline::producer_start();
    bool const leader = cute::elect_one_sync();
    int ordinal = 0;     // tasks published so far: the parity of kv_full / kv_empty / task_ready
    int step_count = 0;  // steps published so far: the dQ writer's ring position
    // K and V (and the task record) wait until the previous task's MMA warpgroups let go of
    // them. Where the dO stream follows the published tasks (do_stream_follows), a record of a
    // task without steps also waits until the dO stream has read it: such a task frees K / V
    // without any dO load, so kv_empty says nothing about the dO stream (a task with steps
    // cannot free them before the dO stream has read its record and loaded its dO).
    auto wait_kv_free = [&](auto do_stream_follows) {
      if (ordinal > 0) {
        cutlass::arch::ClusterBarrier::wait(&ss.kv_empty, (ordinal - 1) & 1);
        if constexpr (decltype(do_stream_follows)::value) {
          if (ss.task_info.num_steps == 0) {
            while (load_acquire_cta(&ss.do_records_read) < ordinal) {}
          }
        }
      }
    };
    SeqGeometry const& geo = p.args.geo;
    float const* stats_base = kQ ? p.args.lse_log2 : p.args.dpsum;
    // One task: K and V (Q stream, after the first Q tile), then per step (Q tile x query
    // head of the group) this stream's tile and row statistics.
    auto run_task = [&](BwdTask const& task, auto do_stream_follows) {
      int const group = sched.group();
      int const num_q_tiles = sched.num_q_tiles(task);
      int const num_steps = num_q_tiles * group;
      // Issued after the task's first Q tile so the load overlaps the previous task's tail.
      auto load_kv = [&]() {
        SeqInfo const seq = geo.seq(task.batch);
        wait_kv_free(do_stream_follows);
        ss.task_info = BwdTaskInfo{seq, task.n_block, task.kv_head, task.part, num_steps};
        // The dO stream may start on the task now: its first dO load then overlaps K and V's
        // instead of waiting for them to land (kv_full).
        if constexpr (decltype(do_stream_follows)::value) { cutlass::arch::ClusterBarrier::arrive(&ss.task_ready); }
        cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&ss.kv_full, Cfg::kTmaBytesKV);
        // The sequence's rows start at row_k (packed); TMA zero-fills past the tensor's end.
        Tensor gK = local_tile(domain_offset(make_coord(seq.row_k, _0{}), mK(_, _, task.kv_head, seq.tensor_batch)),
                               Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(task.n_block, _0{}));  // (N, D)
        Tensor gV = local_tile(domain_offset(make_coord(seq.row_k, _0{}), mV(_, _, task.kv_head, seq.tensor_batch)),
                               Shape<Int<kBlockN>, Int<kHeadDimV>>{}, make_coord(task.n_block, _0{}));
        copy(p.tma_k.with(ss.kv_full), cta_tma_k.partition_S(gK), tKsK);
        copy(p.tma_v.with(ss.kv_full), cta_tma_v.partition_S(gV), tVsV);
      };
      if (leader) {
        if (kQ && num_steps == 0) { load_kv(); }
        int tensor_batch, row_q, first_head_stats;
        {
          SeqInfo const seq = geo.seq(task.batch);
          tensor_batch = seq.tensor_batch;
          row_q = seq.row_q;
          first_head_stats = int(geo.stats_offset(seq, sched.q_head(task, 0)));
        }
        QWalk const walk = sched.q_walk(task);
        TaskRanks const ranks = sched.task_ranks(task);
        // One step: this stream's tile of Q tile m_block for query head `sub` of the group
        // (whose workspace rows start at `stats`), published with the Q tile's dQ rank.
        auto issue_step = [&](int m_block, int rank, bool partial, int sub, int stats) {
          int const stage = write_state.index;
          Pipeline::producer_wait_empty(pipe, write_state);
          if constexpr (kQ) {  // published by the arrive below
            ss.q_tile[stage] = BwdStepTile{m_block, partial};
            ss.dq_buffer[stage] = BwdDqWriter<Cfg>::buffer_of(p.args, step_count);
            // = geo.dq_tile(seq, head, m_block): the workspace block is kBlockM.
            ss.dq_meta[step_count++ % Cfg::kDqMetaRing] = BwdDqMeta{stats / kBlockM + m_block, rank, task.n_block};
          }
          Tensor gX = local_tile(domain_offset(make_coord(row_q, _0{}), mX(_, _, sched.q_head(task, sub), tensor_batch)),
                                 Shape<Int<kBlockM>, Int<kStepCols>>{}, make_coord(m_block, _0{}));  // (M, D)
          uint64_t* bar = Pipeline::producer_arm_full(pipe, write_state,
                                                      (kQ ? Cfg::kTmaBytesQ : Cfg::kTmaBytesdO) + Cfg::kBytesRowStats);
          copy(tma_x.with(*bar, 0, TMA::CacheHintSm90::EVICT_LAST), cta_tma_x.partition_S(gX),
               tXsX(_, _, _, stage));
          bulk_copy_g2s(smem_stats + stage * kBlockM, stats_base + stats + m_block * kBlockM,
                        Cfg::kBytesRowStats, bar);
          write_state.advance();
        };
        // Steps walk the Q tiles in the schedule's order and, within each, the query heads of
        // the group (consecutive heads' workspace rows are geo.stats_rows apart), all with that
        // Q tile's rank. K and V are issued after the first step, so their load overlaps the
        // previous task's tail; that step is peeled off the loops so that what the K / V load
        // needs is not live across them. Neither loop is unrolled: two steps' values at once
        // do not fit the producer's 24-40 registers (unrolled by two, the step loops spilled:
        // bench/RESULTS.md item 153); a step waits for a free stage anyway.
        if (num_steps > 0) {
          int m_block = walk.at(0);
          int rank = ranks.at(m_block);
          bool partial = task.tiles.partial(m_block, task.n_block);
          issue_step(m_block, rank, partial, 0, first_head_stats);
          if constexpr (kQ) { load_kv(); }
          int first_sub = 1;
#pragma unroll 1
          for (int q_index = 0; q_index < num_q_tiles; ++q_index) {
            if (q_index > 0) {
              m_block = walk.next(m_block, q_index - 1);
              rank = ranks.at(m_block);
              partial = task.tiles.partial(m_block, task.n_block);
            }
#pragma unroll 1
            for (int sub = first_sub, stats = first_head_stats + first_sub * geo.stats_rows; sub < group;
                 ++sub, stats += geo.stats_rows) {
              issue_step(m_block, rank, partial, sub, stats);
            }
            first_sub = 0;
          }
        }
      }
      __syncwarp();
    };

    bool dealt_dynamically = false;
    if constexpr (kSchedule == BwdSchedule::kAscending || kSchedule == BwdSchedule::kDescending ||
                  kSchedule == BwdSchedule::kDiagonal) {
      if (sched.counter_dealt()) {
        // Packed batches (tasks of very unequal length) and the fixed-length grid-invariant
        // orders (schedule.h): CTAs draw their next item from a counter (greedy, in item order). Every wait targets a smaller item (schedule.h),
        // and items are drawn in increasing order by CTAs that run them next, so the
        // smallest unfinished item only waits on finished ones: no deadlock. A CTA draws
        // once it has issued the current task's loads, a few steps before its MMA warps
        // finish it (the next K / V cannot load earlier anyway): items then start in about
        // the order they are drawn, which the diagonal order's waits (each on the item
        // before) need. Drawn when the task starts, an item would wait behind the whole
        // current task while its successors started elsewhere. The Q stream draws and
        // publishes each task record (task_ready, then K and V with kv_full); the dO stream
        // follows it from there. The Q stream writes the next record only after kv_empty,
        // which a task with steps reaches only after all its dO loads, so after the dO
        // stream has read its record and passed that phase of task_ready. After a task
        // without steps the Q stream publishes the next record only once the dO stream has
        // read that one (do_records_read): kv_empty alone does not hold it back there, and a
        // dO stream still on its way (a cold instruction cache at its first task) could find
        // the record replaced, or task_ready two phases on, where its parity wait passes one
        // phase too late and never returns (seen as rare stalls of small packed and windowed
        // deterministic calls).
        // Every item, the first included, is drawn: a CTA holds an item only once it runs, so
        // the smallest unfinished item is always running, however many of the launch's CTAs
        // are resident (another kernel or an MPS share may hold SMs): no cooperative launch
        // is needed (launch/bwd_launch.h).
        // Diagonal's tail (schedule.h tail_items) is dealt longest first (pairs whose "bwd_tail"
        // asks it: trait table) only where that keeps this true: task_counter[1] counts the
        // CTAs that have started, and the CTA that draws the tail's first value deals it so
        // only if all of the launch's have (none exits before the counter runs out, so all are
        // then resident), and records the choice in task_counter[2] for the tail's other draws
        // (which wait the few cycles until it is there). The item-order branch below is the
        // loop as it was, so the other pairs compile to the same code. A CTA running a tail item so dealt draws its next one only once
        // its dQ writers have added and released every step of it (the semaphores of each
        // writer's last step show it: a writer takes its steps in order), so it never holds a
        // drawn item that it cannot start while its task waits.
        dealt_dynamically = true;
        if constexpr (kQ && !Cfg::kTailLongestFirst) {
          int const num_items = sched.num_items();
          auto draw = [&]() {
            int drawn = 0;
            if (threadIdx.x % 32 == 0) { drawn = atomicAdd(p.args.task_counter, 1); }
            return __shfl_sync(0xffffffff, drawn, 0);
          };
          for (int item = draw(); item < num_items; item = draw()) {
            run_task(sched.task(item, 0), cute::true_type{});
            ++ordinal;
          }
        } else if constexpr (kQ) {  // "bwd_tail": "longest_first"
          int const num_items = sched.num_items();
          int const tail_first = num_items - sched.tail_items();
          int* const counter = p.args.task_counter;
          bool const lane0 = threadIdx.x % 32 == 0;
          bool wait_for_adds = false;  // the running task is a tail item dealt out of order
          if (lane0 && tail_first < num_items) { atomicAdd(counter + 1, 1); }
          auto draw = [&]() {
            int item = 0;
            if (lane0) {
              if (wait_for_adds) {  // each writer's last step of the running task: its add released
                int const writers = BwdDqWriter<Cfg>::num_writers(p.args);
                for (int w = 0; w < writers && w < step_count; ++w) {
                  BwdDqMeta const meta =
                      ss.dq_meta[BwdDqWriter<Cfg>::last_step_of(w, writers, step_count) % Cfg::kDqMetaRing];
                  while (load_acquire_gpu(p.args.dq_semaphore + meta.dq_tile) <= meta.rank) {}
                }
              }
              int const drawn = atomicAdd(counter, 1);
              item = drawn;
              if (drawn >= tail_first && drawn < num_items) {
                int dealing;
                if (drawn == tail_first) {
                  dealing = load_acquire_gpu(counter + 1) >= sched.grid ? 2 : 1;
                  store_release_gpu(counter + 2, dealing);
                } else {
                  while ((dealing = load_acquire_gpu(counter + 2)) == 0) {}
                }
                if (dealing == 2) {
                  item = sched.tail_item(drawn);
                  wait_for_adds = p.args.deterministic;
                }
              }
            }
            return __shfl_sync(0xffffffff, item, 0);
          };
          for (int item = draw(); item < num_items; item = draw()) {
            run_task(sched.task(item, 0), cute::true_type{});
            ++ordinal;
          }
        } else {
          for (;; ++ordinal) {
            if (p.args.test_do_lag_ns != 0) {
              uint64_t const start = global_timer_ns();
              while (global_timer_ns() - start < p.args.test_do_lag_ns) { __nanosleep(1000); }
            }
            cutlass::arch::ClusterBarrier::wait(&ss.task_ready, ordinal & 1);
            BwdTaskInfo const info = ss.task_info;
            __syncwarp();
            if (info.num_steps < 0) { break; }
            if (info.num_steps == 0 && leader) { store_release_cta(&ss.do_records_read, ordinal + 1); }
            run_task(BwdTask{-1, 0, info.n_block, info.kv_head, info.part, info.seq.batch,
                             seq_tiles(info.seq, kBlockM, kBlockN, sched.mask)},
                     cute::true_type{});
          }
        }
      }
    }
    if (!dealt_dynamically) {
      int const num_rounds = sched.num_rounds();
      for (int round = 0; round < num_rounds; ++round) {
        int const item = sched.item_id(blockIdx.x, round);
        if (item < 0) { continue; }
        for (int member = 0; member < sched.members(); ++member, ++ordinal) {
          run_task(sched.task(item, member), cute::false_type{});
        }
      }
    }
    // No more tasks: an empty task tells the MMA warpgroups to finish, and an empty record
    // for each of the next steps a writer may wait for (it reaches it through them) tells
    // the dQ writers.
    if (kQ && leader) {
      if (dealt_dynamically) {
        wait_kv_free(cute::true_type{});
      } else {
        wait_kv_free(cute::false_type{});
      }
      for (int w = 0; w < Cfg::kDqWriters; ++w) {  // rank: which closing record (dq_writer.h)
        ss.dq_meta[(step_count + w) % Cfg::kDqMetaRing] = BwdDqMeta{-1, w, -1};
        ss.dq_closing[w] = w < BwdDqWriter<Cfg>::num_writers(p.args) ? BwdDqWriter<Cfg>::buffer_of(p.args, step_count + w) : -1;
      }
      ss.task_info = BwdTaskInfo{SeqInfo{}, -1, -1, -1, -1};
      if (dealt_dynamically) { cutlass::arch::ClusterBarrier::arrive(&ss.task_ready); }
      cutlass::arch::ClusterBarrier::arrive(&ss.kv_full);
    }
    __syncwarp();
  }
};

}  // namespace dash
