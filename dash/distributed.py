"""Context parallelism over torch.distributed: DeepSpeed-Ulysses style all-to-all around dash's
attention.

Each rank holds a contiguous slice of the sequence (rank r: rows r * S / P .. (r + 1) * S / P of
every sequence, P ranks in the group). One all-to-all turns that into all rows of heads / P
heads, dash attends there, and a second all-to-all turns the output back. The collectives
only move data, so with the deterministic backward (whose bits do not depend on how many
heads one launch holds) out and the gradients are bitwise the one-GPU call's, on any group
size that divides heads_kv. Where K / V heads are replicated (fewer K / V heads than ranks),
dK / dV are the ranks' partials summed (a fixed-order reduction): run to run the same bits,
equal to the one-GPU gradients within rounding.

  out = dash.distributed.ulysses_attention(q, k, v, causal=True, group=group)

q (batch, seqlen / P, heads, head_dim), k and v (batch, seqlen / P, heads_kv, head_dim[_v]):
heads a multiple of P; heads_kv a multiple of P, or P a multiple of heads_kv (GQA / MQA: each
rank then gets the one K / V head its query heads use, sent by every rank that holds a copy).
Gradients flow through the all-to-alls (torch.distributed.nn's autograd collectives).
`ulysses_varlen_attention` does the same for packed rows (FlashAttention's varlen layout):
each rank holds total_tokens / P rows of the packing, and cu_seqlens describes the whole.

`simulate_ulysses` runs the same data movement with the P ranks as a list of shards in one
process (no process group): what the tests use to check it on one device.
"""
from __future__ import annotations

import torch

from . import flash_attn_interface as fai

__all__ = ["ulysses_attention", "ulysses_varlen_attention", "simulate_ulysses", "kv_heads_for_ranks"]


