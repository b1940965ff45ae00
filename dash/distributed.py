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

Ring attention (`ring_attention`): K and V travel around the ring of ranks (P - 1 hops)
while each rank keeps its queries; each step's (out, LSE) is merged into the rank's result
in fp32, in step order. The backward sends K and V around again with fp32 dK / dV
accumulators that each rank adds its partial to (so a K / V slice's gradient is summed in
ring order, starting at its owner) and adds dQ's partials in step order: bitwise the same
run to run on a fixed group size, equal to the one-GPU call within rounding (the sums are
split differently). Causal masks use the zigzag layout (rank r holds chunks r and 2P - 1 - r
of 2P equal chunks: `zigzag_shard`), which gives every rank the same work. Every transfer
is posted before the compute it overlaps: the next step's K / V while this step's blocks run,
and in the backward each step's dK / dV accumulators while the next step's blocks run (added
to only after those); `sm_margin` keeps that many SMs out of the attention kernels' grids for
NCCL's kernels, which does not change the deterministic bits. `simulate_ring` runs the ranks
in lockstep in one process.
"""
from __future__ import annotations

import torch

from . import flash_attn_interface as fai

__all__ = ["ulysses_attention", "ulysses_varlen_attention", "simulate_ulysses", "kv_heads_for_ranks",
           "ring_attention", "simulate_ring", "zigzag_shard", "zigzag_unshard", "ring_varlen_attention",
           "simulate_ring_varlen", "zigzag_varlen_shard", "zigzag_varlen_unshard"]


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


# ---- the ranks a call runs: one value a rank, for the ranks in this process ----

class _SimulatedRanks:
    """Every rank in this process (the collectives become their data movement)."""

    def __init__(self, world):
        self.world, self.ranks = world, list(range(world))

    def all_to_all(self, values):
        """values[i]: rank i's (world, ...) chunks, chunk j bound for rank j. Rank j receives
        (world, ...) with rank i's chunk at i."""
        return [torch.stack([values[i][j] for i in range(self.world)]) for j in range(self.world)]

    def shift(self, values):  # rank i receives rank i - 1's value
        return [values[(i - 1) % self.world] for i in range(self.world)]

    def shift_start(self, values):
        """shift, started now and collected with .wait() (here: moved at once)."""
        return _Done(self.shift(values))


class _ProcessRanks:
    """This process's rank of a torch.distributed group."""

    def __init__(self, group):
        import torch.distributed as dist  # noqa: PLC0415
        self.dist, self.group = dist, group
        self.world = _world(group)
        self.ranks = [dist.get_rank(group)]
        # gloo moves host tensors: CUDA tensors go through host memory, which lets several
        # ranks share one GPU (NCCL refuses that) and run the same per-rank arithmetic.
        self.staged = dist.get_backend(group) == "gloo"

    def all_to_all(self, values):  # autograd-aware (torch.distributed.nn; .cpu() / .to() too)
        x = values[0]
        if self.staged and x.is_cuda:
            return [_all_to_all(x.cpu(), self.group).to(x.device)]
        return [_all_to_all(x, self.group)]

    def shift(self, values):
        """Send to rank + 1, receive from rank - 1."""
        return self.shift_start(values).wait()

    def shift_start(self, values):
        """shift's sends and receives posted now (torch.distributed P2P; NCCL runs them on its
        own stream, beside the attention kernels); .wait() returns what arrived."""
        if self.world == 1:
            return _Done(values)
        (tensors,) = values
        dist, rank, world = self.dist, self.ranks[0], self.world
        nxt = dist.get_global_rank(self.group, (rank + 1) % world) if self.group is not None else (rank + 1) % world
        prv = dist.get_global_rank(self.group, (rank - 1) % world) if self.group is not None else (rank - 1) % world
        device = tensors[0].device
        staged = self.staged and device.type == "cuda"
        tensors = [t.cpu() if staged else t.contiguous() for t in tensors]
        received = [torch.empty_like(t) for t in tensors]
        ops = [dist.P2POp(dist.isend, t, nxt, self.group) for t in tensors]
        ops += [dist.P2POp(dist.irecv, t, prv, self.group) for t in received]
        return _Posted(dist.batch_isend_irecv(ops), [tuple(received)], tensors, device if staged else None)


class _Done:
    """A shift whose data is already where it goes."""

    def __init__(self, values):
        self.values = values

    def wait(self):
        return self.values


