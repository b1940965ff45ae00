"""CPU: dash.distributed's Ulysses context parallelism (issue 16, the part that needs no GPU).

The kernels are the plain-PyTorch stand-ins of tests/op_test_doubles.py, whose bits do not
depend on how many heads a call holds (as the GPU kernels' deterministic mode): so the
sharded runs must give the unsharded call's bits. Two ways to shard:
  - simulated: the ranks as lists of row slices in one process (dash.distributed.simulate_ulysses);
  - real: torch.distributed with the gloo backend, 2 and 4 processes on the CPU.
"""
import os
import socket
import sys

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from conftest import requires_library
from op_test_doubles import reference_kernels
from dash import distributed as ddist
from dash import flash_attn_interface as fai

pytestmark = requires_library

BF16 = torch.bfloat16


def make_inputs(batch, seqlen, heads, heads_kv, head_dim, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, seqlen, heads, head_dim, generator=g).to(BF16)
    k = torch.randn(batch, seqlen, heads_kv, head_dim, generator=g).to(BF16)
    v = torch.randn(batch, seqlen, heads_kv, head_dim, generator=g).to(BF16)
    dout = torch.randn(batch, seqlen, heads, head_dim, generator=g).to(BF16)
    return q, k, v, dout


def unsharded(q, k, v, dout, **kw):
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = fai.flash_attn_func(*leaves, **kw)
    out.backward(dout)
    return out.detach(), [t.grad for t in leaves]


def test_kv_heads_for_ranks():
    assert ddist.kv_heads_for_ranks(8, 8, 4) is None
    assert ddist.kv_heads_for_ranks(8, 4, 4) is None
    assert ddist.kv_heads_for_ranks(8, 2, 4).tolist() == [0, 0, 1, 1]
    assert ddist.kv_heads_for_ranks(8, 1, 4).tolist() == [0, 0, 0, 0]
    assert ddist.kv_heads_for_ranks(16, 2, 8).tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    with pytest.raises(ValueError, match="multiple of the group size"):
        ddist.kv_heads_for_ranks(6, 6, 4)
    with pytest.raises(ValueError, match="divide one another"):
        ddist.kv_heads_for_ranks(12, 3, 4)


def test_layouts_round_trip():
    x = torch.arange(2 * 8 * 8 * 3).reshape(2, 8, 8, 3)
    for world in (1, 2, 4):
        assert torch.equal(ddist._unpack_heads(ddist._pack_heads(x, world)), x)
        assert torch.equal(ddist._unpack_rows(ddist._pack_rows(x, world)), x)


def test_needs_an_initialized_group():
    q = torch.zeros(1, 4, 2, 64, dtype=BF16)
    if dist.is_initialized():
        pytest.skip("a process group is already initialized in this process")
    with pytest.raises(RuntimeError, match="not initialized"):
        ddist.ulysses_attention(q, q, q)


@pytest.mark.parametrize("world", [1, 2, 4])
@pytest.mark.parametrize("heads,heads_kv", [(8, 8), (8, 4), (8, 2), (8, 1)], ids=["mha", "gqa4", "gqa2", "mqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_simulated_ulysses_matches_unsharded(world, heads, heads_kv, causal):
    batch, seqlen, head_dim = 2, 12 * 4, 64  # rows a rank: 48 / world, not a tile multiple
    q, k, v, dout = make_inputs(batch, seqlen, heads, heads_kv, head_dim, seed=world + heads_kv)
    kw = dict(causal=causal, deterministic=True)
    with reference_kernels():
        ref_out, ref_grads = unsharded(q, k, v, dout, **kw)
        shards = [[t.chunk(world, dim=1)[r].clone().requires_grad_() for r in range(world)] for t in (q, k, v)]
        outs = ddist.simulate_ulysses(*shards, **kw)
        torch.autograd.backward(outs, list(dout.chunk(world, dim=1)))
    assert torch.equal(torch.cat(outs, dim=1), ref_out)
    grads = [torch.cat([s.grad for s in ranks], dim=1) for ranks in shards]
    assert torch.equal(grads[0], ref_grads[0]), "dQ"
    if heads_kv % world == 0:  # no K / V head replicated: the same sums as one call
        assert torch.equal(grads[1], ref_grads[1]) and torch.equal(grads[2], ref_grads[2])
    else:  # replicated heads: the ranks' partials added, equal to bf16 rounding
        for got, want in zip(grads[1:], ref_grads[1:]):
            torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gloo_worker(rank, world, port, case):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        heads, heads_kv, causal, varlen = case
        kw = dict(causal=causal, deterministic=True)
        q, k, v, dout = make_inputs(2, 16 * world, heads, heads_kv, 64, seed=7)
        with reference_kernels():
            if varlen:  # the two sequences packed: rows (total, heads, dim), cu_seqlens of the whole
                q, k, v, dout = (t.flatten(0, 1) for t in (q, k, v, dout))
                seqlen = 16 * world
                cu = torch.tensor([0, seqlen + 3, 2 * seqlen], dtype=torch.int32)  # unequal lengths
                leaves = [t.clone().requires_grad_() for t in (q, k, v)]
                ref_out = fai.flash_attn_varlen_func(*leaves, cu, cu, seqlen + 3, seqlen + 3, **kw)
                ref_out.backward(dout)
                ref_grads = [t.grad for t in leaves]
                rows = slice(rank * q.shape[0] // world, (rank + 1) * q.shape[0] // world)
                mine = [t[rows].clone().requires_grad_() for t in (q, k, v)]
                out = ddist.ulysses_varlen_attention(*mine, cu, cu, seqlen + 3, seqlen + 3, **kw)
                out.backward(dout[rows])
                dim = 0
            else:
                ref_out, ref_grads = unsharded(q, k, v, dout, **kw)
                rows = slice(rank * q.shape[1] // world, (rank + 1) * q.shape[1] // world)
                mine = [t[:, rows].clone().requires_grad_() for t in (q, k, v)]
                out = ddist.ulysses_attention(*mine, **kw)
                out.backward(dout[:, rows])
                dim = 1
        index = (slice(None),) * dim + (rows,)
        assert torch.equal(out.detach(), ref_out.detach()[index]), f"rank {rank}: out"
        assert torch.equal(mine[0].grad, ref_grads[0][index]), f"rank {rank}: dq"
        for name, got, want in (("dk", mine[1].grad, ref_grads[1][index]), ("dv", mine[2].grad, ref_grads[2][index])):
            if heads_kv % world == 0:
                assert torch.equal(got, want), f"rank {rank}: {name}"
            else:
                torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    # Passed: leave without the interpreter's teardown, where gloo's threads intermittently
    # abort the process ("terminate called without an active exception") after the test.
    sys.stderr.flush()
    os._exit(0)


@pytest.mark.skipif(not dist.is_gloo_available(), reason="torch.distributed without gloo")
@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("case", [(8, 8, True, False), (8, 2, False, False), (8, 8, True, True), (4, 1, True, True)],
                         ids=["mha-causal", "gqa-full", "varlen-mha-causal", "varlen-mqa-causal"])
def test_gloo_ulysses_matches_unsharded(world, case):
    """torch.distributed (gloo, CPU processes): each rank's out and gradients against the same
    rows of the unsharded call, through the autograd-aware all-to-alls."""
    mp.spawn(_gloo_worker, args=(world, _free_port(), case), nprocs=world, join=True)
