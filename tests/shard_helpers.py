"""Row layouts of context-parallel ranks and one sharded forward + backward, shared by the CPU
and GPU tests of dash.distributed: each layout is (shard(t, r), unshard(list)) for `world`
ranks."""
import torch

from dash import distributed as ddist


def contiguous_rows(world):
    """Rank r: rows r * S / P .. (r + 1) * S / P of (batch, rows, ...) tensors."""
    return (lambda t, r: t.chunk(world, dim=1)[r]), (lambda ts: torch.cat(ts, dim=1))


def zigzag_rows(world):
    """Rank r: chunks r and 2P - 1 - r of 2P (the ring's causal layout)."""
    return (lambda t, r: ddist.zigzag_shard(t, r, world)), ddist.zigzag_unshard


def ring_rows(world, causal):
    """The fixed-length ring's layout: zigzag when causal."""
    return zigzag_rows(world) if causal else contiguous_rows(world)


def zigzag_packed_rows(world, cu_seqlens):
    """Packed rows: every document's zigzag chunks (the packed ring's layout)."""
    return ((lambda t, r: ddist.zigzag_varlen_shard(t, cu_seqlens, r, world)),
            (lambda ts: ddist.zigzag_varlen_unshard(ts, cu_seqlens)))


def run_sharded(simulate, world, q, k, v, dout, layout, **kw):
    """q, k, v sharded over `world` simulated ranks, simulate(*shards, **kw) and its backward
    with dout's shards. Returns out and [dq, dk, dv], unsharded."""
    shard, unshard = layout
    leaves = [[shard(t, r).clone().requires_grad_() for r in range(world)] for t in (q, k, v)]
    outs = simulate(*leaves, **kw)
    torch.autograd.backward(outs, [shard(dout, r) for r in range(world)])
    return unshard([o.detach() for o in outs]), [unshard([t.grad for t in ranks]) for ranks in leaves]