class _Posted:
    """Posted sends and receives: wait() returns the received values (the sent tensors are
    kept alive until then), moved to `device` when they travelled through host memory."""

    def __init__(self, requests, received, sent, device=None):
        self.requests, self.received, self.sent, self.device = requests, received, sent, device

    def wait(self):
        for request in self.requests:
            request.wait()
        if self.device is None:
            return self.received
        return [tuple(t.to(self.device) for t in values) for values in self.received]


def _ulysses(ranks, qs, ks, vs, attend):
    """The Ulysses exchange for the ranks this process runs (`ranks`: _ProcessRanks or
    _SimulatedRanks): rows -> heads, attend(q, k, v) on each rank's heads, heads -> rows."""
    world, heads = ranks.world, qs[0].shape[-2]
    kv_heads_for_ranks(heads, ks[0].shape[-2], world)  # checks

    def to_heads(shards):
        return [_unpack_rows(x) for x in ranks.all_to_all([_pack_heads(s, world) for s in shards])]

    q_h = to_heads(qs)
    k_h = to_heads([_expand_kv(s, heads, world) for s in ks])
    v_h = to_heads([_expand_kv(s, heads, world) for s in vs])
    outs = [attend(*qkv) for qkv in zip(q_h, k_h, v_h)]
    return [_unpack_heads(x) for x in ranks.all_to_all([_pack_rows(o, world) for o in outs])]


def ulysses_attention(q, k, v, *, group=None, softmax_scale=None, causal=False, window_size=(-1, -1),
                      softcap=0.0, deterministic=None, sm_margin=0, return_lse=False):
    """Attention of the whole sequence, each rank holding its slice of the rows (module
    docstring). The arguments after the tensors are flash_attn_func's. Returns this rank's
    rows of out (batch, seqlen / P, heads, head_dim_v), and with return_lse=True also this
    rank's heads / P heads of softmax_lse over all rows (batch, heads / P, seqlen)."""
    lses = []

    def attend(q_h, k_h, v_h):
        out_h, lse = fai.flash_attn_func(q_h, k_h, v_h, softmax_scale=softmax_scale, causal=causal,
                                         window_size=window_size, softcap=softcap, deterministic=deterministic,
                                         sm_margin=sm_margin, return_attn_probs=True)
        lses.append(lse)
        return out_h

    (out,) = _ulysses(_ProcessRanks(group), [q], [k], [v], attend)
    return (out, lses[0]) if return_lse else out


def ulysses_varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *, group=None,
                             softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                             deterministic=None, sm_margin=0):
    """Packed rows (total_tokens / P, heads, head_dim) a rank; cu_seqlens_q / cu_seqlens_k and
    the max lengths describe the whole packing, as flash_attn_varlen_func takes them. Returns
    this rank's rows of out."""
    def attend(q_h, k_h, v_h):
        return fai.flash_attn_varlen_func(q_h, k_h, v_h, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                          softmax_scale=softmax_scale, causal=causal, window_size=window_size,
                                          softcap=softcap, deterministic=deterministic, sm_margin=sm_margin)

    (out,) = _ulysses(_ProcessRanks(group), [q], [k], [v], attend)
    return out


def simulate_ulysses(q_shards, k_shards, v_shards, **attention_kwargs):
    """The Ulysses call with the ranks as lists of per-rank row slices in one process: each
    all-to-all becomes the data movement it does (shard j of every rank's packed tensor goes
    to rank j), and the ranks' attention calls run one after another. Differentiable like the
    real one. Returns the ranks' output slices."""
    return _ulysses(_SimulatedRanks(len(q_shards)), list(q_shards), list(k_shards), list(v_shards),
                    lambda q_h, k_h, v_h: fai.flash_attn_func(q_h, k_h, v_h, **attention_kwargs))


# ---- ring attention ----

def zigzag_shard(x: torch.Tensor, rank: int, world: int, dim: int = 1) -> torch.Tensor:
    """Rank `rank`'s rows of the zigzag layout: chunks rank and 2 world - 1 - rank of 2 world
    equal chunks along `dim` (the sequence length must be a multiple of 2 world)."""
    chunks = x.chunk(2 * world, dim=dim)
    if len(chunks) != 2 * world or x.shape[dim] % (2 * world):
        raise ValueError(f"dash.distributed: the sequence ({x.shape[dim]} rows) must split into 2 x {world} equal "
                         "chunks")
    return torch.cat([chunks[rank], chunks[2 * world - 1 - rank]], dim=dim)


