// Host side of one backward configuration: builds the TMA descriptors, sizes the
// persistent grid from the device's real occupancy and launches preprocess, the main
// kernel and postprocess on the caller's stream. Included by one .cu per instantiation.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>
#include <cute/tensor.hpp>

#include "../attn_bwd_params.h"
#include "../kernels/bwd/config.h"
#include "../kernels/bwd/kernel.h"
#include "../kernels/bwd/kernel_params.h"
#include "../kernels/bwd/prepost.h"
#include "../kernels/bwd/schedule.h"
#include "bwd_registry.h"
#include "launch_utils.h"
#include "../kernels/common/gmem_tensors.h"

namespace dash {

template <class Cfg>
BwdKernelParams<Cfg> make_bwd_kernel_params(AttnBwdParams const& a) {
  using Element = typename Cfg::Element;
  using Params = BwdKernelParams<Cfg>;
  return Params{
      a,
      make_schedule_view(a),
      ScoreScale::make(a.softmax_scale, a.softcap),
      make_tma_copy(SM90_TMA_LOAD{},
                    qkv_gmem_tensor<Element>(a.q, Params::shape_q(a), a.q_row_stride, a.q_head_stride,
                                             a.q_batch_stride),
                    take<0, 2>(typename Cfg::SmemLayoutQ{})),
      make_tma_copy(SM90_TMA_LOAD{},
                    qkv_gmem_tensor<Element>(a.dout, Params::shape_do(a), a.dout_row_stride, a.dout_head_stride,
                                             a.dout_batch_stride),
                    take<0, 2>(typename Cfg::SmemLayoutdO{})),
      make_tma_copy(SM90_TMA_LOAD{},
                    qkv_gmem_tensor<Element>(a.k, Params::shape_k(a), a.k_row_stride, a.k_head_stride,
                                             a.k_batch_stride),
                    typename Cfg::SmemLayoutK{}),
      make_tma_copy(SM90_TMA_LOAD{},
                    qkv_gmem_tensor<Element>(a.v, Params::shape_v(a), a.v_row_stride, a.v_head_stride,
                                             a.v_batch_stride),
                    typename Cfg::SmemLayoutV{}),
  };
}

// Raises the kernel's dynamic shared memory limit and returns how many of its CTAs fit
// on one SM of `device` (cached per device; the answer does not change).
template <class Cfg>
int bwd_ctas_per_sm(int device) {
  static int cache[64] = {};  // 0 = not queried yet
  return ctas_per_sm_cached(attn_bwd_sm90_kernel<Cfg>, Cfg::kNumThreads, Cfg::kSmemBytes, device, cache);
}

// Launches preprocess, the main kernel (params.grid CTAs, params.planned_schedule) and
// postprocess. In deterministic mode CTAs of one launch wait on each other. Schedules dealt in
// static rounds need every CTA resident, so their kernel goes out as a cooperative launch: the
// driver starts it only when all its CTAs can be resident at once, whatever else runs on the
// device. Counter-dealt schedules (every deterministic `auto` call) finish with any number of
// CTAs resident (bwd/producer.h) and launch as usual: beside another kernel that holds SMs (a
// collective of the overlapped communication, say) they start on the free SMs instead of
// waiting for the whole device (bench/RESULTS.md item 149).
template <class Cfg>
void launch_attn_bwd(AttnBwdParams& a, cudaStream_t stream) {
  using Element = typename Cfg::Element;
  // The kernel's roles (the producer's schedule math included) take the tile shape as
  // compile-time constants: the plan must have been made for the same tile.
  TileShape const tile = bwd_tile_of(a);
  if (tile.block_m != Cfg::kBlockM || tile.block_n != Cfg::kBlockN) {
    throw std::logic_error("dash: backward planned for a tile other than its kernel's");
  }
  // One CTA per (Q tile, query head, sequence); the binding keeps the count below 2^31.
  int64_t const prepost_ctas = int64_t(a.num_m_blocks) * a.geo.heads * a.geo.batch;
  dim3 const tiles_grid(unsigned(prepost_ctas > 0 ? prepost_ctas : 1));

  attn_bwd_preprocess_kernel<Element, Cfg::kHeadDim, Cfg::kHeadDimV, Cfg::kBlockM>
      <<<tiles_grid, kPrePostThreads, 0, stream>>>(a);
  check_cuda(cudaGetLastError(), "launch of the backward preprocess kernel");

  BwdKernelParams<Cfg> const kp = make_bwd_kernel_params<Cfg>(a);
  bwd_ctas_per_sm<Cfg>(a.device);  // sets the smem attribute on this device
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(a.grid);
  config.blockDim = dim3(Cfg::kNumThreads);
  config.dynamicSmemBytes = Cfg::kSmemBytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeCooperative;
  attribute[0].val.cooperative =
      a.deterministic && !counter_dealt_schedule(a.planned_schedule, a.geo.packed()) ? 1 : 0;
  config.attrs = attribute;
  config.numAttrs = 1;
  check_cuda(cudaLaunchKernelEx(&config, attn_bwd_sm90_kernel<Cfg>, kp), "launch of the backward kernel");

  // Deterministic calls dealt from a counter start the postprocess early (programmatic
  // dependent launch): its CTAs wait on their dQ tiles' semaphores and convert each tile once
  // its adds have landed, on the SMs the main kernel's last tasks leave idle (bwd/prepost.h).
  // Without semaphores (non-deterministic), or after a cooperative launch, it starts after the
  // main kernel as usual.
  bool const early_post = a.deterministic && a.dq_semaphore != nullptr && attribute[0].val.cooperative == 0;
  cudaLaunchConfig_t post = {};
  post.gridDim = tiles_grid;
  post.blockDim = dim3(Cfg::kNumMmaThreads);
  post.stream = stream;
  cudaLaunchAttribute post_attribute[1];
  post_attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  post_attribute[0].val.programmaticStreamSerializationAllowed = early_post ? 1 : 0;
  post.attrs = post_attribute;
  post.numAttrs = 1;
  AttnBwdParams post_args = a;
  if (!early_post) { post_args.dq_semaphore = nullptr; }  // the postprocess then waits on nothing
  check_cuda(cudaLaunchKernelEx(&post, attn_bwd_postprocess_kernel<Cfg>, post_args),
             "launch of the backward postprocess kernel");

  if (a.kv_parts > 1) {  // split query-head groups: add the parts' dK / dV in part order
    int64_t const kv_ctas = int64_t(a.num_n_blocks) * a.geo.heads_kv * a.geo.batch;
    attn_bwd_dkv_sum_kernel<Cfg><<<dim3(unsigned(kv_ctas > 0 ? kv_ctas : 1)), Cfg::kNumMmaThreads, 0, stream>>>(
        a, a.kv_parts);
    check_cuda(cudaGetLastError(), "launch of the backward dK / dV sum kernel");
  }
}

template <class Cfg>
constexpr BwdKernelEntry bwd_kernel_entry() {
  return BwdKernelEntry{&launch_attn_bwd<Cfg>, &bwd_ctas_per_sm<Cfg>};
}

}  // namespace dash
