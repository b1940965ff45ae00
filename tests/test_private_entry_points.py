"""CPU: FlashAttention-3's private entry points (_flash_attn_forward / _flash_attn_backward),
which TransformerEngine, Megatron and ring-attention libraries call positionally, through
stand-in kernels: positional calls, return values, buffers filled in place, the causal
window and sliding windows (window_size_left / window_size_right), softcap, varlen, and
NotImplementedError for the inference-only arguments."""
import itertools

import pytest
import torch

from conftest import requires_library
from op_test_doubles import reference_kernels
from dash import flash_attn_interface as fai
from dash import reference

pytestmark = requires_library


def _qkv(shape_q=(2, 37, 4, 64), heads_kv=2, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(shape_q, generator=gen, dtype=torch.bfloat16)
    shape_k = (*shape_q[:-2], heads_kv, shape_q[-1])
    return q, torch.randn(shape_k, generator=gen, dtype=torch.bfloat16), \
        torch.randn(shape_k, generator=gen, dtype=torch.bfloat16)


def test_forward_positionally_returns_fa3s_four_outputs():
    q, k, v = _qkv()
    with reference_kernels() as calls:
        # TransformerEngine-style positional call up to softmax_scale, causal
        out, lse, out_accum, lse_accum = fai._flash_attn_forward(
            q, k, v, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None,
            None, None, None, None, 0.125, True)
    assert calls[0].op == "attn_fwd" and calls[0].causal and calls[0].softmax_scale == 0.125
    ref_out, ref_lse = reference.attention_forward(q, k, v, 0.125, True)
    assert torch.allclose(out.float(), ref_out.float(), atol=2e-2) and lse.shape == (2, 4, 37)
    assert out_accum.numel() == 0 and lse_accum.numel() == 0


def test_forward_writes_out_and_reads_the_causal_window():
    """(-1, 0) is FlashAttention-3's causal window: it reaches the op as that window (which
    the op treats as causal), and the result is the causal one."""
    q, k, v = _qkv()
    out_ = torch.empty_like(q)
    with reference_kernels() as calls:
        out, *_ = fai._flash_attn_forward(q, k, v, out_=out_, window_size_left=-1, window_size_right=0)
        causal, *_ = fai._flash_attn_forward(q, k, v, causal=True)
    assert out is out_ and calls[0].window == (-1, 0)
    assert torch.equal(out, causal)


def test_backward_fills_the_given_buffers_and_returns_softmax_d():
    q, k, v = _qkv()
    dout = torch.randn_like(q)
    out, lse = reference.attention_forward(q, k, v, causal=True)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    with reference_kernels() as calls:
        softmax_d = fai._flash_attn_backward(dout, q, k, v, out, lse, None, None, None, None, None, None, dq, dk, dv,
                                             None, True, -1, -1, 0.0, True)
    assert calls[0].op == "attn_bwd" and calls[0].deterministic and calls[0].causal
    ref = reference.attention_backward(dout, q, k, v, causal=True, compute_dtype=torch.float32)
    for ours, r in zip((dq, dk, dv), ref):
        assert torch.allclose(ours.float(), r.float(), atol=5e-2)
    assert softmax_d.shape == lse.shape and softmax_d.dtype == torch.float32


def test_varlen_private_calls():
    lengths = [5, 0, 33, 17]
    cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32)
    q, k, v = _qkv((sum(lengths), 4, 64))
    with reference_kernels() as calls:
        out, lse, *_ = fai._flash_attn_forward(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=33,
                                               max_seqlen_k=33, causal=True)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        softmax_d = fai._flash_attn_backward(torch.ones_like(q), q, k, v, out, lse, cu, cu, None, None, 33, 33, dq,
                                             dk, dv, is_causal=True)
    assert [c.op for c in calls] == ["attn_varlen_fwd", "attn_varlen_bwd"]
    assert lse.shape == (4, sum(lengths)) and softmax_d.shape == lse.shape
    with pytest.raises(ValueError, match="needs cu_seqlens_q, cu_seqlens_k, max_seqlen_q"):
        fai._flash_attn_forward(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu)


