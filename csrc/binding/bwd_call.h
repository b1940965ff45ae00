// What the backward bindings (attn_bwd, attn_varlen_bwd) share: outputs, workspaces,
// pointers and strides for a described call, then the launch.
#pragma once

#include <optional>
#include <tuple>

#include <torch/types.h>

#include "../attn_bwd_params.h"
#include "../attn_fwd_params.h"

namespace dash {

// p: geometry, head_dim, tile counts, flags and schedule filled in; the rest is filled here.
// zero_outputs: rows the kernels do not own (packed rows past seqused) read as zeros.
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_bwd_call(
    AttnBwdParams& p, at::Tensor const& dout, at::Tensor const& q, at::Tensor const& k, at::Tensor const& v,
    at::Tensor const& out, at::Tensor const& softmax_lse, double softmax_scale,
    std::optional<at::Tensor> const& dq_trace, std::optional<at::Tensor> const& dq_trace_count, bool zero_outputs);

// The forward's counterpart: allocates out and softmax_lse (shaped as lse_shape), runs.
// zero_outputs: out 0 and LSE -inf on rows the kernels do not own.
std::tuple<at::Tensor, at::Tensor> run_fwd_call(AttnFwdParams& p, at::Tensor const& q, at::Tensor const& k,
                                                at::Tensor const& v, at::IntArrayRef lse_shape, bool zero_outputs);

BwdSchedule parse_schedule_arg(c10::string_view name);

}  // namespace dash
