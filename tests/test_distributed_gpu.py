"""GPU: dash.distributed with the ranks simulated on one GPU (issue 16): Ulysses and ring.

Ulysses (the all-to-alls' data movement around the real kernels), deterministic: out and
the gradients must be the unsharded call's bits (the backward's sums do not depend on how
many heads a launch holds: the invariance issue), for MHA, GQA and MQA (dK / dV of
replicated K / V heads: the ranks' partials added, within rounding), both masks, head dims
64 and 128, row counts a rank that are not tile multiples; two runs give the same bits.
Ring (zigzag when causal; packed documents in zigzag chunks): within bf16 rounding of the
unsharded call, the same bits twice."""
import pytest
import torch

from conftest import requires_hopper
from shard_helpers import contiguous_rows, ring_rows, run_sharded, zigzag_packed_rows
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
    return run_sharded(ddist.simulate_ulysses, world, q, k, v, dout, contiguous_rows(world), **kw)


def _close_to_one_call_then_same_bits(run, ref_out, leaves, dout):
    """run(sm_margin) -> (out, [dq, dk, dv]): within bf16 rounding of the one call whose out and
    leaves are given, and the same bits again with SMs left to the (overlapped) transfers (the
    kernels' bits do not depend on the grid)."""
    ref_out.backward(dout)
    out, grads = run(0)
    torch.testing.assert_close(out, ref_out.detach(), atol=2e-2, rtol=2e-2)
    for got, leaf in zip(grads, leaves):
        torch.testing.assert_close(got, leaf.grad, atol=5e-2, rtol=5e-2)
    out2, grads2 = run(16)
    assert torch.equal(out2, out) and all(torch.equal(a, b) for a, b in zip(grads2, grads))


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


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("heads,heads_kv", [(16, 16), (16, 2)], ids=["mha", "gqa8"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_simulated_ring_close_to_one_call_and_reproducible(head_dim, causal, heads, heads_kv, world):
    """Ring attention (zigzag when causal) with the ranks simulated on one GPU: out and the
    gradients within bf16 rounding of the unsharded call, the same bits on a second run with
    sm_margin 16."""
    q, k, v, dout = _inputs(2, 2 * world * 301, heads, heads_kv, head_dim, seed=world * 10 + heads_kv)

    def run(sm_margin):
        return run_sharded(ddist.simulate_ring, world, q, k, v, dout, ring_rows(world, causal), causal=causal,
                           deterministic=True, sm_margin=sm_margin)

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    _close_to_one_call_then_same_bits(run, fai.flash_attn_func(*leaves, causal=causal, deterministic=True), leaves,
                                      dout)


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("heads,heads_kv", [(16, 16), (16, 2)], ids=["mha", "gqa8"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_simulated_ring_varlen_close_to_one_call_and_reproducible(head_dim, causal, heads, heads_kv, world):
    """Ring attention on packed documents (each split into zigzag chunks over the ranks), the
    ranks simulated on one GPU: within bf16 rounding of one varlen call over the packing, the
    same bits on a second run with sm_margin 16."""
    lengths = [2 * world * n for n in (301, 37, 512, 5)]
    cu = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    q, k, v, dout = (t[0] for t in _inputs(1, sum(lengths), heads, heads_kv, head_dim, seed=world + heads_kv))

    def run(sm_margin):
        return run_sharded(ddist.simulate_ring_varlen, world, q, k, v, dout, zigzag_packed_rows(world, cu),
                           cu_seqlens=cu, causal=causal, deterministic=True, sm_margin=sm_margin)

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    ref_out = fai.flash_attn_varlen_func(*leaves, cu, cu, max(lengths), max(lengths), causal=causal,
                                         deterministic=True)
    _close_to_one_call_then_same_bits(run, ref_out, leaves, dout)


def _one_gpu_ranks_body(rank, world, mode, causal):
    """One of `world` processes sharing GPU 0 through gloo (collectives through host memory):
    its rows of dash.distributed's call must be the simulated ranks' bits."""
    torch.cuda.set_device(0)
    q, k, v, dout = _inputs(2, 2 * world * 301, 16, 8, 128, seed=7 + world)
    if mode == "ulysses":
        layout, simulate, call = contiguous_rows(world), ddist.simulate_ulysses, ddist.ulysses_attention
    else:
        layout, simulate, call = ring_rows(world, causal), ddist.simulate_ring, ddist.ring_attention
    sim_out, sim_grads = run_sharded(simulate, world, q, k, v, dout, layout, causal=causal, deterministic=True)
    shard = layout[0]
    mine = [shard(t, rank).clone().requires_grad_() for t in (q, k, v)]
    out = call(*mine, causal=causal, deterministic=True)
    out.backward(shard(dout, rank))
    assert torch.equal(out.detach(), shard(sim_out, rank)), f"rank {rank}: out"
    for name, leaf, want in zip(("dq", "dk", "dv"), mine, sim_grads):
        assert torch.equal(leaf.grad, shard(want, rank)), f"rank {rank}: {name}"


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("mode", ["ulysses", "ring"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_processes_sharing_one_gpu_match_simulated_ranks(causal, mode, world):
    """torch.distributed with gloo, `world` processes on one GPU: Ulysses and ring give the
    simulated ranks' bits on every rank (the real P2P / all-to-all path, CUDA tensors staged
    through host memory), what several GPUs with NCCL must give too."""
    from gloo_helpers import run_on_gloo  # noqa: PLC0415
    run_on_gloo(_one_gpu_ranks_body, world, mode, causal)