def zigzag_unshard(shards, dim: int = 1) -> torch.Tensor:
    """The whole sequence from every rank's zigzag rows (zigzag_shard's inverse)."""
    world = len(shards)
    halves = [s.chunk(2, dim=dim) for s in shards]
    return torch.cat([halves[c][0] if c < world else halves[2 * world - 1 - c][1] for c in range(2 * world)], dim=dim)





def _document_lengths(cu_seqlens) -> list[int]:
    bounds = [int(x) for x in (cu_seqlens.tolist() if isinstance(cu_seqlens, torch.Tensor) else cu_seqlens)]
    return [b - a for a, b in zip(bounds, bounds[1:])]


def _local_lengths(cu_seqlens, world: int, name: str) -> list[int]:
    """Each rank's rows of every document (length / world), checking that every document splits
    into 2 x world equal zigzag chunks."""
    lengths = _document_lengths(cu_seqlens)
    bad = [n for n in lengths if n % (2 * world)]
    if bad:
        raise ValueError(f"dash.distributed.{name}: every document's length must be a multiple of 2 x {world} "
                         f"ranks (zigzag chunks); got {bad[:4]}")
    return [n // world for n in lengths]


def zigzag_varlen_shard(x: torch.Tensor, cu_seqlens, rank: int, world: int) -> torch.Tensor:
    """Rank `rank`'s rows of a packing (rows first, documents at cu_seqlens): of every document,
    its chunks rank and 2 world - 1 - rank of 2 world equal chunks, documents in order."""
    _local_lengths(cu_seqlens, world, "zigzag_varlen_shard")
    docs = x.split(_document_lengths(cu_seqlens), dim=0)
    return torch.cat([zigzag_shard(d, rank, world, dim=0) for d in docs], dim=0)


def zigzag_varlen_unshard(shards, cu_seqlens) -> torch.Tensor:
    """The whole packing from every rank's rows (zigzag_varlen_shard's inverse)."""
    world = len(shards)
    local = [n // world for n in _document_lengths(cu_seqlens)]
    per_rank = [s.split(local, dim=0) for s in shards]
    return torch.cat([zigzag_unshard([per_rank[r][d] for r in range(world)], dim=0) for d in range(len(local))],
                     dim=0)


def _ring_blocks(rank: int, src: int, causal: bool, rows: int):
    """Which of this rank's query rows attend which of the visiting K / V rows (from rank src),
    and with which mask, at one step: (q rows, kv rows, causal).
    Zigzag: each rank's rows are its two chunks (c rows each, c = rows / 2)."""
    if not causal:
        return slice(0, rows), slice(0, rows), False
    c = rows // 2
    if src == rank:  # its own chunks: one bottom-right causal call is exactly the zigzag mask
        return slice(0, rows), slice(0, rows), True
    if src < rank:  # the visitor's first chunk is earlier than both of ours, its second later
        return slice(0, rows), slice(0, c), False
    return slice(c, rows), slice(0, rows), False  # both visiting chunks lie between our two


class _FixedRows:
    """Ring blocks of fixed-length rows: (batch, rows, heads, dim) tensors, LSE (batch, heads,
    rows); a block's rows are slices."""

    row_axis = 1

    def __init__(self, rows, causal):
        self.rows, self.causal = rows, causal

    def blocks(self, rank, src):
        return _ring_blocks(rank, src, self.causal, self.rows)

    @staticmethod
    def take(x, sel):
        return x[:, sel]

    @staticmethod
    def take_lse(lse, sel):
        return lse[..., sel]

    @staticmethod
    def lse_by_rows(lse):  # broadcast against out
        return lse.transpose(1, 2).unsqueeze(-1)

    @staticmethod
    def put(x, sel, value):
        x[:, sel] = value

    @staticmethod
    def add_to(acc, sel, value):
        acc[:, sel] += value

    @staticmethod
    def forward(q, k, v, block, scale, deterministic, sm_margin):
        from . import ops  # noqa: PLC0415
        return ops.attn_fwd(q, k, v, scale, block[2], deterministic, sm_margin)

    @staticmethod
    def backward(dout, q, k, v, out, lse, block, scale, deterministic, sm_margin):
        from . import ops  # noqa: PLC0415
        return ops.attn_bwd(dout, q, k, v, out, lse, scale, block[2], deterministic, sm_margin)


class _PackedRows:
    """Ring blocks of packed rows (FlashAttention's varlen layout): (rows, heads, dim) tensors,
    LSE (heads, rows). Every rank holds 2 c_d rows of each document d (its two zigzag chunks,
    c_d = length / 2P), so every rank's packing has the same per-document lengths; a step's
    block takes, per document, the rows _ring_blocks names, gathered into one varlen call
    (a document with no rows gives an empty sequence there)."""

    row_axis = 0

    def __init__(self, local_lengths, causal, device):
        self.causal = causal
        starts = [0]
        for n in local_lengths:
            starts.append(starts[-1] + n)
        self.rows = starts[-1]
        self.device = device
        self._blocks = {}
        self._starts, self._lengths = starts, local_lengths

    def blocks(self, rank, src):
        """_ring_blocks of every document, gathered: (q row indices, kv row indices, (causal,
        cu_seqlens_q, cu_seqlens_k, max_q, max_k)). Three kinds of block (src before, at or
        after rank), each built once."""
        kind = (src > rank) - (src < rank) if self.causal else 0
        if kind not in self._blocks:
            q_idx, k_idx, cu_q, cu_k, causal = [], [], [0], [0], False
            for start, n in zip(self._starts, self._lengths):
                q_rows, k_rows, causal = _ring_blocks(rank, src, self.causal, n)
                q_idx.extend(range(start + q_rows.start, start + q_rows.stop))
                k_idx.extend(range(start + k_rows.start, start + k_rows.stop))
                cu_q.append(len(q_idx))
                cu_k.append(len(k_idx))
            as_tensor = lambda x, dtype: torch.tensor(x, dtype=dtype, device=self.device)  # noqa: E731
            longest = lambda cu: max(b - a for a, b in zip(cu, cu[1:]))  # noqa: E731
            self._blocks[kind] = (as_tensor(q_idx, torch.long), as_tensor(k_idx, torch.long),
                                  (causal, as_tensor(cu_q, torch.int32), as_tensor(cu_k, torch.int32),
                                   longest(cu_q), longest(cu_k)))
        return self._blocks[kind]

    @staticmethod
    def take(x, sel):
        return x.index_select(0, sel)

    @staticmethod
    def take_lse(lse, sel):
        return lse.index_select(-1, sel)

    @staticmethod
    def lse_by_rows(lse):
        return lse.transpose(0, 1).unsqueeze(-1)

    @staticmethod
    def put(x, sel, value):
        x[sel] = value

    @staticmethod
    def add_to(acc, sel, value):
        acc[sel] += value  # rows are distinct: one addition each, no atomics

    @staticmethod
    def forward(q, k, v, block, scale, deterministic, sm_margin):
        from . import ops  # noqa: PLC0415
        causal, cu_q, cu_k, max_q, max_k = block[2]
        return ops.attn_varlen_fwd(q, k, v, cu_q, cu_k, max_q, max_k, softmax_scale=scale, causal=causal,
                                   deterministic=deterministic, sm_margin=sm_margin)

    @staticmethod
    def backward(dout, q, k, v, out, lse, block, scale, deterministic, sm_margin):
        from . import ops  # noqa: PLC0415
        causal, cu_q, cu_k, max_q, max_k = block[2]
        return ops.attn_varlen_bwd(dout, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, softmax_scale=scale,
                                   causal=causal, deterministic=deterministic, sm_margin=sm_margin)


def _merge(layout, out, lse, block_out, block_lse, q_rows):
    """out (fp32 rows of this rank) and lse (fp32) with the block's result on q_rows merged in
    (log-sum-exp weights)."""
    if out is None:
        if block_out.shape[layout.row_axis] != layout.rows:
            raise AssertionError("the first step covers every query row")
        return block_out.float(), block_lse.float()
    old_out, old_lse = layout.take(out, q_rows), layout.take_lse(lse, q_rows)
    new_lse = torch.logaddexp(old_lse, block_lse)
    w_old = layout.lse_by_rows(torch.exp(old_lse - new_lse))
    w_new = layout.lse_by_rows(torch.exp(block_lse - new_lse))
    out, lse = out.clone(), lse.clone()
    layout.put(out, q_rows, torch.nan_to_num(w_old * old_out) + torch.nan_to_num(w_new * block_out.float()))
    lse[..., q_rows] = new_lse
    return out, lse


def _ring_forward(ring, layout, qs, ks, vs, scale, deterministic, sm_margin):
    world = ring.world
    outs, lses = [None] * len(qs), [None] * len(qs)
    kv = [(k, v) for k, v in zip(ks, vs)]
    for step in range(world):
        # The next step's K / V travel while this step's blocks run.
        arriving = ring.shift_start(kv) if step < world - 1 else None
        for i, rank in enumerate(ring.ranks):
            block = layout.blocks(rank, (rank - step) % world)
            q_rows, kv_rows = block[0], block[1]
            k, v = kv[i]
            block_out, block_lse = layout.forward(layout.take(qs[i], q_rows), layout.take(k, kv_rows),
                                                  layout.take(v, kv_rows), block, scale, deterministic, sm_margin)
            outs[i], lses[i] = _merge(layout, outs[i], lses[i], block_out, block_lse, q_rows)
        if arriving is not None:
            kv = arriving.wait()
    return [o.to(q.dtype) for o, q in zip(outs, qs)], lses


def _ring_backward(ring, layout, douts, qs, ks, vs, outs, lses, scale, deterministic, sm_margin):
    """K / V go around the ring again, each with fp32 dK / dV accumulators. A rank computes its
    blocks' gradients for the visiting K / V, then adds them to the accumulators that followed
    that K / V from its owner (the sum of the ranks before it, in ring order) and passes them
    on; the last pass takes them home. Every transfer is posted before the compute it overlaps
    (K / V a step ahead, the accumulators behind the next step's blocks), and the order of the
    additions is fixed by the ring whatever the timing."""
    world, take = ring.world, layout.take
    dqs = [torch.zeros(q.shape, dtype=torch.float32, device=q.device) for q in qs]
    kv = [(k, v) for k, v in zip(ks, vs)]
    accumulators = [(torch.zeros(k.shape, dtype=torch.float32, device=k.device),
                     torch.zeros(v.shape, dtype=torch.float32, device=v.device)) for k, v in zip(ks, vs)]
    passing = None  # the accumulators on their way to the next rank
    for step in range(world):
        arriving = ring.shift_start(kv) if step < world - 1 else None
        partials = []
        for i, rank in enumerate(ring.ranks):
            block = layout.blocks(rank, (rank - step) % world)
            q_rows, kv_rows = block[0], block[1]
            k, v = kv[i]
            dq, dk, dv = layout.backward(take(douts[i], q_rows).contiguous(), take(qs[i], q_rows).contiguous(),
                                         take(k, kv_rows).contiguous(), take(v, kv_rows).contiguous(),
                                         take(outs[i], q_rows).contiguous(),
                                         layout.take_lse(lses[i], q_rows).contiguous(), block, scale, deterministic,
                                         sm_margin)
            layout.add_to(dqs[i], q_rows, dq.float())
            partials.append((kv_rows, dk, dv))
        if passing is not None:
            accumulators = passing.wait()  # the visiting K / V's, from the rank before
        summed = []
        for (dk_acc, dv_acc), (kv_rows, dk, dv) in zip(accumulators, partials):
            dk_acc, dv_acc = dk_acc.clone(), dv_acc.clone()  # the received buffers may still be read
            layout.add_to(dk_acc, kv_rows, dk.float())
            layout.add_to(dv_acc, kv_rows, dv.float())
            summed.append((dk_acc, dv_acc))
        passing = ring.shift_start(summed)  # after the last step: back to the owner
        if arriving is not None:
            kv = arriving.wait()
    accumulators = passing.wait()
    return ([dq.to(q.dtype) for dq, q in zip(dqs, qs)], [a[0].to(k.dtype) for a, k in zip(accumulators, ks)],
            [a[1].to(v.dtype) for a, v in zip(accumulators, vs)])


class _RingAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, ring, layout, scale, deterministic, sm_margin, *tensors):
        n = len(tensors) // 3
        qs, ks, vs = tensors[:n], tensors[n:2 * n], tensors[2 * n:]
        outs, lses = _ring_forward(ring, layout, qs, ks, vs, scale, deterministic, sm_margin)
        ctx.args, ctx.n = (ring, layout, scale, deterministic, sm_margin), n
        ctx.save_for_backward(*tensors, *outs, *lses)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *douts):
        n = ctx.n
        saved = ctx.saved_tensors
        qs, ks, vs, outs, lses = (saved[j * n:(j + 1) * n] for j in range(5))
        ring, layout, scale, deterministic, sm_margin = ctx.args
        dqs, dks, dvs = _ring_backward(ring, layout, [d.contiguous() for d in douts], qs, ks, vs, outs, lses, scale,
                                       deterministic, sm_margin)
        return (None, None, None, None, None, *dqs, *dks, *dvs)


