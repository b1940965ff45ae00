"""GPU: the FlashAttention-3 drop-in end to end. Gradients through .backward() against an
fp64 reference, bitwise reproducible gradients with deterministic=True,
torch.use_deterministic_algorithms(True) selecting the ordered backward (seen at the
dispatcher), torch.compile(fullgraph=True) forward + backward against eager,
return_attn_probs, and qkvpacked against unpacked."""
import pytest
import torch

from conftest import requires_hopper
from op_test_doubles import DashCallSpy
from dash import reference
from dash.flash_attn_interface import flash_attn_func, flash_attn_qkvpacked_func
from gpu_helpers import check_against_reference, make_inputs, poison_allocator

pytestmark = requires_hopper


def leaves(inputs):
    return [inputs[name].detach().clone().requires_grad_() for name in ("q", "k", "v")]


def grads_of(tensors):
    return [t.grad for t in tensors]


def fwd_bwd(inputs, causal, **kw):
    """flash_attn_func then out.backward(dout) on fresh leaves, gradient buffers poisoned."""
    q, k, v = leaves(inputs)
    out = flash_attn_func(q, k, v, causal=causal, **kw)
    poison_allocator(q, k, v)
    out.backward(inputs["dout"])
    return out, grads_of((q, k, v))


@pytest.mark.parametrize("seqlen_q,seqlen_k", [(128, 128), (113, 203), (203, 113), (1000, 1000)])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_gradients_match_reference(head_dim, dtype, causal, seqlen_q, seqlen_k):
    inputs = make_inputs(2, seqlen_q, seqlen_k, 3, head_dim, dtype, causal, seed=seqlen_q * 31 + seqlen_k + head_dim)
    deterministic = (seqlen_q + head_dim) % 2 == 0  # both backward modes across the grid
    _, grads = fwd_bwd(inputs, causal, deterministic=deterministic)
    check_against_reference(inputs, causal, grads, dtype)


@pytest.mark.parametrize("batch,heads,seqlen_q,seqlen_k,head_dim,causal", [
    (2, 6, 2048, 2048, 128, True),
    (1, 8, 1531, 1000, 64, False),
])
def test_deterministic_gradients_are_bitwise_reproducible(batch, heads, seqlen_q, seqlen_k, head_dim, causal):
    inputs = make_inputs(batch, seqlen_q, seqlen_k, heads, head_dim, torch.bfloat16, causal, seed=9)
    first_out, first = fwd_bwd(inputs, causal, deterministic=True)
    for i in range(9):
        out, grads = fwd_bwd(inputs, causal, deterministic=True)
        assert torch.equal(out, first_out), f"out differs at repeat {i + 1}"
        for name, a, b in zip(("dq", "dk", "dv"), grads, first):
            assert torch.equal(a, b), f"{name} differs from the first run at repeat {i + 1}"


def test_use_deterministic_algorithms_selects_the_ordered_backward(deterministic_algorithms):
    """With the global flag on and no `deterministic` argument, the dispatcher sees
    attn_bwd(deterministic=True), and the gradients equal an explicit deterministic=True
    run bitwise; with the flag off it sees deterministic=False."""
    inputs = make_inputs(2, 1000, 1000, 4, 128, torch.bfloat16, True, seed=12)

    def spied(**kw):
        spy = DashCallSpy()
        with spy:
            _, grads = fwd_bwd(inputs, True, **kw)
        return spy, grads

    deterministic_algorithms(True)
    spy_global, grads_global = spied()
    deterministic_algorithms(False)
    spy_default, _ = spied()
    spy_explicit, grads_explicit = spied(deterministic=True)
    assert spy_global.flags("attn_fwd") == [True] and spy_global.flags("attn_bwd") == [True]
    assert spy_default.flags("attn_bwd") == [False]
    assert spy_explicit.flags("attn_bwd") == [True]
    for name, a, b in zip(("dq", "dk", "dv"), grads_global, grads_explicit):
        assert torch.equal(a, b), f"{name}: the global flag's run differs from deterministic=True"


class AttentionBlock(torch.nn.Module):
    def __init__(self, dim=256, heads=2, packed=False):
        super().__init__()
        self.heads, self.packed = heads, packed
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        batch, seqlen, dim = x.shape
        qkv = self.qkv(x).view(batch, seqlen, 3, self.heads, dim // self.heads)
        if self.packed:
            out = flash_attn_qkvpacked_func(qkv, causal=True, deterministic=True)
        else:
            q, k, v = qkv.unbind(2)
            out = flash_attn_func(q, k, v, causal=True, deterministic=True)
        return self.proj(out.reshape(batch, seqlen, dim))


@pytest.mark.parametrize("packed", [False, True], ids=["func", "qkvpacked"])
def test_torch_compile_fullgraph_matches_eager(packed):
    torch.manual_seed(0)
    model = AttentionBlock(packed=packed).cuda().to(torch.bfloat16)
    x = torch.randn(2, 300, 256, device="cuda", dtype=torch.bfloat16)
    eager_out = model(x)
    eager_out.float().square().sum().backward()
    eager_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)

    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True)
    compiled_out = compiled(x)
    compiled_out.float().square().sum().backward()
    torch._dynamo.reset()
    torch.testing.assert_close(compiled_out, eager_out, atol=2e-2, rtol=2e-2)
    for (name, param), expected in zip(model.named_parameters(), eager_grads):
        torch.testing.assert_close(param.grad, expected, atol=5e-2, rtol=2e-2, msg=lambda m: f"{name}: {m}")


