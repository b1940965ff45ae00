"""CPU: dash.distributed's context parallelism (issue 16, the part that needs no GPU).

The kernels are the plain-PyTorch stand-ins of tests/op_test_doubles.py, whose bits do not
depend on how many heads a call holds (as the GPU kernels' deterministic mode). Two ways to
shard: simulated (the ranks as lists of row slices in one process) and real
(torch.distributed with the gloo backend, 2 and 4 processes on the CPU).
  - Ulysses: the sharded runs give the unsharded call's bits.
  - Ring (zigzag for causal; the stand-in backward takes P from the LSE it is given, as the
    kernels do): within bf16 rounding of the unsharded call and the same bits twice
    (simulated); the processes' ring gives the simulated ring's bits on every rank.
"""
import pytest
import torch
import torch.distributed as dist

from conftest import requires_library
from gloo_helpers import run_on_gloo
from op_test_doubles import reference_kernels
from shard_helpers import contiguous_rows, ring_rows, run_sharded, zigzag_packed_rows
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
        out, grads = run_sharded(ddist.simulate_ulysses, world, q, k, v, dout, contiguous_rows(world), **kw)
    assert torch.equal(out, ref_out)
    assert torch.equal(grads[0], ref_grads[0]), "dQ"
    if heads_kv % world == 0:  # no K / V head replicated: the same sums as one call
        assert torch.equal(grads[1], ref_grads[1]) and torch.equal(grads[2], ref_grads[2])
    else:  # replicated heads: the ranks' partials added, equal to bf16 rounding
        for got, want in zip(grads[1:], ref_grads[1:]):
            torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)


def _gloo_ulysses_body(rank, world, case):
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


@pytest.mark.skipif(not dist.is_gloo_available(), reason="torch.distributed without gloo")
@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("case", [(8, 8, True, False), (8, 2, False, False), (8, 8, True, True), (4, 1, True, True)],
                         ids=["mha-causal", "gqa-full", "varlen-mha-causal", "varlen-mqa-causal"])
def test_gloo_ulysses_matches_unsharded(world, case):
    """torch.distributed (gloo, CPU processes): each rank's out and gradients against the same
    rows of the unsharded call, through the autograd-aware all-to-alls."""
    run_on_gloo(_gloo_ulysses_body, world, case)


# ---- ring attention (zigzag for causal) ----

def test_zigzag_round_trip():
    x = torch.arange(2 * 16).reshape(2, 16)
    for world in (1, 2, 4):
        shards = [ddist.zigzag_shard(x, r, world) for r in range(world)]
        assert torch.equal(ddist.zigzag_unshard(shards), x)
    assert ddist.zigzag_shard(x, 1, 4).tolist()[0] == [2, 3, 12, 13]  # chunks 1 and 6 of 8
    with pytest.raises(ValueError, match="equal chunks"):
        ddist.zigzag_shard(x[:, :12], 0, 4)


def _ring_case(world, heads, heads_kv, causal, seed=3):
    q, k, v, dout = make_inputs(2, 8 * world, heads, heads_kv, 64, seed=seed)
    return (q, k, v, dout, *ring_rows(world, causal))


def _simulated_ring(world, q, k, v, dout, shard, unshard, causal):
    return run_sharded(ddist.simulate_ring, world, q, k, v, dout, (shard, unshard), causal=causal,
                       deterministic=True)


