"""GPU: dash.distributed's Ulysses with the ranks simulated on one GPU (issue 16).

The data movement of the all-to-alls with the real kernels: deterministic, out and the
gradients must be the unsharded call's bits (the backward's sums do not depend on how many
heads a launch holds: the invariance issue), for MHA, GQA and MQA (dK / dV of replicated
K / V heads: the ranks' partials added, within rounding), both masks, head dims 64 and 128,
row counts a rank that are not tile multiples; and two runs give the same bits."""
import pytest
import torch

from conftest import requires_hopper
from dash import distributed as ddist
from dash import flash_attn_interface as fai

pytestmark = requires_hopper


def _inputs(batch, seqlen, heads, heads_kv, head_dim, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    shape = lambda h: (batch, seqlen, h, head_dim)  # noqa: E731
    q, dout = (torch.randn(shape(heads), generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(shape(heads_kv), generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    return q, k, v, dout


def _sharded(world, q, k, v, dout, **kw):
    shards = [[t.chunk(world, dim=1)[r].clone().requires_grad_() for r in range(world)] for t in (q, k, v)]
    outs = ddist.simulate_ulysses(*shards, **kw)
    torch.autograd.backward(outs, list(dout.chunk(world, dim=1)))
    return torch.cat(outs, dim=1).detach(), [torch.cat([s.grad for s in ranks], dim=1) for ranks in shards]


@pytest.mark.parametrize("world", [2, 4, 8])
@pytest.mark.parametrize("heads,heads_kv", [(16, 16), (16, 8), (16, 2), (16, 1)], ids=["mha", "gqa2", "gqa8", "mqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_simulated_ulysses_bitwise_equal_to_one_call(head_dim, causal, heads, heads_kv, world):
    q, k, v, dout = _inputs(2, 8 * 377, heads, heads_kv, head_dim, seed=world * 100 + heads_kv)
    kw = dict(causal=causal, deterministic=True)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    ref_out = fai.flash_attn_func(*leaves, **kw)
    ref_out.backward(dout)
    out, grads = _sharded(world, q, k, v, dout, **kw)
    assert torch.equal(out, ref_out.detach())
    assert torch.equal(grads[0], leaves[0].grad), "dq"
    for got, leaf in zip(grads[1:], leaves[1:]):
        if heads_kv % world == 0:
            assert torch.equal(got, leaf.grad)
        else:
            torch.testing.assert_close(got, leaf.grad, atol=3e-2, rtol=3e-2)
    out2, grads2 = _sharded(world, q, k, v, dout, **kw)
    assert torch.equal(out2, out) and all(torch.equal(a, b) for a, b in zip(grads2, grads))
