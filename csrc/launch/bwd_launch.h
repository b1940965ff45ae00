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
#include "../kernels/bwd_config.h"
#include "../kernels/bwd_kernel.h"
#include "../kernels/bwd_kernel_params.h"
#include "../kernels/bwd_prepost.h"
#include "../kernels/schedule.h"

namespace dash {

inline void check_cuda(cudaError_t err, char const* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("dash: ") + what + " failed: " + cudaGetErrorString(err));
  }
}

template <class Cfg>
BwdKernelParams<Cfg> make_bwd_kernel_params(AttnBwdParams const& a) {
  using Element = typename Cfg::Element;
  using KP = BwdKernelParams<Cfg>;
  auto gmem = [](void const* ptr, int seqlen, int64_t row, int64_t head, int64_t batch,
                 AttnBwdParams const& a) {
    return make_tensor(make_gmem_ptr(static_cast<Element const*>(ptr)),
                       make_shape(int32_t(seqlen), int32_t(a.head_dim), int32_t(a.heads), int32_t(a.batch)),
                       make_stride(row, _1{}, head, batch));
  };
  KP kp{
      a,
      make_schedule_view(a),
      float(a.softmax_scale * M_LOG2E),
      make_tma_copy(SM90_TMA_LOAD{}, gmem(a.q, a.seqlen_q, a.q_row_stride, a.q_head_stride, a.q_batch_stride, a),
                    take<0, 2>(typename Cfg::SmemLayoutQ{})),
      make_tma_copy(SM90_TMA_LOAD{}, gmem(a.dout, a.seqlen_q, a.dout_row_stride, a.dout_head_stride, a.dout_batch_stride, a),
                    take<0, 2>(typename Cfg::SmemLayoutdO{})),
      make_tma_copy(SM90_TMA_LOAD{}, gmem(a.k, a.seqlen_k, a.k_row_stride, a.k_head_stride, a.k_batch_stride, a),
                    typename Cfg::SmemLayoutK{}),
      make_tma_copy(SM90_TMA_LOAD{}, gmem(a.v, a.seqlen_k, a.v_row_stride, a.v_head_stride, a.v_batch_stride, a),
                    typename Cfg::SmemLayoutV{}),
  };
  return kp;
}

// Persistent grid size: the tasks, capped by how many CTAs the device can keep resident
// at once (occupancy x (SMs - margin)). Shift-style schedules make CTAs of one wave wait
// on each other, so the whole grid must be co-resident: never a hard-coded SM count.
template <class Kernel>
int persistent_grid_size(Kernel kernel, int threads, int smem_bytes, int device, int sm_margin,
                         int num_tasks) {
  int sm_count = 0;
  check_cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(multiProcessorCount)");
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (per_sm < 1) { throw std::runtime_error("dash: the backward kernel does not fit on an SM"); }
  int const usable_sms = sm_count - sm_margin;
  if (usable_sms < 1) {
    throw std::invalid_argument("dash: sm_margin=" + std::to_string(sm_margin) +
                                " leaves no SM of the " + std::to_string(sm_count) + " available");
  }
  int64_t const resident = int64_t(per_sm) * usable_sms;
  return int(num_tasks < resident ? num_tasks : resident);
}

template <class Cfg>
void launch_attn_bwd(AttnBwdParams& a, cudaStream_t stream) {
  using Element = typename Cfg::Element;
  dim3 const tiles_grid(a.num_m_blocks, a.heads, a.batch);

  attn_bwd_preprocess_kernel<Element, Cfg::kHeadDim, Cfg::kBlockM>
      <<<tiles_grid, kPrePostThreads, 0, stream>>>(a);
  check_cuda(cudaGetLastError(), "launch of the backward preprocess kernel");

  BwdKernelParams<Cfg> const kp = make_bwd_kernel_params<Cfg>(a);
  auto kernel = attn_bwd_sm90_kernel<Cfg>;
  int const smem = Cfg::kSmemBytes;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  int const grid = persistent_grid_size(kernel, Cfg::kNumThreads, smem, a.device, a.sm_margin,
                                        kp.sched.num_tasks());
  a.launched_ctas = grid;
  kernel<<<grid, Cfg::kNumThreads, smem, stream>>>(kp);
  check_cuda(cudaGetLastError(), "launch of the backward kernel");

  attn_bwd_postprocess_kernel<Cfg><<<tiles_grid, Cfg::kNumMmaThreads, 0, stream>>>(a);
  check_cuda(cudaGetLastError(), "launch of the backward postprocess kernel");
}

}  // namespace dash
