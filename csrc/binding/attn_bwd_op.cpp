// torch binding of the backward pass: torch.ops.dash.attn_bwd.
// Validates the tensors (clear errors, never a crash), allocates the outputs and the
// zeroed workspaces, fills AttnBwdParams and launches on the current stream.
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>
#include <torch/types.h>

#include "../attn_bwd_params.h"
#include "../kernels/bwd/schedule.h"
#include "../launch/bwd_registry.h"
#include "bwd_call.h"
#include "op_checks.h"
#include "op_utils.h"

namespace dash {

BwdSchedule parse_schedule_arg(c10::string_view name) {
  try {
    return parse_schedule(std::string(name));
  } catch (std::invalid_argument const& e) {
    TORCH_CHECK_VALUE(false, e.what());
  }
}

namespace {

// The task counter words (attn_bwd_params.h task_counter: drawn, CTAs started, how diagonal's
// tail was dealt) of the last counter-dealt backward call run with DASH_TEST_KEEP_TASK_COUNTER=1,
// for tests that must see which dealing ran (torch.ops.dash._last_bwd_task_counter).
at::Tensor& kept_task_counter() {
  static at::Tensor* const kept = new at::Tensor();  // never destroyed: no CUDA free at exit
  return *kept;
}

// Positive integer from the environment, or the fallback.
int64_t env_int(char const* name, int64_t fallback) {
  char const* value = std::getenv(name);
  if (value == nullptr || *value == '\0') { return fallback; }
  return std::strtoll(value, nullptr, 10);
}

// Sizes, tile counts and flags of a call (what planning needs); attn_bwd adds pointers.
AttnBwdParams describe_call(BwdShape const& shape, MaskWindow mask, double softcap, bool deterministic,
                            c10::string_view schedule, int64_t sm_margin, int device) {
  AttnBwdParams p{};
  p.test_tail_cap = -1;  // diagonal's tail as schedule.h's rule has it
  p.head_dim = int(shape.head_dim);
  p.head_dim_v = int(shape.head_dim_v);
  p.softcap = float(softcap);  // softcap has its own kernels (their tile and occupancy)
  TileShape const tile = bwd_tile_of(p);
  p.geo = fixed_seq_geometry(int(shape.batch), int(shape.heads), int(shape.heads_kv), int(shape.seqlen_q),
                             int(shape.seqlen_k), tile.block_m);
  p.num_m_blocks = ceil_div(p.geo.seqlen_q, tile.block_m);
  p.num_n_blocks = ceil_div(p.geo.seqlen_k, tile.block_n);
  p.mask = mask;
  p.deterministic = deterministic || bwd_orders_both_modes(p.head_dim, p.head_dim_v);  // both modes add in order there
  p.schedule = parse_schedule_arg(schedule);
  p.sm_margin = int(sm_margin);
  p.device = device;
  return p;
}

}  // namespace

// Allocates the outputs and workspaces for the call p describes (geometry, flags), fills
// the pointers and strides and runs it. Shared by attn_bwd and attn_varlen_bwd.
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_bwd_call(
    AttnBwdParams& p, at::Tensor const& dout, at::Tensor const& q, at::Tensor const& k, at::Tensor const& v,
    at::Tensor const& out, at::Tensor const& softmax_lse, double softmax_scale,
    std::optional<at::Tensor> const& dq_trace, std::optional<at::Tensor> const& dq_trace_count,
    bool zero_outputs) {
  c10::cuda::CUDAGuard device_guard(q.device());
  at::Tensor const qx = tma_compatible(q);
  at::Tensor const kx = tma_compatible(k);
  at::Tensor const vx = tma_compatible(v);
  at::Tensor const dox = tma_compatible(dout);
  at::Tensor const ox = tma_compatible(out);  // preprocess reads it with 16-byte loads
  at::Tensor const lse = softmax_lse.contiguous();

  // Rows the kernels do not own (packed rows past seqused) must read as zero gradients.
  auto make_output = [&](at::Tensor const& like) {
    return zero_outputs ? at::zeros_like(like, at::MemoryFormat::Contiguous)
                        : at::empty_like(like, at::MemoryFormat::Contiguous);
  };
  at::Tensor dq = make_output(q);
  at::Tensor dk = make_output(k);
  at::Tensor dv = make_output(v);

  int64_t const num_dq_tiles = p.geo.num_dq_tiles();
  int64_t const stats_total = num_dq_tiles * p.geo.stats_block;  // workspace rows over all heads
  auto const f32 = q.options().dtype(at::kFloat);
  auto const i32 = q.options().dtype(at::kInt);
  // The row statistics are written in full by the preprocess kernel, and dq_accum too when the
  // adds are unordered; in deterministic mode each tile's rank-0 partial is stored instead
  // (bwd/dq_writer.h) and the postprocess writes the tiles without adds as zeros.
  at::Tensor dq_accum = at::empty({stats_total * p.head_dim}, f32);
  at::Tensor lse_log2 = at::empty({stats_total}, f32);
  at::Tensor dpsum = at::empty({stats_total}, f32);
  BwdPlan const plan = with_torch_errors([&] { return plan_attn_bwd_for(p, dtype_of(q)); });
  // A counter-dealt schedule's task counter (and its two tail words, attn_bwd_params.h) ride
  // at the end of the semaphores (one zeroing).
  int64_t const counter = counter_dealt_schedule(plan.schedule, p.geo.packed()) ? 3 : 0;
  int64_t const semaphores = p.deterministic ? num_dq_tiles : 0;
  at::Tensor semaphore = semaphores + counter > 0 ? at::zeros({semaphores + counter}, i32) : at::Tensor();
  // Split query-head groups leave each part's dK / dV partial in an fp32 workspace (written
  // in full by the main kernel: every part of every KV tile stores its slot).
  int const block_n = bwd_tile_of(p).block_n;
  int const kv_parts = plan.kv_parts;
  at::Tensor dkv_accum;
  if (kv_parts > 1) {
    dkv_accum = at::empty({p.geo.heads_kv * p.geo.kv_tiles_per_head(block_n) * kv_parts * block_n * (p.head_dim + p.head_dim_v)},
                          f32);
  }
  at::Tensor varlen_table;
  if (p.geo.packed()) {
    varlen_table = at::empty({VarlenTiles::table_size(p.num_n_blocks, p.geo.batch)}, i32);
    // run_attn_bwd picks the numbering for the planned schedule (bwd_varlen_order).
    p.varlen_tiles = VarlenTiles{varlen_table.data_ptr<int>(), p.num_n_blocks, p.geo.batch, p.geo.heads_kv, false,
                                 VarlenOrder::kSequenceMajor};
  }
  p.task_counter = counter ? semaphore.data_ptr<int>() + semaphores : nullptr;
  if (dq_trace.has_value() != dq_trace_count.has_value()) {
    throw std::invalid_argument("dash.attn_bwd: dq_trace and dq_trace_count go together");
  }
  if (dq_trace.has_value()) {
    check_trace_buffers(*dq_trace, *dq_trace_count, q, num_dq_tiles, p.num_n_blocks);
    dq_trace->zero_();
    dq_trace_count->zero_();
  }

  p.q = qx.data_ptr();
  p.k = kx.data_ptr();
  p.v = vx.data_ptr();
  p.out = ox.data_ptr();
  p.dout = dox.data_ptr();
  p.lse = lse.data_ptr<float>();
  get_strides(qx, p.q_batch_stride, p.q_row_stride, p.q_head_stride);
  get_strides(kx, p.k_batch_stride, p.k_row_stride, p.k_head_stride);
  get_strides(vx, p.v_batch_stride, p.v_row_stride, p.v_head_stride);
  get_strides(ox, p.out_batch_stride, p.out_row_stride, p.out_head_stride);
  get_strides(dox, p.dout_batch_stride, p.dout_row_stride, p.dout_head_stride);
  p.dq = dq.data_ptr();
  p.dk = dk.data_ptr();
  p.dv = dv.data_ptr();
  get_strides(dq, p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride);
  get_strides(dk, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride);
  get_strides(dv, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride);
  p.dq_accum = dq_accum.data_ptr<float>();
  p.lse_log2 = lse_log2.data_ptr<float>();
  p.dpsum = dpsum.data_ptr<float>();
  p.dq_semaphore = p.deterministic ? semaphore.data_ptr<int>() : nullptr;
  p.dkv_accum = dkv_accum.defined() ? dkv_accum.data_ptr<float>() : nullptr;
  p.dq_trace = dq_trace.has_value() ? dq_trace->data_ptr<int>() : nullptr;
  p.dq_trace_count = dq_trace_count.has_value() ? dq_trace_count->data_ptr<int>() : nullptr;
  // A semaphore wait that lasts 30 s is a bug, not contention: trap instead of hanging.
  p.watchdog_ns = uint64_t(env_int("DASH_WATCHDOG_MS", 30000)) * 1000000ull;
  p.test_do_lag_ns = uint64_t(env_int("DASH_TEST_DO_LAG_NS", 0));
  p.test_tail_cap = env_int("DASH_TEST_ITEM_ORDER_TAIL", 0) != 0 ? 0 : env_int("DASH_TEST_TAIL_ITEMS", -1);
  p.softmax_scale = float(softmax_scale);
  with_torch_errors([&] { run_attn_bwd(p, dtype_of(q), c10::cuda::getCurrentCUDAStream().stream()); });
  if (counter > 0 && env_int("DASH_TEST_KEEP_TASK_COUNTER", 0) != 0) {
    kept_task_counter() = semaphore.narrow(0, semaphores, counter).clone();
  }
  return {dq, dk, dv};
}

namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> attn_bwd_cuda(
    at::Tensor const& dout, at::Tensor const& q, at::Tensor const& k, at::Tensor const& v,
    at::Tensor const& out, at::Tensor const& softmax_lse, double softmax_scale, bool causal,
    bool deterministic, int64_t sm_margin, c10::string_view schedule,
    std::optional<at::Tensor> const& dq_trace, std::optional<at::Tensor> const& dq_trace_count, int64_t window_left,
    int64_t window_right, double softcap) {
  BwdShape const shape = check_attn_bwd_args(dout, q, k, v, out, softmax_lse, softmax_scale, sm_margin);
  MaskWindow const mask =
      check_mask_args("dash.attn_bwd", causal, window_left, window_right, softcap, shape.seqlen_q, shape.seqlen_k);
  check_cuda_and_hopper(q, {&dout, &k, &v, &out, &softmax_lse});
  AttnBwdParams p = describe_call(shape, mask, softcap, deterministic, schedule, sm_margin, q.get_device());
  return run_bwd_call(p, dout, q, k, v, out, softmax_lse, softmax_scale, dq_trace, dq_trace_count, false);
}

// Registered for CPU (and anything that is not CUDA) so that a wrong-device call gets
// the same argument checks and then a clear "needs CUDA tensors" error.
std::tuple<at::Tensor, at::Tensor, at::Tensor> attn_bwd_not_cuda(
    at::Tensor const& dout, at::Tensor const& q, at::Tensor const& k, at::Tensor const& v,
    at::Tensor const& out, at::Tensor const& softmax_lse, double softmax_scale, bool causal,
    bool deterministic, int64_t sm_margin, c10::string_view schedule,
    std::optional<at::Tensor> const& dq_trace, std::optional<at::Tensor> const& dq_trace_count, int64_t window_left,
    int64_t window_right, double softcap) {
  parse_schedule_arg(schedule);
  BwdShape const shape = check_attn_bwd_args(dout, q, k, v, out, softmax_lse, softmax_scale, sm_margin);
  check_mask_args("dash.attn_bwd", causal, window_left, window_right, softcap, shape.seqlen_q, shape.seqlen_k);
  check_cuda_and_hopper(q, {&dout, &k, &v, &out, &softmax_lse});
  TORCH_CHECK(false, "dash.attn_bwd: unreachable");  // check_cuda_and_hopper threw
}

// What attn_bwd would run for these inputs, without running it:
// describe_plan()'s "schedule=<name>;grid=<ctas>;sm_count=<n>;kv_parts=<p>;reason=<text>".
std::string attn_bwd_plan(at::Tensor const& q, at::Tensor const& k, bool causal, bool deterministic,
                          c10::string_view schedule, int64_t sm_margin, int64_t window_left, int64_t window_right,
                          double softcap, int64_t head_dim_v) {
  TORCH_CHECK_VALUE(q.dim() == 4 && k.dim() == 4, "dash.attn_bwd_plan: q and k must be 4-D");
  check_dtype_16bit(q, "q", "dash.attn_bwd_plan");
  TORCH_CHECK_VALUE(sm_margin >= 0, "dash.attn_bwd_plan: sm_margin must be >= 0");
  // v's head dim picks the kernel (head_dim_v < 0: k's).
  BwdShape const shape{q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), q.size(3),
                       head_dim_v < 0 ? k.size(3) : head_dim_v};
  check_bwd_head_dim(shape.head_dim, shape.head_dim_v, "dash.attn_bwd_plan");
  check_cuda_and_hopper(q, {&k}, "dash.attn_bwd_plan");
  check_head_counts(shape.heads, shape.heads_kv, "dash.attn_bwd_plan");
  MaskWindow const mask = check_mask_args("dash.attn_bwd_plan", causal, window_left, window_right, softcap,
                                          shape.seqlen_q, shape.seqlen_k);
  AttnBwdParams p = describe_call(shape, mask, softcap, deterministic, schedule, sm_margin, q.get_device());
  return with_torch_errors([&] {
    BwdPlan const plan = plan_attn_bwd_for(p, dtype_of(q));
    return describe_plan(plan);
  });
}

