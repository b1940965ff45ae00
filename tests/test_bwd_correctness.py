"""GPU: dq, dk, dv against an fp64 reference on fresh random inputs: both head dims,
both dtypes, both masks, sequence lengths that are not tile multiples (1, 17, 113, 1000,
4097, ...), seqlen_q != seqlen_k both ways (causal aligned bottom-right), deterministic
and not, strided inputs. Outputs start as NaN (poisoned allocator)."""
import pytest
import torch

from conftest import requires_hopper
from gpu_helpers import check_against_reference, make_inputs, run_dash

pytestmark = requires_hopper

SEQLENS = [(1, 1), (17, 17), (113, 113), (1000, 1000), (2048, 2048), (4097, 4097), (113, 203), (203, 113),
           (1, 300), (300, 1), (1000, 2048), (2048, 1000)]


@pytest.mark.parametrize("seqlen_q,seqlen_k", SEQLENS)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_matches_reference(head_dim, dtype, causal, seqlen_q, seqlen_k):
    big = seqlen_q * seqlen_k > 1_000_000
    batch, heads = (1, 2) if big else (2, 3)
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, dtype, causal,
                         seed=seqlen_q * 7919 + seqlen_k + head_dim)
    deterministic = (seqlen_q + seqlen_k + head_dim) % 2 == 0  # cover both modes across the grid
    grads = run_dash(inputs, causal, deterministic=deterministic)
    check_against_reference(inputs, causal, grads, dtype)


@pytest.mark.parametrize("deterministic", [False, True], ids=["nondet", "det"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_strided_inputs(head_dim, deterministic):
    """q, k, v sliced out of a packed (batch, seqlen, 3, heads, d) tensor and dout/out
    with a padded head stride: non-contiguous in batch and head."""
    batch, seqlen, heads, dtype = 2, 777, 4, torch.bfloat16
    dense = make_inputs(batch, seqlen, seqlen, heads, head_dim, dtype, True, seed=11)
    qkv = torch.empty(batch, seqlen, 3, heads, head_dim, dtype=dtype, device="cuda")
    qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2] = dense["q"], dense["k"], dense["v"]
    padded = torch.empty(batch, seqlen, heads + 2, head_dim, dtype=dtype, device="cuda")
    padded_out = torch.empty_like(padded)
    padded[:, :, :heads] = dense["dout"]
    padded_out[:, :, :heads] = dense["out"]
    strided = dict(q=qkv[:, :, 0], k=qkv[:, :, 1], v=qkv[:, :, 2], dout=padded[:, :, :heads],
                   out=padded_out[:, :, :heads], softmax_lse=dense["softmax_lse"])
    assert not strided["q"].is_contiguous() and not strided["dout"].is_contiguous()
    grads = run_dash(strided, True, deterministic=deterministic)
    check_against_reference(dense, True, grads, dtype)
    ref_grads = run_dash(dense, True, deterministic=True)
    if deterministic:
        for a, b in zip(grads, ref_grads):
            assert torch.equal(a, b), "strided inputs must give bitwise the contiguous result"


def test_softmax_scale_and_odd_values():
    """A non-default softmax_scale, and rows of causal seqlen_q > seqlen_k that see no key."""
    inputs = make_inputs(1, 300, 100, 2, 128, torch.bfloat16, True, seed=5)
    from dash import reference
    import dash
    scale = 0.37
    out, lse = reference.attention_forward(inputs["q"], inputs["k"], inputs["v"], softmax_scale=scale,
                                           causal=True)
    inputs["out"], inputs["softmax_lse"] = out, lse
    assert torch.isinf(lse).any(), "the first 200 rows see no key"
    grads = dash.attn_bwd(inputs["dout"], inputs["q"], inputs["k"], inputs["v"], out, lse,
                          softmax_scale=scale, causal=True)
    ref = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"],
                                       softmax_scale=scale, causal=True)
    pt = reference.attention_backward(inputs["dout"], inputs["q"], inputs["k"], inputs["v"],
                                      softmax_scale=scale, causal=True, compute_dtype=torch.bfloat16)
    from gpu_helpers import assert_close_fa_style
    for name, g, r, p in zip(("dq", "dk", "dv"), grads, ref, pt):
        assert_close_fa_style(name, g, r, p, torch.bfloat16)
    assert grads[0][:, :200].abs().max() == 0, "queries with no visible key get zero dq"


def test_unaligned_strides_are_copied_not_misread():
    """Row strides that are not a multiple of 16 bytes (TMA and the 16-byte loads of the
    preprocess need that) are handled by a copy: same result as contiguous inputs."""
    batch, seqlen, heads, head_dim, dtype = 2, 333, 3, 64, torch.bfloat16
    dense = make_inputs(batch, seqlen, seqlen, heads, head_dim, dtype, True, seed=21)

    def unaligned(t):
        buf = torch.empty(batch, seqlen, heads * head_dim + 1, dtype=dtype, device="cuda")
        view = buf[:, :, : heads * head_dim].view(batch, seqlen, heads, head_dim)
        view.copy_(t)
        assert view.stride(1) % 8 != 0
        return view

    odd = dict(dense)
    for name in ("q", "k", "v", "out", "dout"):
        odd[name] = unaligned(dense[name])
    grads = run_dash(odd, True, deterministic=True)
    ref = run_dash(dense, True, deterministic=True)
    for a, b in zip(grads, ref):
        assert torch.equal(a, b)


def test_unaligned_base_pointer_is_copied_not_misread():
    """A contiguous tensor whose data starts off 16-byte alignment (a view at an odd
    offset) must be copied too: contiguous() alone would hand TMA the same pointer."""
    batch, seqlen, heads, head_dim, dtype = 2, 257, 2, 128, torch.float16
    dense = make_inputs(batch, seqlen, seqlen, heads, head_dim, dtype, False, seed=22)

    def shifted(t):
        flat = torch.empty(t.numel() + 1, dtype=dtype, device="cuda")
        view = flat[1:].view(t.shape)
        view.copy_(t)
        assert view.is_contiguous() and view.data_ptr() % 16 != 0
        return view

    odd = dict(dense)
    for name in ("q", "k", "v", "out", "dout"):
        odd[name] = shifted(dense[name])
    grads = run_dash(odd, False, deterministic=True)
    ref = run_dash(dense, False, deterministic=True)
    for a, b in zip(grads, ref):
        assert torch.equal(a, b)