def _ring_checks(name, qs, ks, softmax_scale, deterministic, sm_margin, row_axis):
    for q, k in zip(qs, ks):
        if q.shape[row_axis] != k.shape[row_axis]:
            raise ValueError(f"dash.distributed.{name}: every rank holds as many query rows as key rows")
    if int(sm_margin) < 0:
        raise ValueError(f"dash.distributed.{name}: sm_margin must be >= 0, got {sm_margin}")
    if deterministic is None:
        deterministic = torch.are_deterministic_algorithms_enabled()
    scale = softmax_scale if softmax_scale is not None else qs[0].shape[-1] ** -0.5
    return scale, bool(deterministic), int(sm_margin)


def _ring_call(ring, qs, ks, vs, softmax_scale, causal, deterministic, sm_margin):
    scale, deterministic, sm_margin = _ring_checks("ring_attention", qs, ks, softmax_scale, deterministic, sm_margin,
                                                   _FixedRows.row_axis)
    if causal and qs[0].shape[1] % 2:
        raise ValueError("dash.distributed.ring_attention: causal needs an even number of rows a rank (zigzag "
                         "layout: two equal chunks)")
    layout = _FixedRows(qs[0].shape[1], causal)
    return list(_RingAttention.apply(ring, layout, scale, deterministic, sm_margin, *qs, *ks, *vs))


