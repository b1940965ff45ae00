// The prepare kernel of packed (variable-length) calls: one CTA validates cu_seqlens /
// seqused against the call's sizes and writes the VarlenTiles table (varlen_tiles.h), on the
// stream, before the main kernel: no host sync.
//
// Invalid cu_seqlens (first != 0, decreasing, last != total rows, a sequence longer than
// max_seqlen, seqused outside [0, length]) would make the kernels read or write out of
// bounds, and checking on the host would cost a device-to-host copy and a sync per call, so
// the check runs here: the kernel prints what is wrong and traps, which surfaces as a CUDA
// error ("device-side assert" / "unspecified launch failure") at the next synchronizing
// call, as PyTorch's own device-side index checks do. The context is unusable afterwards,
// also as with PyTorch's checks.
#pragma once

#include <cstdio>

#include "seq_geometry.h"
#include "varlen_tiles.h"

namespace dash {

constexpr int kVarlenPrepareThreads = 1024;

// counts: dynamic shared memory of g.batch ints.
__global__ void __launch_bounds__(kVarlenPrepareThreads)
varlen_tiles_prepare_kernel(SeqGeometry const g, VarlenTileCount const count, int const num_slabs, int const units,
                            bool const reverse, int* const table) {
  extern __shared__ int counts[];
  int const tid = threadIdx.x;
  bool bad = false;
  for (int b = tid; b < g.batch; b += blockDim.x) {
    int const q0 = g.cu_seqlens_q[b], q1 = g.cu_seqlens_q[b + 1];
    int const k0 = g.cu_seqlens_k[b], k1 = g.cu_seqlens_k[b + 1];
    if ((b == 0 && (q0 != 0 || k0 != 0)) || q1 < q0 || k1 < k0 ||
        (b == g.batch - 1 && (q1 != g.total_q || k1 != g.total_k))) {
      printf("dash: invalid cu_seqlens at sequence %d: cu_seqlens_q[%d..%d] = %d, %d and cu_seqlens_k = %d, %d; they "
             "must start at 0, never decrease and end at the total rows (q: %d, k: %d)\n",
             b, b, b + 1, q0, q1, k0, k1, g.total_q, g.total_k);
      bad = true;
    }
    int const len_q = q1 - q0, len_k = k1 - k0;
    if (len_q > g.seqlen_q || len_k > g.seqlen_k) {
      printf("dash: sequence %d has %d query and %d key rows, more than max_seqlen_q = %d / max_seqlen_k = %d\n", b,
             len_q, len_k, g.seqlen_q, g.seqlen_k);
      bad = true;
    }
    if ((g.seqused_q != nullptr && (g.seqused_q[b] < 0 || g.seqused_q[b] > len_q)) ||
        (g.seqused_k != nullptr && (g.seqused_k[b] < 0 || g.seqused_k[b] > len_k))) {
      printf("dash: seqused of sequence %d is outside [0, its length] (q: %d of %d, k: %d of %d)\n", b,
             g.seqused_q != nullptr ? g.seqused_q[b] : len_q, len_q, g.seqused_k != nullptr ? g.seqused_k[b] : len_k,
             len_k);
      bad = true;
    }
    counts[b] = count.of(g.seq(b));
  }
  if (bad) { __trap(); }
  __syncthreads();
  int* const slab_begin = table + 1;
  int* const order = table + 2 + num_slabs;
  // Rank of each sequence by tile count (descending, ties by index): order is a permutation.
  for (int b = tid; b < g.batch; b += blockDim.x) {
    int const mine = counts[b];
    int rank = 0;
    for (int o = 0; o < g.batch; ++o) { rank += (counts[o] > mine || (counts[o] == mine && o < b)) ? 1 : 0; }
    order[rank] = b;
  }
  // Items of each slab, then their exclusive prefix sum.
  for (int s = tid; s < num_slabs; s += blockDim.x) {
    int const threshold = reverse ? num_slabs - 1 - s : s;
    int n = 0;
    for (int b = 0; b < g.batch; ++b) { n += counts[b] > threshold ? 1 : 0; }
    slab_begin[s] = n;
  }
  __syncthreads();
  // seq_begin[i] = tiles of the i longest sequences = sum over slabs of min(i, slab size)
  // (the sequences of a slab are a prefix of the order), so each entry is independent.
  int* const seq_begin = order + g.batch;
  for (int i = tid; i <= g.batch; i += blockDim.x) {
    int tiles = 0;
    for (int s = 0; s < num_slabs; ++s) { tiles += min(i, slab_begin[s]); }
    seq_begin[i] = tiles;
  }
  __syncthreads();
  if (tid == 0) {
    int items = 0;
    for (int s = 0; s < num_slabs; ++s) {
      int const n = slab_begin[s];
      slab_begin[s] = items;
      items += n;
    }
    slab_begin[num_slabs] = items;
    table[0] = items * units;
  }
}

}  // namespace dash
