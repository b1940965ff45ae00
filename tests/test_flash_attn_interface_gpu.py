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
