// A multi-stage producer/consumer pipeline on mbarriers: the producer waits for a free
// stage, may write small metadata into it with ordinary stores, then arrives on the
// stage's "full" barrier expecting the TMA / bulk-copy bytes; consumers wait on "full"
// (which also makes the producer's earlier stores visible: arrive has release semantics)
// and arrive on "empty" when done. Unlike cutlass::PipelineTmaAsync, acquiring the stage
// and arming its full barrier are separate steps, which is what lets the producer publish
// the Q tile index of each stage to the MMA warpgroups.
#pragma once

#include <cstdint>

#include <cutlass/arch/barrier.h>

namespace dash {

template <int kStages>
struct TmaPipeline {
  struct SharedStorage {
    uint64_t full[kStages];
    uint64_t empty[kStages];
  };

  struct State {
    int index = 0;
    uint32_t phase = 0;
    CUTE_DEVICE void advance() {
      if (++index == kStages) {
        index = 0;
        phase ^= 1;
      }
    }
  };

  // The producer's first pass over the stages must not wait: it starts on the other parity.
  CUTE_DEVICE static State producer_start() { return State{0, 1}; }
  CUTE_DEVICE static State consumer_start() { return State{0, 0}; }

  // One thread, before the CTA-wide barrier that publishes the init.
  CUTE_DEVICE static void init(SharedStorage& s, int consumer_arrivals) {
    for (int i = 0; i < kStages; ++i) {
      cutlass::arch::ClusterTransactionBarrier::init(&s.full[i], 1);
      cutlass::arch::ClusterBarrier::init(&s.empty[i], consumer_arrivals);
    }
    cutlass::arch::fence_barrier_init();
  }

  CUTE_DEVICE static void producer_wait_empty(SharedStorage& s, State st) {
    cutlass::arch::ClusterBarrier::wait(&s.empty[st.index], st.phase);
  }
  CUTE_DEVICE static uint64_t* producer_arm_full(SharedStorage& s, State st, uint32_t bytes) {
    cutlass::arch::ClusterTransactionBarrier::arrive_and_expect_tx(&s.full[st.index], bytes);
    return &s.full[st.index];
  }
  CUTE_DEVICE static void consumer_wait_full(SharedStorage& s, State st) {
    cutlass::arch::ClusterBarrier::wait(&s.full[st.index], st.phase);
  }
  CUTE_DEVICE static void consumer_release(SharedStorage& s, State st) {
    cutlass::arch::ClusterBarrier::arrive(&s.empty[st.index]);
  }
  // A 2-CTA cluster whose producers fill both CTAs' stages: a stage is free once every consumer
  // warp of both CTAs let go of it, so lane 0 of each warp (`signals`) arrives on its own CTA's
  // (`self`, its rank) and on `peer`'s empty barrier (init count: 2 x the consumer warps of a CTA).
  CUTE_DEVICE static void consumer_release_pair(SharedStorage& s, State st, uint32_t self, uint32_t peer,
                                                bool signals) {
    cutlass::arch::ClusterBarrier::arrive(&s.empty[st.index], self, signals);
    cutlass::arch::ClusterBarrier::arrive(&s.empty[st.index], peer, signals);
  }
  // The producer's last act in a cluster: every stage's last release (the peer's too) has
  // landed, so no remote arrive targets this CTA's smem after it exits.
  CUTE_DEVICE static void producer_tail(SharedStorage& s, State st) {
    for (int i = 0; i < kStages; ++i) {
      producer_wait_empty(s, st);
      st.advance();
    }
  }
};

}  // namespace dash
