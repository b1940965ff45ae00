// The two small kernels around the main backward kernel.
//   preprocess:  D = rowsum(dO * O) (fp32), LSE -> LSE * log2(e), and (non-deterministic
//                calls) zero this Q tile's dq_accum. Padding rows get D = 0 and LSE = +inf so
//                they contribute 0.
//   postprocess: dq_accum (fp32, fragment order) -> dQ = softmax_scale * dq_accum, cast.
//   dK / dV sum (split query-head groups only): the parts' fp32 partials added in part
//                order -> dK = softmax_scale * sum, dV = sum, cast; one CTA per (KV tile,
//                K/V head, sequence).
// Both run one CTA per (Q tile, query head, sequence) on a 1-D grid (so any number of heads
// and sequences fits: a 3-D grid caps heads and batch at 65535), Q tile fastest; a CTA past
// its sequence's last Q tile exits.
#pragma once

#include <cmath>

#include <cute/tensor.hpp>
#include <cutlass/numeric_conversion.h>

#include "../../attn_bwd_params.h"
#include "../common/seq_geometry.h"
#include "../common/sm90_primitives.h"
#include "config.h"
#include "epilogue.h"

namespace dash {

using namespace cute;

constexpr int kPrePostThreads = 256;

// The (sequence, query head, Q tile) of a pre/postprocess CTA; false if it has no rows.
struct PrePostTile {
  SeqInfo seq;
  int head, m_block;
};
template <int kBlockM>
CUTE_DEVICE bool prepost_tile(AttnBwdParams const& p, PrePostTile& tile) {
  int64_t const t = blockIdx.x;
  int64_t const bh = t / p.num_m_blocks;
  tile.m_block = int(t - bh * p.num_m_blocks);
  tile.head = int(bh % p.geo.heads);
  tile.seq = p.geo.seq(int(bh / p.geo.heads));
  return tile.m_block < ceil_div(tile.seq.len_q, kBlockM);
}

// Threads that share a row of D's dot product: the largest power of two (up to 32) that
// divides the row's 16-byte chunks, so a row's threads sit in one warp and each takes the
// same number of chunks.
constexpr int dot_threads_per_row(int chunks) {
  int threads = 1;
  while (threads < 32 && chunks % (2 * threads) == 0) { threads *= 2; }
  return threads;
}

template <class Element, int kHeadDim, int kHeadDimV, int kBlockM>
__global__ void __launch_bounds__(kPrePostThreads)
attn_bwd_preprocess_kernel(AttnBwdParams const p) {
  constexpr int kChunksPerRow = kHeadDimV / 8;  // 16 bytes of O and dO each
  constexpr int kThreadsPerRow = dot_threads_per_row(kChunksPerRow);
  constexpr int kRowsPerPass = kPrePostThreads / kThreadsPerRow;
  PrePostTile tile;
  if (!prepost_tile<kBlockM>(p, tile)) { return; }
  SeqInfo const& seq = tile.seq;
  int const head = tile.head;
  int const row0 = tile.m_block * kBlockM;
  int64_t const stats = p.geo.stats_offset(seq, head);

  Element const* out = static_cast<Element const*>(p.out) + seq.tensor_batch * p.out_batch_stride +
                       head * p.out_head_stride + seq.row_q * p.out_row_stride;
  Element const* dout = static_cast<Element const*>(p.dout) + seq.tensor_batch * p.dout_batch_stride +
                        head * p.dout_head_stride + seq.row_q * p.dout_row_stride;
  int const chunk0 = threadIdx.x % kThreadsPerRow;
  for (int r = threadIdx.x / kThreadsPerRow; r < kBlockM; r += kRowsPerPass) {
    int const row = row0 + r;
    float sum = 0.f;
    if (row < seq.len_q) {
      CUTE_UNROLL
      for (int chunk = chunk0; chunk < kChunksPerRow; chunk += kThreadsPerRow) {
        uint4 const o_raw = *reinterpret_cast<uint4 const*>(out + row * p.out_row_stride + chunk * 8);
        uint4 const do_raw = *reinterpret_cast<uint4 const*>(dout + row * p.dout_row_stride + chunk * 8);
        auto const& o8 = reinterpret_cast<cutlass::Array<Element, 8> const&>(o_raw);
        auto const& do8 = reinterpret_cast<cutlass::Array<Element, 8> const&>(do_raw);
        CUTE_UNROLL
        for (int i = 0; i < 8; ++i) { sum += float(o8[i]) * float(do8[i]); }
      }
    }
    CUTE_UNROLL
    for (int offset = kThreadsPerRow / 2; offset > 0; offset /= 2) {
      sum += __shfl_xor_sync(0xffffffff, sum, offset);
    }
    if (chunk0 == 0) { p.dpsum[stats + row] = sum; }
  }
  for (int r = threadIdx.x; r < kBlockM; r += kPrePostThreads) {
    int const row = row0 + r;
    // A row that sees no key at all has LSE = -inf; its scores are all masked to -inf,
    // so any finite value gives P = 0. Padding rows: +inf gives P = 0 for any score.
    float const lse = row < seq.len_q ? p.lse[p.geo.lse_offset(seq, head) + row] : INFINITY;
    p.lse_log2[stats + row] = lse == -INFINITY ? 0.f : lse * float(M_LOG2E);
  }
  if (p.deterministic) { return; }  // the tile's rank-0 partial is stored, not added (bwd/dq_writer.h)
  float4* acc = reinterpret_cast<float4*>(p.dq_accum + (stats + row0) * kHeadDim);
  for (int i = threadIdx.x; i < kBlockM * kHeadDim / 4; i += kPrePostThreads) {
    acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kNumMmaThreads)
attn_bwd_postprocess_kernel(AttnBwdParams const p) {
  using Element = typename Cfg::Element;
  constexpr int kBlockM = Cfg::kBlockM;
  constexpr int kHeadDim = Cfg::kHeadDim;
  constexpr int kPitch = kHeadDim + 8;  // 16 bytes of padding per row against bank conflicts
  constexpr int kThreads = Cfg::kNumMmaThreads;  // one per MMA thread of the main kernel
  __shared__ __align__(16) Element tile[kBlockM * kPitch];

  // Deterministic calls whose main kernel is not a cooperative launch start this kernel early
  // (bwd_launch.h), while the main kernel still runs its last tasks: a tile's dQ is complete
  // once its semaphore counts every KV tile that adds into it (each add is released after it
  // has landed), so a CTA waits for that and converts its tile on an SM the main kernel has
  // left. The grid's last CTA also waits for the main kernel to complete, so this kernel ends
  // after it and the work after both in the stream (which reads dK and dV) waits for both.
  bool const early = p.deterministic && p.dq_semaphore != nullptr;
  if (early && blockIdx.x == gridDim.x - 1) { wait_primary_grid(); }
  PrePostTile t;
  if (!prepost_tile<kBlockM>(p, t)) { return; }
  SeqInfo const& seq = t.seq;
  int const m_block = t.m_block;
  int const tid = threadIdx.x;
  int const wg = tid / 128;
  int64_t const stats = p.geo.stats_offset(seq, t.head);
  // Deterministic mode: a tile without adds was never written (rank 0 stores its partial, and
  // the preprocess does not zero dq_accum): its dQ is zero.
  int adds = 1;
  if (p.deterministic) {
    SeqTiles const tiles = seq_tiles(seq, kBlockM, Cfg::kBlockN, p.mask);
    adds = tiles.n_block_end(m_block) - tiles.n_block_begin(m_block);
    adds = adds > 0 ? adds : 0;
  }
  if (early) {
    if (tid == 0) { semaphore_wait_equal(p.dq_semaphore + p.geo.dq_tile(seq, t.head, m_block), adds, p.watchdog_ns); }
    __syncthreads();
  }

  // Undo the fragment order: the thread that produced a value in the main kernel's dQ
  // GEMM reads it back here and learns its (row, col) from the same tiled MMA.
  typename Cfg::TiledMmadQ mma_dq;
  Tensor coords = mma_dq.get_thread_slice(tid).partition_C(
      make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  static_assert(decltype(size(coords))::value == Cfg::kDqElemsPerThread);
  float4 const* src = reinterpret_cast<float4 const*>(
      p.dq_accum + (stats + int64_t(m_block) * kBlockM) * kHeadDim + wg * Cfg::kDqElemsPerWarpGroup) + tid % 128;
  CUTE_UNROLL
  for (int i = 0; i < Cfg::kDqElemsPerThread / 4; ++i) {
    float4 const v = adds > 0 ? __ldcg(src + i * 128)  // from L2: the main kernel may have added it moments ago
                              : make_float4(0.f, 0.f, 0.f, 0.f);
    float const vals[4] = {v.x, v.y, v.z, v.w};
    CUTE_UNROLL
    for (int j = 0; j < 4; ++j) {
      auto const c = coords(4 * i + j);
      tile[get<0>(c) * kPitch + get<1>(c)] = Element(vals[j] * p.softmax_scale);
    }
  }
  __syncthreads();

  constexpr int kChunksPerRow = kHeadDim / 8;
  Element* dq = static_cast<Element*>(p.dq) + seq.tensor_batch * p.dq_batch_stride + t.head * p.dq_head_stride +
               seq.row_q * p.dq_row_stride;
  for (int i = tid; i < kBlockM * kChunksPerRow; i += kThreads) {
    int const r = i / kChunksPerRow;
    int const c = (i % kChunksPerRow) * 8;
    int const row = m_block * kBlockM + r;
    if (row < seq.len_q) {
      *reinterpret_cast<uint4*>(dq + row * p.dq_row_stride + c) =
          *reinterpret_cast<uint4 const*>(&tile[r * kPitch + c]);
    }
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kNumMmaThreads)
attn_bwd_dkv_sum_kernel(AttnBwdParams const p, int const parts) {
  constexpr int kBlockN = Cfg::kBlockN;
  constexpr int kThreads = Cfg::kNumMmaThreads;
  int64_t const t = blockIdx.x;
  int64_t const bh = t / p.num_n_blocks;
  BwdTaskInfo task;
  task.n_block = int(t - bh * p.num_n_blocks);
  task.kv_head = int(bh % p.geo.heads_kv);
  task.seq = p.geo.seq(int(bh / p.geo.heads_kv));
  task.part = 0;
  if (task.n_block >= ceil_div(task.seq.len_k, kBlockN)) { return; }

  // The thread that produced a value in the main kernel's dK / dV GEMMs reads it back here
  // and learns its (row, col) from the same tiled MMA.
  using Epilogue = BwdEpilogue<Cfg>;
  int const tid = threadIdx.x;
  constexpr int64_t kPartFloat2s = int64_t(kBlockN) * (Cfg::kHeadDim + Cfg::kHeadDimV) / 2;  // one part's dK and dV
  float2 const* const first = Epilogue::dkv_part(p, task, parts) + tid;
  int const rows_valid = task.seq.len_k - task.n_block * kBlockN;
  // The parts' values at pairs [q0, q0 + kChunk) of this thread's share of a slot (dK's pairs,
  // then dV's), added in part order (the same sum whoever ran the parts), then stored. A
  // chunk's loads of a part are all in flight before its sums are stored: pair by pair, each
  // load waited behind the previous pair's store (which might alias it), a DRAM round trip
  // for every pair (bench/RESULTS.md item 150).
  constexpr int kChunk = Epilogue::kPairsK % 16 == 0 && Epilogue::kPairsV % 16 == 0 ? 16 : 8;
  static_assert(Epilogue::kPairsK % kChunk == 0 && Epilogue::kPairsV % kChunk == 0, "whole chunks of pairs");
  auto add_chunk = [&](int q0, typename Epilogue::OutTile const& out, auto const& coords, int pair0) {
    float2 sum[kChunk];
    CUTE_UNROLL
    for (int i = 0; i < kChunk; ++i) { sum[i] = __ldcs(first + (q0 + i) * kThreads); }
    for (int part = 1; part < parts; ++part) {
      float2 add[kChunk];
      CUTE_UNROLL
      for (int i = 0; i < kChunk; ++i) { add[i] = __ldcs(first + part * kPartFloat2s + (q0 + i) * kThreads); }
      CUTE_UNROLL
      for (int i = 0; i < kChunk; ++i) { sum[i] = make_float2(sum[i].x + add[i].x, sum[i].y + add[i].y); }
    }
    CUTE_UNROLL
    for (int i = 0; i < kChunk; ++i) { Epilogue::store_pair(out, coords, 2 * (q0 + i - pair0), rows_valid, sum[i]); }
  };
  {
    auto const coords = Epilogue::template coords_of<typename Cfg::TiledMmadK, Cfg::kHeadDim>(tid);
    typename Epilogue::OutTile const dk = Epilogue::dk_tile(p, task);
    CUTE_UNROLL
    for (int q0 = 0; q0 < Epilogue::kPairsK; q0 += kChunk) { add_chunk(q0, dk, coords, 0); }
  }
  {
    auto const coords = Epilogue::template coords_of<typename Cfg::TiledMmadV, Cfg::kHeadDimV>(tid);
    typename Epilogue::OutTile const dv = Epilogue::dv_tile(p, task);
    CUTE_UNROLL
    for (int q0 = Epilogue::kPairsK; q0 < Epilogue::kPairsK + Epilogue::kPairsV; q0 += kChunk) {
      add_chunk(q0, dv, coords, Epilogue::kPairsK);
    }
  }
}

}  // namespace dash