@pytest.mark.parametrize("argument", ["k_new", "page_table", "rotary_cos", "kv_batch_idx", "scheduler_metadata"])
def test_inference_arguments_raise(argument):
    q, k, v = _qkv()
    with pytest.raises(NotImplementedError, match=rf"_flash_attn_forward: {argument}="):
        fai._flash_attn_forward(q, k, v, **{argument: torch.zeros(1)})


def test_softcap_reaches_both_ops_with_the_window():
    q, k, v = _qkv()
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    with reference_kernels() as calls:
        out, lse, *_ = fai._flash_attn_forward(q, k, v, window_size_left=8, window_size_right=0, softcap=30.0)
        fai._flash_attn_backward(q, q, k, v, out, lse, dq=dq, dk=dk, dv=dv, window_size_left=8, window_size_right=0,
                                 softcap=30.0)
    assert [(c.op, c.window, c.softcap) for c in calls] == [("attn_fwd", (8, 0), 30.0), ("attn_bwd", (8, 0), 30.0)]


@pytest.mark.parametrize("causal", [False, True], ids=["nocausal", "causal"])
@pytest.mark.parametrize("left,right", [(8, 0), (0, 0), (5, 3), (-1, 2), (4, -1), (100, 100)])
def test_sliding_window_forward_and_backward(left, right, causal):
    """TransformerEngine / Megatron pass window_size_left / window_size_right positionally:
    both reach the ops, and out, lse and the gradients are the windowed reference's."""
    q, k, v = _qkv()
    dout = torch.randn_like(q)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    with reference_kernels() as calls:
        out, lse, *_ = fai._flash_attn_forward(
            q, k, v, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None,
            None, None, None, None, 0.125, causal, left, right)
        fai._flash_attn_backward(dout, q, k, v, out, lse, None, None, None, None, None, None, dq, dk, dv, 0.125,
                                 causal, left, right, 0.0, True)
    assert [(c.op, c.causal, c.window) for c in calls] == [("attn_fwd", causal, (left, right)),
                                                           ("attn_bwd", causal, (left, right))]
    ref_out, ref_lse = reference.attention_forward(q, k, v, 0.125, causal, window_size=(left, right))
    assert torch.equal(out, ref_out) and torch.equal(lse, ref_lse)
    ref = reference.attention_backward(dout, q, k, v, 0.125, causal, compute_dtype=torch.float32,
                                       window_size=(left, right))
    for ours, r in zip((dq, dk, dv), ref):
        assert torch.equal(ours, r.to(torch.bfloat16))


def test_varlen_sliding_window():
    lengths = [5, 0, 33, 17]
    cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32)
    q, k, v = _qkv((sum(lengths), 4, 64))
    with reference_kernels() as calls:
        out, lse, *_ = fai._flash_attn_forward(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=33,
                                               max_seqlen_k=33, window_size_left=6, window_size_right=0)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        fai._flash_attn_backward(torch.ones_like(q), q, k, v, out, lse, cu, cu, None, None, 33, 33, dq, dk, dv,
                                 window_size_left=6, window_size_right=0)
    assert [(c.op, c.window) for c in calls] == [("attn_varlen_fwd", (6, 0)), ("attn_varlen_bwd", (6, 0))]
    ref_out, _ = reference.attention_varlen_forward(q, k, v, cu, cu, window_size=(6, 0))
    assert torch.equal(out, ref_out)
    ref = reference.attention_varlen_backward(torch.ones_like(q), q, k, v, cu, cu, compute_dtype=torch.float32,
                                              window_size=(6, 0))
    for ours, r in zip((dq, dk, dv), ref):
        assert torch.equal(ours, r.to(torch.bfloat16))