def kv_heads_for_ranks(heads: int, heads_kv: int, world: int) -> torch.Tensor | None:
    """The K / V heads in the order the all-to-all sends them, when each rank must receive a
    different number than it holds: None if heads_kv splits evenly (heads_kv % world == 0);
    otherwise (world % heads_kv == 0) rank r's query heads r * heads / world .. all use K / V
    head (r * heads / world) // (heads / heads_kv), which is listed once per rank."""
    if heads % world:
        raise ValueError(f"dash.distributed: heads ({heads}) must be a multiple of the group size ({world})")
    if heads % heads_kv:
        raise ValueError(f"dash.distributed: heads ({heads}) must be a multiple of heads_kv ({heads_kv})")
    if heads_kv % world == 0:
        return None
    if world % heads_kv:
        raise ValueError(f"dash.distributed: heads_kv ({heads_kv}) and the group size ({world}) must divide one "
                         "another")
    group_size = heads // heads_kv
    return torch.tensor([(r * heads // world) // group_size for r in range(world)])


# ---- layouts: (..., rows, heads, dim) <-> the all-to-all's (world, ..., rows, heads / world, dim) ----

def _pack_heads(x: torch.Tensor, world: int) -> torch.Tensor:
    """(*lead, rows, heads, dim) -> (world, *lead, rows, heads / world, dim): chunk j holds
    the heads rank j gets."""
    *lead, rows, heads, dim = x.shape
    x = x.reshape(*lead, rows, world, heads // world, dim)
    return x.movedim(-3, 0).contiguous()


def _unpack_rows(x: torch.Tensor) -> torch.Tensor:
    """(world, *lead, rows, heads, dim), chunk i from rank i -> (*lead, world * rows, heads, dim):
    rank i's rows come i-th."""
    world, *lead, rows, heads, dim = x.shape
    return x.movedim(0, -4).reshape(*lead, world * rows, heads, dim)


def _pack_rows(x: torch.Tensor, world: int) -> torch.Tensor:
    """(*lead, world * rows, heads, dim) -> (world, *lead, rows, heads, dim): chunk j holds rank
    j's rows."""
    *lead, total, heads, dim = x.shape
    x = x.reshape(*lead, world, total // world, heads, dim)
    return x.movedim(-4, 0).contiguous()


def _unpack_heads(x: torch.Tensor) -> torch.Tensor:
    """(world, *lead, rows, heads, dim), chunk i from rank i (its heads) -> (*lead, rows,
    world * heads, dim)."""
    world, *lead, rows, heads, dim = x.shape
    return x.movedim(0, -3).reshape(*lead, rows, world * heads, dim)


def _expand_kv(x: torch.Tensor, heads: int, world: int) -> torch.Tensor:
    """K or V with each head listed once per rank that needs it (kv_heads_for_ranks: the copies
    of a head are adjacent). As an expand, its gradient sums a head's copies with a
    reduction, in a fixed order, not with atomics."""
    heads_kv = x.shape[-2]
    if kv_heads_for_ranks(heads, heads_kv, world) is None:
        return x
    copies = world // heads_kv
    lead, dim = list(x.shape[:-2]), x.shape[-1]
    return x.unsqueeze(-2).expand(*lead, heads_kv, copies, dim).reshape(*lead, heads_kv * copies, dim)


def _all_to_all(x: torch.Tensor, group) -> torch.Tensor:
    from torch.distributed.nn.functional import all_to_all_single  # noqa: PLC0415  (autograd-aware)
    return all_to_all_single(torch.empty_like(x), x, group=group)


def _world(group) -> int:
    import torch.distributed as dist  # noqa: PLC0415
    if not dist.is_initialized():
        raise RuntimeError("dash.distributed: torch.distributed is not initialized (init_process_group first)")
    return dist.get_world_size(group)


def ulysses_attention(q, k, v, *, group=None, softmax_scale=None, causal=False, window_size=(-1, -1),
                      softcap=0.0, deterministic=None, sm_margin=0, return_lse=False):
    """Attention of the whole sequence, each rank holding its slice of the rows (module
    docstring). The arguments after the tensors are flash_attn_func's. Returns this rank's
    rows of out (batch, seqlen / P, heads, head_dim_v), and with return_lse=True also this
    rank's heads / P heads of softmax_lse over all rows (batch, heads / P, seqlen)."""
    world = _world(group)
    heads = q.shape[-2]
    kv_heads_for_ranks(heads, k.shape[-2], world)  # checks
    q_h = _unpack_rows(_all_to_all(_pack_heads(q, world), group))
    k_h = _unpack_rows(_all_to_all(_pack_heads(_expand_kv(k, heads, world), world), group))
    v_h = _unpack_rows(_all_to_all(_pack_heads(_expand_kv(v, heads, world), world), group))
    out_h, lse = fai.flash_attn_func(q_h, k_h, v_h, softmax_scale=softmax_scale, causal=causal,
                                     window_size=window_size, softcap=softcap, deterministic=deterministic,
                                     sm_margin=sm_margin, return_attn_probs=True)
    out = _unpack_heads(_all_to_all(_pack_rows(out_h, world), group))
    return (out, lse) if return_lse else out


def ulysses_varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *, group=None,
                             softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                             deterministic=None, sm_margin=0):
    """Packed rows (total_tokens / P, heads, head_dim) a rank; cu_seqlens_q / cu_seqlens_k and
    the max lengths describe the whole packing, as flash_attn_varlen_func takes them. Returns
    this rank's rows of out."""
    world = _world(group)
    heads = q.shape[-2]
    kv_heads_for_ranks(heads, k.shape[-2], world)
    q_h = _unpack_rows(_all_to_all(_pack_heads(q, world), group))
    k_h = _unpack_rows(_all_to_all(_pack_heads(_expand_kv(k, heads, world), world), group))
    v_h = _unpack_rows(_all_to_all(_pack_heads(_expand_kv(v, heads, world), world), group))
    out_h = fai.flash_attn_varlen_func(q_h, k_h, v_h, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                       softmax_scale=softmax_scale, causal=causal, window_size=window_size,
                                       softcap=softcap, deterministic=deterministic, sm_margin=sm_margin)
    return _unpack_heads(_all_to_all(_pack_rows(out_h, world), group))


def simulate_ulysses(q_shards, k_shards, v_shards, **attention_kwargs):
    """The Ulysses call with the ranks as lists of per-rank row slices in one process: each
    all-to-all becomes the data movement it does (shard j of every rank's packed tensor goes
    to rank j), and the ranks' attention calls run one after another. Differentiable like the
    real one. Returns the ranks' output slices."""
    world = len(q_shards)
    heads = q_shards[0].shape[-2]
    kv_heads_for_ranks(heads, k_shards[0].shape[-2], world)

    def all_to_all(chunks_per_rank):  # rank i's chunk j -> rank j's chunk i
        return [torch.stack([chunks_per_rank[i][j] for i in range(world)]) for j in range(world)]

    def to_heads(shards):
        return [_unpack_rows(x) for x in all_to_all([_pack_heads(s, world) for s in shards])]

    q_h = to_heads(q_shards)
    k_h = to_heads([_expand_kv(s, heads, world) for s in k_shards])
    v_h = to_heads([_expand_kv(s, heads, world) for s in v_shards])
    outs = [fai.flash_attn_func(q_h[r], k_h[r], v_h[r], **attention_kwargs) for r in range(world)]
    return [_unpack_heads(x) for x in all_to_all([_pack_rows(o, world) for o in outs])]
