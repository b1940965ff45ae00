// Small sm90 building blocks the backward kernels share: named barriers, the dQ
// semaphore protocol, bulk copies / reductions, WGMMA issue and fragment re-layouts.
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/numeric_conversion.h>

namespace dash {

using namespace cute;

// ---------------------------------------------------------------------------------------
// Named barriers (hardware ids 0..15). Each kernel names its ids in its own enum
// (FwdBarrier in fwd/config.h, BwdBarrier in bwd/config.h).
// ---------------------------------------------------------------------------------------

CUTE_DEVICE void named_barrier_sync(int id, int num_threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
}
CUTE_DEVICE void named_barrier_arrive(int id, int num_threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
}

// ---------------------------------------------------------------------------------------
// dQ tile semaphores (deterministic mode). A CTA may add its partial into dQ tile i only
// when sem[i] equals its rank in the tile's fixed order; after its add has *landed in
// global memory* it increments sem[i].
// ---------------------------------------------------------------------------------------
CUTE_DEVICE int load_acquire_gpu(int const* ptr) {
  int value;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(value) : "l"(ptr) : "memory");
  return value;
}

CUTE_DEVICE void store_release_gpu(int* ptr, int value) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(ptr), "r"(value) : "memory");
}

CUTE_DEVICE void add_release_gpu(int* ptr, int value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" ::"l"(ptr), "r"(value) : "memory");
}

// Programmatic dependent launch: a kernel launched after this one with programmatic stream
// serialization may start once every CTA of this one has called launch_dependents; its
// wait_primary_grid returns once this one has completed and its writes are visible.
CUTE_DEVICE void launch_dependent_grid() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
CUTE_DEVICE void wait_primary_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Shared-memory flags between the warps of one CTA.
CUTE_DEVICE int load_acquire_cta(int const* smem_ptr) {
  int value;
  asm volatile("ld.acquire.cta.shared::cta.b32 %0, [%1];"
               : "=r"(value) : "r"(cute::cast_smem_ptr_to_uint(smem_ptr)) : "memory");
  return value;
}

CUTE_DEVICE void store_release_cta(int* smem_ptr, int value) {
  asm volatile("st.release.cta.shared::cta.b32 [%0], %1;" ::"r"(cute::cast_smem_ptr_to_uint(smem_ptr)), "r"(value)
               : "memory");
}

CUTE_DEVICE uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spin (one lane) until *sem == expected. A wait longer than watchdog_ns (if nonzero)
// traps: a bug in a schedule becomes a launch error instead of a hung GPU. (No printf
// here: a call in the kernel would serialize every WGMMA.)
CUTE_DEVICE void semaphore_wait_equal(int const* sem, int expected, uint64_t watchdog_ns) {
  if (load_acquire_gpu(sem) == expected) { return; }
  uint64_t const start = global_timer_ns();
  int spins = 0;
  while (load_acquire_gpu(sem) != expected) {
    if (watchdog_ns != 0 && (++spins & 1023) == 0 && global_timer_ns() - start > watchdog_ns) {
      __trap();
    }
  }
}

// ---------------------------------------------------------------------------------------
// Bulk (non-tensor) async copies.
// ---------------------------------------------------------------------------------------
CUTE_DEVICE void bulk_copy_g2s(void* smem_dst, void const* gmem_src, int bytes, uint64_t* mbar) {
  uint32_t dst = cute::cast_smem_ptr_to_uint(smem_dst);
  uint32_t bar = cute::cast_smem_ptr_to_uint(mbar);
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      ::"r"(dst), "l"(gmem_src), "r"(bytes), "r"(bar) : "memory");
}

// gmem[0:bytes/4] = smem[0:bytes/4] if `store`, else += (fp32), performed by the bulk-copy
// engine in the same bulk groups: one predicated pair, so the choice costs the dQ writers' loop
// no branch and no register beyond the flag.
CUTE_DEVICE void bulk_store_or_add_f32(float* gmem_dst, float const* smem_src, int bytes, bool store) {
  uint32_t src = cute::cast_smem_ptr_to_uint(smem_src);
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %3, 0;\n"
      "@p cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
      "@!p cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n"
      "}\n" ::"l"(gmem_dst), "r"(src), "r"(bytes), "r"(int(store)) : "memory");
}

CUTE_DEVICE void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until the smem *sources* of all but the newest N groups have been read.
template <int N>
CUTE_DEVICE void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Waits until all but the newest N groups are *complete*: their writes to global memory
// have been performed. This (not .read) is what must precede a semaphore release.
template <int N>
CUTE_DEVICE void bulk_wait_group_complete() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// Orders this thread's async-proxy (bulk copy engine) global accesses with its generic ones.
CUTE_DEVICE void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}

// Makes generic-proxy smem writes visible to the async proxy (WGMMA / bulk copies).
CUTE_DEVICE void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---------------------------------------------------------------------------------------
// WGMMA issue. One call = one commit group; kWait >= 0 waits until at most kWait groups
// of this warpgroup are still in flight.
// ---------------------------------------------------------------------------------------
// One batch: fences the register fragments the GEMMs read or write (an A from registers, the
// accumulators) on both sides, runs `issue` (the GEMMs' instructions) between arrive and commit,
// and for kWait >= 0 waits until at most kWait groups of this warpgroup are still in flight.
template <int kWait, class Issue, class... Fragments>
CUTE_DEVICE void wgmma_batch(Issue&& issue, Fragments&... fragments) {
  (warpgroup_fence_operand(fragments), ...);
  warpgroup_arrive();
  issue();
  warpgroup_commit_batch();
  if constexpr (kWait >= 0) { warpgroup_wait<kWait>(); }
  (warpgroup_fence_operand(fragments), ...);
}