// A copy of kept_task_counter() (empty before any such call).
at::Tensor last_bwd_task_counter() {
  at::Tensor const& kept = kept_task_counter();
  return kept.defined() ? kept.clone() : at::empty({0}, at::dtype(at::kInt));
}

}  // namespace
}  // namespace dash

TORCH_LIBRARY(dash, m) {
  m.def(
      "attn_bwd(Tensor dout, Tensor q, Tensor k, Tensor v, Tensor out, Tensor softmax_lse, "
      "float softmax_scale, bool causal, bool deterministic, int sm_margin=0, str schedule=\"auto\", "
      "Tensor(a!)? dq_trace=None, Tensor(b!)? dq_trace_count=None, int window_left=-1, int window_right=-1, "
      "float softcap=0.0) -> (Tensor, Tensor, Tensor)");
  m.def("attn_bwd_plan(Tensor q, Tensor k, bool causal, bool deterministic, str schedule=\"auto\", "
        "int sm_margin=0, int window_left=-1, int window_right=-1, float softcap=0.0, int head_dim_v=-1) -> str");
  m.def("_last_bwd_task_counter() -> Tensor");  // tests only: see kept_task_counter
}

TORCH_LIBRARY_IMPL(dash, CompositeExplicitAutograd, m) { m.impl("_last_bwd_task_counter", &dash::last_bwd_task_counter); }

TORCH_LIBRARY_IMPL(dash, CUDA, m) {
  m.impl("attn_bwd", &dash::attn_bwd_cuda);
  m.impl("attn_bwd_plan", &dash::attn_bwd_plan);
}
TORCH_LIBRARY_IMPL(dash, CPU, m) {
  m.impl("attn_bwd", &dash::attn_bwd_not_cuda);
  m.impl("attn_bwd_plan", &dash::attn_bwd_plan);
}