@pytest.mark.parametrize("world", [1, 2, 4])
@pytest.mark.parametrize("heads,heads_kv", [(4, 4), (4, 1)], ids=["mha", "mqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_simulated_ring_matches_unsharded(world, heads, heads_kv, causal):
    """Out and gradients of the ring (fp32 merges and sums, K / V around the ring) against the
    unsharded call: equal to bf16 rounding (the sums are split differently), and the same
    bits on a second run."""
    q, k, v, dout, shard, unshard = _ring_case(world, heads, heads_kv, causal)
    with reference_kernels(backward_from_lse=True) as calls:
        ref_out, ref_grads = unsharded(q, k, v, dout, causal=causal, deterministic=True)
        out, grads = _simulated_ring(world, q, k, v, dout, shard, unshard, causal)
        out2, grads2 = _simulated_ring(world, q, k, v, dout, shard, unshard, causal)
    torch.testing.assert_close(out, ref_out, atol=2e-2, rtol=2e-2)
    for got, want in zip(grads, ref_grads):
        torch.testing.assert_close(got, want, atol=3e-2, rtol=3e-2)
    assert torch.equal(out2, out) and all(torch.equal(a, b) for a, b in zip(grads2, grads))
    ring_fwd = [c for c in calls if c.op == "attn_fwd"][1:]  # after the unsharded call
    assert len(ring_fwd) == 2 * world * world  # two runs, world ranks x world steps
    if causal and world > 1:  # zigzag: every step after the first is a full block of half the work
        assert {c.causal for c in ring_fwd} == {True, False}
        assert all(c.shapes[0][1] * c.shapes[1][1] == 8 * 8 // 2 for c in ring_fwd if not c.causal)


def _gloo_ring_body(rank, world, case):
    heads, heads_kv, causal = case
    q, k, v, dout, shard, unshard = _ring_case(world, heads, heads_kv, causal, seed=11)
    with reference_kernels(backward_from_lse=True):
        sim_out, sim_grads = _simulated_ring(world, q, k, v, dout, shard, unshard, causal)
        mine = [shard(t, rank).clone().requires_grad_() for t in (q, k, v)]
        out = ddist.ring_attention(*mine, causal=causal, deterministic=True)
        out.backward(shard(dout, rank))
    # The processes' ring does the simulated ring's arithmetic: the same bits.
    assert torch.equal(out.detach(), shard(sim_out, rank)), f"rank {rank}: out"
    for name, leaf, want in zip(("dq", "dk", "dv"), mine, sim_grads):
        assert torch.equal(leaf.grad, shard(want, rank)), f"rank {rank}: {name}"


@pytest.mark.skipif(not dist.is_gloo_available(), reason="torch.distributed without gloo")
@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("case", [(4, 4, True), (4, 2, False)], ids=["mha-causal", "gqa-full"])
def test_gloo_ring_matches_simulated(world, case):
    """torch.distributed (gloo): the ring over processes gives the simulated ring's bits on
    every rank (out, dq, dk, dv), whose agreement with the unsharded call the test above
    checks."""
    run_on_gloo(_gloo_ring_body, world, case)


class _RecordingRanks(ddist._SimulatedRanks):
    """Simulated ranks that log each shift's posting ("p") and collection ("w") in `log`,
    between the kernel calls reference_kernels records there."""

    def __init__(self, world, log):
        super().__init__(world)
        self.log = log

    def shift_start(self, values):
        self.log.append("p")
        posted, log = super().shift_start(values), self.log

        class Handle:
            def wait(self):
                log.append("w")
                return posted.wait()
        return Handle()


@pytest.mark.parametrize("world", [1, 2, 4])
def test_ring_posts_each_transfer_before_the_compute_it_overlaps(world):
    """The forward posts the next step's K / V before this step's blocks and collects them
    after; the backward posts K / V a step ahead too, and passes each step's dK / dV
    accumulators on while the next step's blocks run (collected after them). sm_margin
    reaches every kernel call."""
    causal = world > 1
    q, k, v, dout, shard, _ = _ring_case(world, 4, 4, causal)
    with reference_kernels(backward_from_lse=True) as calls:
        leaves = [[shard(t, r).clone().requires_grad_() for r in range(world)] for t in (q, k, v)]
        outs = ddist._ring_call(_RecordingRanks(world, calls), *leaves, None, causal, True, 8)
        torch.autograd.backward(outs, [shard(dout, r) for r in range(world)])
    kernels = [c for c in calls if not isinstance(c, str)]
    assert {c.sm_margin for c in kernels} == {8}
    seq = "".join(c if isinstance(c, str) else "F" if c.op == "attn_fwd" else "B" for c in calls)
    fwd, bwd = "F" * world, "B" * world
    want_fwd = ("p" + fwd + "w") * (world - 1) + fwd
    steps = ["p" + bwd + ("w" if s else "") + "pw" for s in range(world - 1)]  # K / V ahead; accumulators
    want_bwd = "".join(steps) + bwd + ("w" if world > 1 else "") + "p" + "w"
    assert seq == want_fwd + want_bwd


def test_ring_rejects_a_negative_sm_margin():
    q = torch.zeros(1, 4, 2, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="sm_margin must be >= 0"):
        ddist.simulate_ring([q, q], [q, q], [q, q], sm_margin=-1)


# ---- ring attention on packed rows (zigzag chunks of every document) ----

def _packing(world):
    lengths = [2 * world * n for n in (3, 1, 4)]  # every document splits into 2 x world chunks
    cu = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32)
    return lengths, cu


def test_zigzag_varlen_round_trip_and_checks():
    for world in (1, 2, 4):
        lengths, cu = _packing(world)
        x = torch.arange(sum(lengths) * 2).reshape(sum(lengths), 2)
        shards = [ddist.zigzag_varlen_shard(x, cu, r, world) for r in range(world)]
        assert all(s.shape[0] == sum(lengths) // world for s in shards)
        assert torch.equal(ddist.zigzag_varlen_unshard(shards, cu), x)
    x = torch.arange(24)
    doc0 = ddist.zigzag_varlen_shard(x, torch.tensor([0, 8, 24]), 1, 2)[:4]
    assert doc0.tolist() == [2, 3, 4, 5]  # chunks 1 and 2 of the first document's 4
    with pytest.raises(ValueError, match="multiple of 2 x 2 ranks"):
        ddist.zigzag_varlen_shard(x, torch.tensor([0, 6, 24]), 0, 2)


def _varlen_case(world, heads, heads_kv, seed=5):
    lengths, cu = _packing(world)
    q, k, v, dout = (t[0] for t in make_inputs(1, sum(lengths), heads, heads_kv, 64, seed=seed))
    return q, k, v, dout, cu, max(lengths)


def _simulated_ring_varlen(world, q, k, v, dout, cu, causal, sm_margin=0):
    return run_sharded(ddist.simulate_ring_varlen, world, q, k, v, dout, zigzag_packed_rows(world, cu),
                       cu_seqlens=cu, causal=causal, deterministic=True, sm_margin=sm_margin)


@pytest.mark.parametrize("world", [1, 2, 4])
@pytest.mark.parametrize("heads,heads_kv", [(4, 4), (4, 1)], ids=["mha", "mqa"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_simulated_ring_varlen_matches_unsharded(world, heads, heads_kv, causal):
    """Packed documents, each split into zigzag chunks over the ranks: out and gradients within
    bf16 rounding of one varlen call over the whole packing (attention stays inside each
    document), the same bits on a second run, one varlen call a rank a step."""
    q, k, v, dout, cu, max_len = _varlen_case(world, heads, heads_kv)
    with reference_kernels(backward_from_lse=True) as calls:
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        ref = fai.flash_attn_varlen_func(*leaves, cu, cu, max_len, max_len, causal=causal, deterministic=True)
        ref.backward(dout)
        out, grads = _simulated_ring_varlen(world, q, k, v, dout, cu, causal)
        out2, grads2 = _simulated_ring_varlen(world, q, k, v, dout, cu, causal, sm_margin=4)
    torch.testing.assert_close(out, ref.detach(), atol=2e-2, rtol=2e-2)
    for got, leaf in zip(grads, leaves):
        torch.testing.assert_close(got, leaf.grad, atol=3e-2, rtol=3e-2)
    assert torch.equal(out2, out) and all(torch.equal(a, b) for a, b in zip(grads2, grads))
    ring_fwd = [c for c in calls if c.op == "attn_varlen_fwd"][1:]
    assert len(ring_fwd) == 2 * world * world
    if causal and world > 1:  # the zigzag blocks: the own one causal, the others half the rows, full
        assert {c.causal for c in ring_fwd} == {True, False}
        rows = sum(_packing(world)[0]) // world
        assert all(c.shapes[0][0] * c.shapes[1][0] == rows * rows // 2 for c in ring_fwd if not c.causal)


def test_ring_varlen_rejects_documents_that_do_not_split():
    q = torch.zeros(12, 2, 64, dtype=BF16)
    with pytest.raises(ValueError, match="multiple of 2 x 2 ranks"):
        ddist.simulate_ring_varlen([q, q], [q, q], [q, q], torch.tensor([0, 10, 24], dtype=torch.int32))
    with pytest.raises(ValueError, match="a rank holds 12 rows"):
        ddist.simulate_ring_varlen([q[:8], q[:8]], [q[:8], q[:8]], [q[:8], q[:8]],
                                   torch.tensor([0, 8, 24], dtype=torch.int32))


def _gloo_ring_varlen_body(rank, world, causal):
    q, k, v, dout, cu, _ = _varlen_case(world, 4, 2, seed=13)
    with reference_kernels(backward_from_lse=True):
        sim_out, sim_grads = _simulated_ring_varlen(world, q, k, v, dout, cu, causal)
        shard = lambda t: ddist.zigzag_varlen_shard(t, cu, rank, world)  # noqa: E731
        mine = [shard(t).clone().requires_grad_() for t in (q, k, v)]
        out = ddist.ring_varlen_attention(*mine, cu, causal=causal, deterministic=True)
        out.backward(shard(dout))
    assert torch.equal(out.detach(), shard(sim_out)), f"rank {rank}: out"
    for name, leaf, want in zip(("dq", "dk", "dv"), mine, sim_grads):
        assert torch.equal(leaf.grad, shard(want)), f"rank {rank}: {name}"


@pytest.mark.skipif(not dist.is_gloo_available(), reason="torch.distributed without gloo")
@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_gloo_ring_varlen_matches_simulated(world, causal):
    """torch.distributed (gloo): the packed-row ring over processes gives the simulated ring's
    bits on every rank."""
    run_on_gloo(_gloo_ring_varlen_body, world, causal)