def test_return_attn_probs():
    inputs = make_inputs(2, 203, 113, 3, 128, torch.bfloat16, True, seed=13)
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    result = flash_attn_func(q, k, v, causal=True, return_attn_probs=True)
    assert isinstance(result, tuple) and len(result) == 2
    out, lse = result
    assert torch.equal(out, flash_attn_func(q, k, v, causal=True))
    assert lse.shape == (2, 3, 203) and lse.dtype == torch.float32
    _, ref_lse = reference.attention_forward(q.double(), k.double(), v.double(), causal=True,
                                             compute_dtype=torch.float64)
    assert torch.equal(torch.isneginf(lse), torch.isneginf(ref_lse)) and torch.isneginf(lse).any()
    finite = torch.isfinite(ref_lse)
    assert (lse[finite].double() - ref_lse[finite]).abs().max().item() <= 1e-3
    packed_out, packed_lse = flash_attn_qkvpacked_func(torch.stack((q, q, q), dim=2), return_attn_probs=True)
    assert packed_out.shape == q.shape and packed_lse.shape == (2, 3, 203)


@pytest.mark.parametrize("layout", ["5d", "4d"])
def test_qkvpacked_matches_unpacked(layout):
    inputs = make_inputs(2, 777, 777, 4, 128, torch.bfloat16, True, seed=14)
    q, k, v = leaves(inputs)
    out = flash_attn_func(q, k, v, causal=True, deterministic=True)
    out.backward(inputs["dout"])

    packed = torch.stack([inputs[n] for n in ("q", "k", "v")], dim=2)
    if layout == "4d":
        packed = packed.reshape(2, 777, 12, 128)
    packed.requires_grad_()
    packed_out = flash_attn_qkvpacked_func(packed, causal=True, deterministic=True,
                                           num_heads_q=4 if layout == "4d" else None)
    packed_out.backward(inputs["dout"])
    assert torch.equal(packed_out, out)
    expected = torch.stack((q.grad, k.grad, v.grad), dim=2).reshape(packed.shape)
    assert torch.equal(packed.grad, expected)


@pytest.mark.parametrize("varlen", [False, True], ids=["fixed", "varlen"])
def test_private_entry_points_match_the_ops(varlen):
    """_flash_attn_forward / _flash_attn_backward (TransformerEngine / Megatron / ring
    attention) give bitwise what dash's ops give, buffers filled in place."""
    import itertools
    import dash
    from dash import flash_attn_interface as fai
    gen = torch.Generator(device="cuda").manual_seed(1)
    if varlen:
        lengths = [300, 0, 1, 1029, 64]
        cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device="cuda")
        shape_q, shape_k = (sum(lengths), 8, 128), (sum(lengths), 2, 128)
        extra = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=1029, max_seqlen_k=1029)
    else:
        shape_q, shape_k = (2, 777, 8, 128), (2, 777, 2, 128)
        extra = {}
    q, dout = (torch.randn(shape_q, generator=gen, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(shape_k, generator=gen, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out, lse, *_ = fai._flash_attn_forward(q, k, v, causal=True, **extra)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    fai._flash_attn_backward(dout, q, k, v, out, lse, extra.get("cu_seqlens_q"), extra.get("cu_seqlens_k"), None,
                             None, extra.get("max_seqlen_q"), extra.get("max_seqlen_k"), dq, dk, dv, None, True,
                             -1, -1, 0.0, True)
    if varlen:
        ref_out, ref_lse = dash.attn_varlen_fwd(q, k, v, cu, cu, 1029, 1029, causal=True)
        ref = dash.attn_varlen_bwd(dout, q, k, v, out, lse, cu, cu, 1029, 1029, causal=True, deterministic=True)
    else:
        ref_out, ref_lse = dash.attn_fwd(q, k, v, causal=True)
        ref = dash.attn_bwd(dout, q, k, v, out, lse, causal=True, deterministic=True)
    assert torch.equal(out, ref_out) and torch.equal(lse, ref_lse)
    for ours, theirs in zip((dq, dk, dv), ref):
        assert torch.equal(ours, theirs)


def test_flash_attn_varlen_func_trains_end_to_end():
    """flash_attn_varlen_func forward + .backward() against the per-sequence fp64 reference,
    and bitwise the same gradients twice with deterministic=True."""
    import itertools
    from dash.flash_attn_interface import flash_attn_varlen_func
    from gpu_helpers import assert_close_fa_style
    lengths = [513, 1, 0, 2048, 77, 300]
    cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(2)
    q0 = torch.randn(sum(lengths), 8, 64, generator=gen, device="cuda", dtype=torch.bfloat16)
    k0, v0 = (torch.randn(sum(lengths), 4, 64, generator=gen, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    dout = torch.randn_like(q0)

    def run():
        q, k, v = (t.detach().clone().requires_grad_() for t in (q0, k0, v0))
        out = flash_attn_varlen_func(q, k, v, cu, cu, 2048, 2048, causal=True, deterministic=True)
        out.backward(dout)
        return out.detach(), q.grad, k.grad, v.grad

    first, second = run(), run()
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    ref = reference.attention_varlen_backward(dout, q0, k0, v0, cu, cu, causal=True)
    pt = reference.attention_varlen_backward(dout, q0, k0, v0, cu, cu, causal=True, compute_dtype=torch.bfloat16)
    for name, ours, r, p in zip(("dq", "dk", "dv"), first[1:], ref, pt):
        assert_close_fa_style(name, ours, r, p, torch.bfloat16)