template <class TiledMma>
constexpr bool kAFromRegisters =
    !cute::is_base_of<cute::GMMA::DescriptorIterator, typename TiledMma::FrgTypeA>::value;

// kNumK of the operands' k-blocks from kb_first (run time, warp-uniform where not 0) as one
// batch: a GEMM's K range issued in parts (the backward's dQ GEMM, by the keys each
// warpgroup's dS covers).
template <bool kZeroInit, int kWait, int kNumK, class TiledMma, class TA, class TB, class TC>
CUTE_DEVICE void wgmma_k_blocks(TiledMma& mma, TA const& a, TB const& b, TC& c, int kb_first) {
  auto issue = [&]() __attribute__((always_inline)) {
    mma.accumulate_ = kZeroInit ? GMMA::ScaleOut::Zero : GMMA::ScaleOut::One;
    CUTE_UNROLL
    for (int i = 0; i < kNumK; ++i) {
      cute::gemm(mma, a(_, _, kb_first + i), b(_, _, kb_first + i), c);
      mma.accumulate_ = GMMA::ScaleOut::One;
    }
  };
  if constexpr (kAFromRegisters<TiledMma>) {
    wgmma_batch<kWait>(issue, const_cast<TA&>(a), c);
  } else {
    wgmma_batch<kWait>(issue, c);
  }
}

// The whole K range.
template <bool kZeroInit, int kWait, class TiledMma, class TA, class TB, class TC>
CUTE_DEVICE void wgmma(TiledMma& mma, TA const& a, TB const& b, TC& c) {
  wgmma_k_blocks<kZeroInit, kWait, decltype(size<2>(a))::value>(mma, a, b, c, 0);
}

// Two accumulating RS GEMMs of the same register A, c1 += a b1 and c2 += a b2, in one commit group
// (so a caller's warpgroup_wait<n> counts them as one GEMM).
template <class TiledMma1, class TiledMma2, class TA, class TB1, class TC1, class TB2, class TC2>
CUTE_DEVICE void wgmma_pair(TiledMma1& mma1, TiledMma2& mma2, TA const& a, TB1 const& b1, TC1& c1, TB2 const& b2,
                            TC2& c2) {
  static_assert(kAFromRegisters<TiledMma1> && kAFromRegisters<TiledMma2>);
  wgmma_batch</*kWait=*/-1>(
      [&]() __attribute__((always_inline)) {
        mma1.accumulate_ = GMMA::ScaleOut::One;
        mma2.accumulate_ = GMMA::ScaleOut::One;
        CUTE_UNROLL
        for (int i = 0; i < decltype(size<2>(a))::value; ++i) { cute::gemm(mma1, a(_, _, i), b1(_, _, i), c1); }
        CUTE_UNROLL
        for (int i = 0; i < decltype(size<2>(a))::value; ++i) { cute::gemm(mma2, a(_, _, i), b2(_, _, i), c2); }
      },
      const_cast<TA&>(a), c1, c2);
}

// ---------------------------------------------------------------------------------------
// Fragment views.
// A WGMMA accumulator fragment has layout ((2, 2, N/8), MMA_M, MMA_N): pairs of adjacent
// columns, two rows eight apart, N/8 column groups. as_rows_cols() views it as
// (rows, cols) of the MMA's M x N tile.
// ---------------------------------------------------------------------------------------
template <class AccLayout>
CUTE_DEVICE constexpr auto acc_layout_as_rows_cols(AccLayout acc) {
  static_assert(decltype(rank<0>(acc))::value == 3);
  return make_layout(make_layout(get<0, 1>(acc), get<1>(acc)),
                     make_layout(get<0, 0>(acc), get<0, 2>(acc), get<2>(acc)));
}

// The 16-bit A-operand register fragment of a k16 WGMMA holds, per thread, the same
// (row, col) positions as the accumulator fragment restricted to 16 columns. So a
// converted accumulator can feed the next GEMM as A without moving data:
// ((2, 2, N/8), MMA_M, MMA_N) -> ((2, 2, 2), MMA_M, (N/16) * MMA_N).
template <class AccLayout>
CUTE_DEVICE constexpr auto acc_layout_as_a_operand(AccLayout acc) {
  static_assert(decltype(rank<0>(acc))::value == 3);
  auto col_groups = logical_divide(get<0, 2>(acc), Tile<_2>{});  // (2, N/16)
  return make_layout(make_layout(get<0, 0>(acc), get<0, 1>(acc), get<0, 0>(col_groups)),
                     get<1>(acc),
                     coalesce(make_layout(get<0, 1>(col_groups), get<2>(acc))));
}

// fp32 fragment -> 16-bit fragment of the same layout (pairs converted together).
template <class Element, class Engine, class Layout>
CUTE_DEVICE auto convert_fragment(Tensor<Engine, Layout> const& src) {
  Tensor dst = make_tensor<Element>(src.layout());
  static_assert(decltype(size(src))::value % 2 == 0);
  auto src2 = recast<cutlass::Array<float, 2> const>(src);
  auto dst2 = recast<cutlass::Array<Element, 2>>(dst);
  cutlass::NumericArrayConverter<Element, float, 2> convert;
  CUTE_UNROLL
  for (int i = 0; i < size(src2); ++i) { dst2(i) = convert(src2(i)); }
  return dst;
}

}  // namespace dash
