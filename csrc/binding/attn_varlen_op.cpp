// torch bindings of packed (variable-length) batches: torch.ops.dash.attn_varlen_fwd,
// attn_varlen_bwd and attn_varlen_bwd_plan, FlashAttention-3's varlen layout: q
// (total_q, heads, d), k / v (total_k, heads_kv, d), cu_seqlens int32 (batch + 1) on the
// device, softmax_lse (heads, total_q). The call's geometry is packed_seq_geometry(); the
// kernels are the fixed-length ones.
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>
#include <torch/types.h>

#include "../attn_bwd_params.h"
#include "../attn_fwd_params.h"
#include "../launch/bwd_registry.h"
#include "bwd_call.h"
#include "op_checks.h"
#include "op_utils.h"

namespace dash {
namespace {

using OptTensor = std::optional<at::Tensor>;

int const* data_or_null(OptTensor const& t) { return t.has_value() ? t->data_ptr<int>() : nullptr; }

SeqGeometry varlen_geometry(VarlenShape const& s, at::Tensor const& cu_seqlens_q, at::Tensor const& cu_seqlens_k,
                            OptTensor const& seqused_q, OptTensor const& seqused_k, int stats_block) {
  return packed_seq_geometry(int(s.batch), int(s.heads), int(s.heads_kv), int(s.max_seqlen_q), int(s.max_seqlen_k),
                             int(s.total_q), int(s.total_k), cu_seqlens_q.data_ptr<int>(),
                             cu_seqlens_k.data_ptr<int>(), data_or_null(seqused_q), data_or_null(seqused_k),
                             stats_block);
}

// Nothing to compute: no query rows, or no key rows (every query sees no key: out 0, LSE
// -inf, zero gradients). (max_seqlen 0 with rows present is invalid input: the prepare
// kernel reports it.)
bool empty_call(VarlenShape const& s) { return s.total_q == 0 || s.total_k == 0; }

std::tuple<at::Tensor, at::Tensor> attn_varlen_fwd_cuda(at::Tensor const& q, at::Tensor const& k,
                                                        at::Tensor const& v, at::Tensor const& cu_seqlens_q,
                                                        at::Tensor const& cu_seqlens_k, OptTensor const& seqused_q,
                                                        OptTensor const& seqused_k, int64_t max_seqlen_q,
                                                        int64_t max_seqlen_k, double softmax_scale, bool causal,
                                                        bool deterministic, int64_t sm_margin,
                                                        c10::string_view schedule, int64_t window_left,
                                                        int64_t window_right, double softcap) {
  char const* op = "dash.attn_varlen_fwd";
  (void)deterministic;
  parse_schedule_arg(schedule);
  VarlenShape const s = check_varlen_qkv_args(op, q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                                              max_seqlen_q, max_seqlen_k, softmax_scale, sm_margin);
  MaskWindow const mask =
      check_mask_args(op, causal, window_left, window_right, softcap, s.max_seqlen_q, s.max_seqlen_k);
  TORCH_CHECK_VALUE(softmax_scale > 0, op, ": softmax_scale must be > 0; got ", softmax_scale);
  check_cuda_and_hopper(q, {&k, &v, &cu_seqlens_q, &cu_seqlens_k}, op);
  if (empty_call(s)) {
    return {at::zeros({s.total_q, s.heads, s.head_dim_v}, q.options()),
            at::full({s.heads, s.total_q}, -std::numeric_limits<float>::infinity(), q.options().dtype(at::kFloat))};
  }
  at::Tensor const cu_q = cu_seqlens_q.contiguous(), cu_k = cu_seqlens_k.contiguous();
  AttnFwdParams p{};
  p.head_dim = int(s.head_dim);
  p.head_dim_v = int(s.head_dim_v);
  p.geo = varlen_geometry(s, cu_q, cu_k, seqused_q, seqused_k, fwd_tile_shape(p.head_dim, p.head_dim_v).block_m);
  p.softmax_scale = float(softmax_scale);
  p.mask = mask;
  p.softcap = float(softcap);
  p.sm_margin = int(sm_margin);
  bool const partial_rows = seqused_q.has_value() || seqused_k.has_value();
  return run_fwd_call(p, q, k, v, {s.heads, s.total_q}, partial_rows);
}

AttnBwdParams describe_varlen_bwd(VarlenShape const& s, at::Tensor const& cu_q, at::Tensor const& cu_k,
                                  OptTensor const& seqused_q, OptTensor const& seqused_k, MaskWindow mask,
                                  double softcap, bool deterministic, c10::string_view schedule, int64_t sm_margin,
                                  int device) {
  AttnBwdParams p{};
  p.test_tail_cap = -1;  // packed calls have no tail (schedule.h tail_items); the rule, as fixed-length calls
  p.head_dim = int(s.head_dim);
  p.head_dim_v = int(s.head_dim_v);
  p.softcap = float(softcap);  // softcap has its own kernels (their tile and occupancy)
  TileShape const tile = bwd_tile_of(p);
  p.geo = varlen_geometry(s, cu_q, cu_k, seqused_q, seqused_k, tile.block_m);
  p.num_m_blocks = ceil_div(int(s.max_seqlen_q), tile.block_m);
  p.num_n_blocks = ceil_div(int(s.max_seqlen_k), tile.block_n);
  p.mask = mask;
  p.deterministic = deterministic || bwd_orders_both_modes(p.head_dim, p.head_dim_v);  // both modes add in order there
  p.schedule = parse_schedule_arg(schedule);
  p.sm_margin = int(sm_margin);
  p.device = device;
  return p;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attn_varlen_bwd_cuda(
    at::Tensor const& dout, at::Tensor const& q, at::Tensor const& k, at::Tensor const& v, at::Tensor const& out,
    at::Tensor const& softmax_lse, at::Tensor const& cu_seqlens_q, at::Tensor const& cu_seqlens_k,
    OptTensor const& seqused_q, OptTensor const& seqused_k, int64_t max_seqlen_q, int64_t max_seqlen_k,
    double softmax_scale, bool causal, bool deterministic, int64_t sm_margin, c10::string_view schedule,
    OptTensor const& dq_trace, OptTensor const& dq_trace_count, int64_t window_left, int64_t window_right,
    double softcap) {
  char const* op = "dash.attn_varlen_bwd";
  VarlenShape const s = check_varlen_qkv_args(op, q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                                              max_seqlen_q, max_seqlen_k, softmax_scale, sm_margin);
  MaskWindow const mask =
      check_mask_args(op, causal, window_left, window_right, softcap, s.max_seqlen_q, s.max_seqlen_k);
  check_bwd_head_dim(s.head_dim, s.head_dim_v, op);
  std::vector<int64_t> const out_shape{s.total_q, s.heads, s.head_dim_v};
  for (NamedTensor n : {NamedTensor{&dout, "dout"}, NamedTensor{&out, "out"}}) {
    TORCH_CHECK_VALUE(n.t->sizes() == out_shape, op, ": ", n.name, " must have shape (total_q, heads, head_dim_v) = ",
                      c10::str(out_shape), "; got ", sizes_str(*n.t));
    TORCH_CHECK_TYPE(n.t->scalar_type() == q.scalar_type(), op, ": ", n.name, " has dtype ", n.t->scalar_type(),
                     " but q has ", q.scalar_type());
    TORCH_CHECK_VALUE(n.t->stride(2) == 1, op, ": ", n.name, " must be contiguous in its last dim");
  }
  TORCH_CHECK_TYPE(softmax_lse.scalar_type() == at::kFloat, op, ": softmax_lse must be float32; got ",
                   softmax_lse.scalar_type());
  TORCH_CHECK_VALUE(softmax_lse.dim() == 2 && softmax_lse.size(0) == s.heads && softmax_lse.size(1) == s.total_q,
                    op, ": softmax_lse must have shape (heads, total_q) = (", s.heads, ", ", s.total_q, "); got ",
                    sizes_str(softmax_lse));
  check_cuda_and_hopper(q, {&dout, &k, &v, &out, &softmax_lse, &cu_seqlens_q, &cu_seqlens_k}, op);
  if (empty_call(s)) {
    return {at::zeros_like(q, at::MemoryFormat::Contiguous), at::zeros_like(k, at::MemoryFormat::Contiguous),
            at::zeros_like(v, at::MemoryFormat::Contiguous)};
  }
  at::Tensor const cu_q = cu_seqlens_q.contiguous(), cu_k = cu_seqlens_k.contiguous();
  AttnBwdParams p = describe_varlen_bwd(s, cu_q, cu_k, seqused_q, seqused_k, mask, softcap, deterministic,
                                        schedule, sm_margin, q.get_device());
  bool const partial_rows = seqused_q.has_value() || seqused_k.has_value();
  return run_bwd_call(p, dout, q, k, v, out, softmax_lse, softmax_scale, dq_trace, dq_trace_count, partial_rows);
}

// What attn_varlen_bwd would run, without running it (same format as attn_bwd_plan).
std::string attn_varlen_bwd_plan(at::Tensor const& q, at::Tensor const& k, at::Tensor const& cu_seqlens_q,
                                 at::Tensor const& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k,
                                 bool causal, bool deterministic, c10::string_view schedule, int64_t sm_margin,
                                 int64_t window_left, int64_t window_right, double softcap, int64_t head_dim_v) {
  char const* op = "dash.attn_varlen_bwd_plan";
  // The plan takes no v (v = k below); v's head dim, which picks the kernel, comes as an
  // argument (< 0: k's).
  VarlenShape s = check_varlen_qkv_args(op, q, k, k, cu_seqlens_q, cu_seqlens_k, std::nullopt, std::nullopt,
                                        max_seqlen_q, max_seqlen_k, 1.0, sm_margin);
  if (head_dim_v >= 0) { s.head_dim_v = head_dim_v; }
  check_bwd_head_dim(s.head_dim, s.head_dim_v, op);
  MaskWindow const mask =
      check_mask_args(op, causal, window_left, window_right, softcap, s.max_seqlen_q, s.max_seqlen_k);
  check_cuda_and_hopper(q, {&k, &cu_seqlens_q, &cu_seqlens_k}, op);
  AttnBwdParams p = describe_varlen_bwd(s, cu_seqlens_q, cu_seqlens_k, std::nullopt, std::nullopt, mask, softcap,
                                        deterministic, schedule, sm_margin, q.get_device());
  return with_torch_errors([&] {
    BwdPlan const plan = plan_attn_bwd_for(p, dtype_of(q));
    return describe_plan(plan);
  });
}

// CPU (and anything not CUDA): the same checks, then a clear "needs CUDA tensors" error.
std::tuple<at::Tensor, at::Tensor> attn_varlen_fwd_not_cuda(
    at::Tensor const& q, at::Tensor const& k, at::Tensor const& v, at::Tensor const& cu_seqlens_q,
    at::Tensor const& cu_seqlens_k, OptTensor const& seqused_q, OptTensor const& seqused_k, int64_t max_seqlen_q,
    int64_t max_seqlen_k, double softmax_scale, bool causal, bool deterministic, int64_t sm_margin,
    c10::string_view schedule, int64_t window_left, int64_t window_right, double softcap) {
  parse_schedule_arg(schedule);
  check_varlen_qkv_args("dash.attn_varlen_fwd", q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                        max_seqlen_q, max_seqlen_k, softmax_scale, sm_margin);
  check_mask_args("dash.attn_varlen_fwd", causal, window_left, window_right, softcap, max_seqlen_q, max_seqlen_k);
  check_cuda_and_hopper(q, {&k, &v}, "dash.attn_varlen_fwd");
  TORCH_CHECK(false, "dash.attn_varlen_fwd: unreachable");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attn_varlen_bwd_not_cuda(
    at::Tensor const& dout, at::Tensor const& q, at::Tensor const& k, at::Tensor const& v, at::Tensor const& out,
    at::Tensor const& softmax_lse, at::Tensor const& cu_seqlens_q, at::Tensor const& cu_seqlens_k,
    OptTensor const& seqused_q, OptTensor const& seqused_k, int64_t max_seqlen_q, int64_t max_seqlen_k,
    double softmax_scale, bool causal, bool deterministic, int64_t sm_margin, c10::string_view schedule,
    OptTensor const& dq_trace, OptTensor const& dq_trace_count, int64_t window_left, int64_t window_right,
    double softcap) {
  parse_schedule_arg(schedule);
  VarlenShape const s = check_varlen_qkv_args("dash.attn_varlen_bwd", q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q,
                                              seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale, sm_margin);
  check_bwd_head_dim(s.head_dim, s.head_dim_v, "dash.attn_varlen_bwd");
  check_mask_args("dash.attn_varlen_bwd", causal, window_left, window_right, softcap, max_seqlen_q, max_seqlen_k);
  check_cuda_and_hopper(q, {&dout, &k, &v, &out, &softmax_lse}, "dash.attn_varlen_bwd");
  TORCH_CHECK(false, "dash.attn_varlen_bwd: unreachable");
}

}  // namespace
}  // namespace dash

TORCH_LIBRARY_FRAGMENT(dash, m) {
  m.def(
      "attn_varlen_fwd(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k, Tensor? seqused_q, "
      "Tensor? seqused_k, int max_seqlen_q, int max_seqlen_k, float softmax_scale, bool causal, "
      "bool deterministic=False, int sm_margin=0, str schedule=\"auto\", int window_left=-1, int window_right=-1, "
      "float softcap=0.0) -> (Tensor out, Tensor softmax_lse)");
  m.def(
      "attn_varlen_bwd(Tensor dout, Tensor q, Tensor k, Tensor v, Tensor out, Tensor softmax_lse, "
      "Tensor cu_seqlens_q, Tensor cu_seqlens_k, Tensor? seqused_q, Tensor? seqused_k, int max_seqlen_q, "
      "int max_seqlen_k, float softmax_scale, bool causal, bool deterministic, int sm_margin=0, "
      "str schedule=\"auto\", Tensor(a!)? dq_trace=None, Tensor(b!)? dq_trace_count=None, int window_left=-1, "
      "int window_right=-1, float softcap=0.0) -> (Tensor, Tensor, Tensor)");
  m.def(
      "attn_varlen_bwd_plan(Tensor q, Tensor k, Tensor cu_seqlens_q, Tensor cu_seqlens_k, int max_seqlen_q, "
      "int max_seqlen_k, bool causal, bool deterministic, str schedule=\"auto\", int sm_margin=0, "
      "int window_left=-1, int window_right=-1, float softcap=0.0, int head_dim_v=-1) -> str");
}

TORCH_LIBRARY_IMPL(dash, CUDA, m) {
  m.impl("attn_varlen_fwd", &dash::attn_varlen_fwd_cuda);
  m.impl("attn_varlen_bwd", &dash::attn_varlen_bwd_cuda);
  m.impl("attn_varlen_bwd_plan", &dash::attn_varlen_bwd_plan);
}
TORCH_LIBRARY_IMPL(dash, CPU, m) {
  m.impl("attn_varlen_fwd", &dash::attn_varlen_fwd_not_cuda);
  m.impl("attn_varlen_bwd", &dash::attn_varlen_bwd_not_cuda);
  m.impl("attn_varlen_bwd_plan", &dash::attn_varlen_bwd_plan);
}