def _ring_varlen_call(ring, qs, ks, vs, cu_seqlens, softmax_scale, causal, deterministic, sm_margin):
    scale, deterministic, sm_margin = _ring_checks("ring_varlen_attention", qs, ks, softmax_scale, deterministic,
                                                   sm_margin, _PackedRows.row_axis)
    layout = _PackedRows(_local_lengths(cu_seqlens, ring.world, "ring_varlen_attention"), causal, qs[0].device)
    for q in qs:
        if q.shape[0] != layout.rows:
            raise ValueError(f"dash.distributed.ring_varlen_attention: a rank holds {layout.rows} rows "
                             f"(cu_seqlens / {ring.world}), got {q.shape[0]}")
    return list(_RingAttention.apply(ring, layout, scale, deterministic, sm_margin, *qs, *ks, *vs))


def ring_attention(q, k, v, *, group=None, softmax_scale=None, causal=False, deterministic=None, sm_margin=0):
    """Attention of the whole sequence, K / V passed around the ring of ranks (module
    docstring). q, k, v: this rank's rows (batch, rows, heads[_kv], head_dim), in the zigzag
    layout (zigzag_shard) when causal. Returns this rank's rows of out. sm_margin: SMs the
    attention kernels leave free for the transfers they overlap (NCCL's kernels); the
    deterministic bits do not depend on it (the kernels' grid-invariant order)."""
    (out,) = _ring_call(_ProcessRanks(group), [q], [k], [v], softmax_scale, causal, deterministic, sm_margin)
    return out


