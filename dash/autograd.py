"""Autograd formulas of torch.ops.dash.attn_fwd and attn_varlen_fwd: their backwards are
torch.ops.dash.attn_bwd and attn_varlen_bwd.

Registered with torch.library.register_autograd, so eager autograd, make_fx and
torch.compile (AOTAutograd) all see the same formula, with both ops in the graphs.

The forward's `deterministic`, `sm_margin` and `schedule` arguments do not change the
forward; they are saved here and handed to attn_bwd, which is how a caller chooses the
ordered (bitwise reproducible) backward through out.backward().

softmax_lse is returned without a gradient: it is marked non-differentiable, so autograd
never asks for d(loss)/d(lse) and a loss that reaches q, k, v only through lse raises
"does not require grad". FlashAttention-3 likewise drops the LSE gradient (its backward
ignores it); a caller that needs it (e.g. to merge partial attentions) must write its
own backward.
"""
from __future__ import annotations

import torch


def _setup_context(ctx, inputs, output):
    q, k, v, softmax_scale, causal, deterministic, sm_margin, schedule, window_left, window_right, softcap = inputs
    out, softmax_lse = output
    ctx.mark_non_differentiable(softmax_lse)
    ctx.save_for_backward(q, k, v, out, softmax_lse)
    ctx.softmax_scale = softmax_scale
    ctx.causal = causal
    ctx.deterministic = deterministic
    ctx.sm_margin = sm_margin
    ctx.schedule = schedule
    ctx.mask = (window_left, window_right, softcap)


def _usable_grad(dout: torch.Tensor) -> torch.Tensor:
    """attn_bwd needs a unit stride in the last dim; gradients of reductions such as
    out.sum() arrive as expanded tensors with all strides 0, so copy those."""
    if dout.stride(-1) != 1 or 0 in dout.stride():
        return dout.contiguous()
    return dout


def _backward(ctx, dout, _dlse):
    # _dlse: softmax_lse is non-differentiable (see the module docstring); ignored.
    q, k, v, out, softmax_lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.dash.attn_bwd(_usable_grad(dout), q, k, v, out, softmax_lse, ctx.softmax_scale,
                                         ctx.causal, ctx.deterministic, ctx.sm_margin, ctx.schedule, None, None,
                                         *ctx.mask)
    # One gradient per forward input: q, k, v, then softmax_scale .. softcap (not differentiable).
    return (dq, dk, dv) + (None,) * 8


torch.library.register_autograd("dash::attn_fwd", _backward, setup_context=_setup_context)


def _setup_varlen_context(ctx, inputs, output):
    (q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
     deterministic, sm_margin, schedule, window_left, window_right, softcap) = inputs
    out, softmax_lse = output
    ctx.mark_non_differentiable(softmax_lse)
    ctx.save_for_backward(q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k)
    ctx.args = (max_seqlen_q, max_seqlen_k, softmax_scale, causal, deterministic, sm_margin, schedule)
    ctx.mask = (window_left, window_right, softcap)


def _varlen_backward(ctx, dout, _dlse):
    q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k = ctx.saved_tensors
    max_seqlen_q, max_seqlen_k, softmax_scale, causal, deterministic, sm_margin, schedule = ctx.args
    dq, dk, dv = torch.ops.dash.attn_varlen_bwd(
        _usable_grad(dout), q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
        max_seqlen_q, max_seqlen_k, softmax_scale, causal, deterministic, sm_margin, schedule, None, None,
        *ctx.mask)
    # One gradient per forward input (q, k, v; the rest are not differentiable).
    return (dq, dk, dv) + (None,) * 14


torch.library.register_autograd("dash::attn_varlen_fwd", _varlen_backward, setup_context=_setup_varlen_context)
