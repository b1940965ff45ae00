// torch binding of the forward pass: torch.ops.dash.attn_fwd.
// Validates the tensors, allocates out and softmax_lse, fills AttnFwdParams and launches
// on the current stream. `deterministic` and `schedule` do not change the forward (which
// is deterministic: no atomics, one CTA per output tile); they are part of the op so
// that its autograd formula (dash/autograd.py) can hand them to attn_bwd.
#include <string>
#include <tuple>
#include <vector>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>
#include <torch/types.h>

#include "../attn_fwd_params.h"
#include "../launch/bwd_plan.h"
#include "../launch/fwd_registry.h"
#include "bwd_call.h"
#include "op_checks.h"
#include "op_utils.h"

namespace dash {
namespace {

constexpr char const* kOp = "dash.attn_fwd";

void check_schedule_name(c10::string_view schedule) {
  try {
    parse_schedule(std::string(schedule));
  } catch (std::invalid_argument const& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
}

// The forward's online softmax tracks the running max of the raw scores, which is the
// max of the scaled scores only for a positive scale.
BwdShape check_fwd_args(at::Tensor const& q, at::Tensor const& k, at::Tensor const& v, double softmax_scale,
                        int64_t sm_margin) {
  BwdShape const s = check_qkv_args(kOp, q, k, v, softmax_scale, sm_margin);
  TORCH_CHECK_VALUE(softmax_scale > 0, kOp, ": softmax_scale must be > 0; got ", softmax_scale);
  return s;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> run_fwd_call(AttnFwdParams& p, at::Tensor const& q, at::Tensor const& k,
                                                at::Tensor const& v, at::IntArrayRef lse_shape, bool zero_outputs) {
  c10::cuda::CUDAGuard device_guard(q.device());
  at::Tensor const qx = tma_compatible(q);
  at::Tensor const kx = tma_compatible(k);
  at::Tensor const vx = tma_compatible(v);
  std::vector<int64_t> out_shape = q.sizes().vec();  // q's, with v's head dim
  out_shape.back() = p.head_dim_v;
  at::Tensor out = zero_outputs ? at::zeros(out_shape, q.options()) : at::empty(out_shape, q.options());
  at::Tensor lse = zero_outputs ? at::full(lse_shape, -INFINITY, q.options().dtype(at::kFloat))
                                : at::empty(lse_shape, q.options().dtype(at::kFloat));
  p.short_walk = fwd_takes_short_walk(p, dtype_of(q));  // before anything is sized by the tile
  // Causal tiles are dealt out dynamically from this counter (see kernels/fwd/tile_scheduler.h).
  at::Tensor const tile_counter = !p.mask.full() ? at::zeros({1}, q.options().dtype(at::kInt)) : at::Tensor();
  at::Tensor varlen_table;
  if (p.geo.packed()) {
    int const num_slabs = ceil_div(p.geo.seqlen_q, fwd_call_tile(p).block_m);
    varlen_table = at::empty({VarlenTiles::table_size(num_slabs, p.geo.batch)}, q.options().dtype(at::kInt));
    // Banded: the longest documents' tiles first over the whole call (kernels/fwd/tile_scheduler.h).
    p.varlen_tiles = VarlenTiles{varlen_table.data_ptr<int>(), num_slabs, p.geo.batch, p.geo.heads, !p.mask.full(),
                                 p.mask.full() ? VarlenOrder::kUnitMajor : VarlenOrder::kSequenceMajor};
  }
  p.tile_counter = !p.mask.full() ? tile_counter.data_ptr<int>() : nullptr;
  p.q = qx.data_ptr();
  p.k = kx.data_ptr();
  p.v = vx.data_ptr();
  p.out = out.data_ptr();
  p.softmax_lse = lse.data_ptr<float>();
  get_strides(qx, p.q_batch_stride, p.q_row_stride, p.q_head_stride);
  get_strides(kx, p.k_batch_stride, p.k_row_stride, p.k_head_stride);
  get_strides(vx, p.v_batch_stride, p.v_row_stride, p.v_head_stride);
  get_strides(out, p.out_batch_stride, p.out_row_stride, p.out_head_stride);
  p.device = q.get_device();
  with_torch_errors([&] { run_attn_fwd(p, dtype_of(q), c10::cuda::getCurrentCUDAStream().stream()); });
  return {out, lse};
}

namespace {

std::tuple<at::Tensor, at::Tensor> attn_fwd_cuda(at::Tensor const& q, at::Tensor const& k, at::Tensor const& v,
                                                 double softmax_scale, bool causal, bool deterministic,
                                                 int64_t sm_margin, c10::string_view schedule, int64_t window_left,
                                                 int64_t window_right, double softcap) {
  (void)deterministic;
  check_schedule_name(schedule);
  BwdShape const s = check_fwd_args(q, k, v, softmax_scale, sm_margin);
  MaskWindow const mask = check_mask_args(kOp, causal, window_left, window_right, softcap, s.seqlen_q, s.seqlen_k);
  check_cuda_and_hopper(q, {&k, &v}, kOp);
  AttnFwdParams p{};
  p.geo = fixed_seq_geometry(int(s.batch), int(s.heads), int(s.heads_kv), int(s.seqlen_q), int(s.seqlen_k),
                             fwd_tile_shape(int(s.head_dim), int(s.head_dim_v)).block_m);
  p.head_dim = int(s.head_dim);
  p.head_dim_v = int(s.head_dim_v);
  p.softmax_scale = float(softmax_scale);
  p.mask = mask;
  p.softcap = float(softcap);
  p.sm_margin = int(sm_margin);
  return run_fwd_call(p, q, k, v, {s.batch, s.heads, s.seqlen_q}, false);
}

// Registered for CPU (and anything that is not CUDA): the same argument checks, then a
// clear "needs CUDA tensors" error.
std::tuple<at::Tensor, at::Tensor> attn_fwd_not_cuda(at::Tensor const& q, at::Tensor const& k,
                                                     at::Tensor const& v, double softmax_scale, bool causal,
                                                     bool deterministic, int64_t sm_margin,
                                                     c10::string_view schedule, int64_t window_left,
                                                     int64_t window_right, double softcap) {
  check_schedule_name(schedule);
  BwdShape const s = check_fwd_args(q, k, v, softmax_scale, sm_margin);
  check_mask_args(kOp, causal, window_left, window_right, softcap, s.seqlen_q, s.seqlen_k);
  check_cuda_and_hopper(q, {&k, &v}, kOp);
  TORCH_CHECK(false, "dash.attn_fwd: unreachable");  // check_cuda_and_hopper threw
}

}  // namespace
}  // namespace dash

TORCH_LIBRARY_FRAGMENT(dash, m) {
  m.def(
      "attn_fwd(Tensor q, Tensor k, Tensor v, float softmax_scale, bool causal, bool deterministic=False, "
      "int sm_margin=0, str schedule=\"auto\", int window_left=-1, int window_right=-1, float softcap=0.0) -> "
      "(Tensor out, Tensor softmax_lse)");
}

TORCH_LIBRARY_IMPL(dash, CUDA, m) { m.impl("attn_fwd", &dash::attn_fwd_cuda); }
TORCH_LIBRARY_IMPL(dash, CPU, m) { m.impl("attn_fwd", &dash::attn_fwd_not_cuda); }