def simulate_ring(q_shards, k_shards, v_shards, *, softmax_scale=None, causal=False, deterministic=None, sm_margin=0):
    """ring_attention with the ranks as lists of their rows, run in lockstep in one process
    (each shift is the data movement of the sends and receives). Returns the ranks' outputs."""
    return _ring_call(_SimulatedRanks(len(q_shards)), list(q_shards), list(k_shards), list(v_shards), softmax_scale,
                      causal, deterministic, sm_margin)


def ring_varlen_attention(q, k, v, cu_seqlens, *, group=None, softmax_scale=None, causal=False, deterministic=None,
                          sm_margin=0):
    """ring_attention for packed rows (FlashAttention's varlen layout). cu_seqlens: the whole
    packing's document boundaries (int32, as flash_attn_varlen_func takes them; q and k share
    them); every document's length a multiple of 2 P. q, k, v: this rank's rows (total / P,
    heads[_kv], head_dim) in the per-document zigzag layout (zigzag_varlen_shard), for both
    masks. Each step is one varlen call over every document's block. Returns this rank's rows
    of out."""
    (out,) = _ring_varlen_call(_ProcessRanks(group), [q], [k], [v], cu_seqlens, softmax_scale, causal, deterministic,
                               sm_margin)
    return out


def simulate_ring_varlen(q_shards, k_shards, v_shards, cu_seqlens, *, softmax_scale=None, causal=False,
                         deterministic=None, sm_margin=0):
    """ring_varlen_attention with the ranks in lockstep in one process. Returns the ranks' outputs."""
    return _ring_varlen_call(_SimulatedRanks(len(q_shards)), list(q_shards), list(k_shards), list(v_shards),
                             cu_seqlens, softmax_scale, causal, deterministic, sm_margin)
