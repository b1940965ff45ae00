"""Python entry points to the dash ops, and their fake (meta) implementations so that
torch.compile and FakeTensor tracing see the right output shapes without a GPU."""
from __future__ import annotations

import math

import torch

from . import _library, capabilities


def _check_head_dims(op: str, head_dim, head_dim_v, backward: bool = False) -> None:
    """As the ops' check_head_dim / check_bwd_head_dim: ValueError for head dims no pass
    supports, NotImplementedError for forward-only ones in a backward."""
    dims = f"head_dim {head_dim}" + ("" if head_dim_v == head_dim else f" with head_dim_v {head_dim_v}")
    if not capabilities.supports(head_dim, head_dim_v):
        raise ValueError(f"{op}: {dims} is not supported; supported head dims are {capabilities.describe_head_dims()}")
    if backward and not capabilities.supports(head_dim, head_dim_v, backward=True):
        raise NotImplementedError(f"{op}: the backward for {dims} is not implemented yet (the forward is); "
                                  f"backward head dims: {capabilities.describe_head_dims(backward=True)}")


def _check_head_counts(op: str, heads, heads_kv) -> None:
    torch._check(heads_kv >= 1 and heads % heads_kv == 0,
                 lambda: f"{op}: q has {heads} heads, which must be a multiple of the {heads_kv} heads of k and v")


def _check_score_args(op: str, softcap) -> None:
    # As the ops' own check_mask_args: the window bounds are free (negative: unbounded).
    torch._check(math.isfinite(softcap) and softcap >= 0,
                 lambda: f"{op}: softcap must be finite and >= 0 (0: off); got {softcap}")


def _register_fakes() -> None:
    @torch.library.register_fake("dash::attn_fwd")
    def _attn_fwd_fake(q, k, v, softmax_scale, causal, deterministic=False, sm_margin=0, schedule="auto",
                       window_left=-1, window_right=-1, softcap=0.0):
        torch._check(q.dim() == 4 and k.dim() == 4 and v.dim() == 4,
                     lambda: "dash.attn_fwd: q, k, v must be 4-D (batch, seqlen, heads, head_dim)")
        torch._check(q.dtype in (torch.bfloat16, torch.float16),
                     lambda: f"dash.attn_fwd: q has dtype {q.dtype}; supported: bfloat16, float16")
        torch._check(k.dtype == q.dtype and v.dtype == q.dtype,
                     lambda: f"dash.attn_fwd: q, k, v must share a dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
        _check_score_args("dash.attn_fwd", softcap)
        batch, seqlen_q, heads, head_dim = q.shape
        torch._check(k.shape[0] == batch and k.shape[3] == head_dim and k.shape[:3] == v.shape[:3],
                     lambda: f"dash.attn_fwd: k must be (batch, seqlen_k, heads_kv, head_dim) with q's batch and "
                             f"head_dim, v (batch, seqlen_k, heads_kv, head_dim_v); got q {tuple(q.shape)}, "
                             f"k {tuple(k.shape)}, v {tuple(v.shape)}")
        _check_head_dims("dash.attn_fwd", head_dim, v.shape[3])
        _check_head_counts("dash.attn_fwd", heads, k.shape[2])
        # The kernel writes a fresh contiguous out (q's shape with v's head dim) and fp32 LSE.
        out = torch.empty((batch, seqlen_q, heads, v.shape[3]), dtype=q.dtype, device=q.device)
        lse = torch.empty((batch, heads, seqlen_q), dtype=torch.float32, device=q.device)
        return out, lse

    @torch.library.register_fake("dash::attn_bwd")
    def _attn_bwd_fake(dout, q, k, v, out, softmax_lse, softmax_scale, causal, deterministic,
                       sm_margin=0, schedule="auto", dq_trace=None, dq_trace_count=None, window_left=-1,
                       window_right=-1, softcap=0.0):
        torch._check(q.dim() == 4 and k.dim() == 4 and v.dim() == 4,
                     lambda: "dash.attn_bwd: q, k, v must be 4-D (batch, seqlen, heads, head_dim)")
        torch._check(q.dtype in (torch.bfloat16, torch.float16),
                     lambda: f"dash.attn_bwd: q has dtype {q.dtype}; supported: bfloat16, float16")
        _check_head_dims("dash.attn_bwd", q.shape[-1], v.shape[-1], backward=True)
        _check_head_counts("dash.attn_bwd", q.shape[2], k.shape[2])
        out_shape = (*q.shape[:3], v.shape[-1])
        torch._check(k.shape[-1] == q.shape[-1] and tuple(out.shape) == out_shape and tuple(dout.shape) == out_shape,
                     lambda: f"dash.attn_bwd: k must have q's head_dim and out, dout shape (batch, seqlen_q, heads, "
                             f"head_dim_v) = {out_shape}; got k {tuple(k.shape)}, out {tuple(out.shape)}, "
                             f"dout {tuple(dout.shape)}")
        _check_score_args("dash.attn_bwd", softcap)
        return (torch.empty(q.shape, dtype=q.dtype, device=q.device),
                torch.empty(k.shape, dtype=k.dtype, device=k.device),
                torch.empty(v.shape, dtype=v.dtype, device=v.device))

    def _check_varlen(op, q, k, v, cu_seqlens_q, cu_seqlens_k, backward=False):
        torch._check(q.dim() == 3 and k.dim() == 3 and v.dim() == 3,
                     lambda: f"{op}: q, k, v must be 3-D (total_rows, heads, head_dim)")
        torch._check(q.dtype in capabilities.dtypes(),
                     lambda: f"{op}: q has dtype {q.dtype}; supported: {capabilities.dtypes()}")
        torch._check(k.dtype == q.dtype and v.dtype == q.dtype, lambda: f"{op}: q, k, v must share a dtype")
        torch._check(k.shape[:2] == v.shape[:2] and k.shape[-1] == q.shape[-1],
                     lambda: f"{op}: k must be (total_k, heads_kv, head_dim) with q's head_dim, v (total_k, heads_kv, "
                             f"head_dim_v)")
        _check_head_dims(op, q.shape[-1], v.shape[-1], backward)
        _check_head_counts(op, q.shape[1], k.shape[1])
        torch._check(cu_seqlens_q.dtype == torch.int32 and cu_seqlens_k.dtype == torch.int32,
                     lambda: f"{op}: cu_seqlens must be int32")
        torch._check(cu_seqlens_q.dim() == 1 and cu_seqlens_q.shape == cu_seqlens_k.shape,
                     lambda: f"{op}: cu_seqlens_q and cu_seqlens_k must be 1-D of batch + 1 entries")

    @torch.library.register_fake("dash::attn_varlen_fwd")
    def _attn_varlen_fwd_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k, max_seqlen_q,
                              max_seqlen_k, softmax_scale, causal, deterministic=False, sm_margin=0,
                              schedule="auto", window_left=-1, window_right=-1, softcap=0.0):
        _check_varlen("dash.attn_varlen_fwd", q, k, v, cu_seqlens_q, cu_seqlens_k)
        _check_score_args("dash.attn_varlen_fwd", softcap)
        out = torch.empty((*q.shape[:2], v.shape[-1]), dtype=q.dtype, device=q.device)
        lse = torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device)
        return out, lse

    @torch.library.register_fake("dash::attn_varlen_bwd")
    def _attn_varlen_bwd_fake(dout, q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                              max_seqlen_q, max_seqlen_k, softmax_scale, causal, deterministic, sm_margin=0,
                              schedule="auto", dq_trace=None, dq_trace_count=None, window_left=-1, window_right=-1,
                              softcap=0.0):
        _check_varlen("dash.attn_varlen_bwd", q, k, v, cu_seqlens_q, cu_seqlens_k, backward=True)
        _check_score_args("dash.attn_varlen_bwd", softcap)
        return (torch.empty(q.shape, dtype=q.dtype, device=q.device),
                torch.empty(k.shape, dtype=k.dtype, device=k.device),
                torch.empty(v.shape, dtype=v.dtype, device=v.device))


if _library.LOADED:
    _register_fakes()


def _window(window_size, caller: str = "") -> tuple[int, int]:
    """FlashAttention-3's window_size = (left, right) as two ints (a negative bound: unbounded);
    ValueError naming `caller` for anything else."""
    message = f"{caller + ': ' if caller else ''}window_size must be a pair (left, right) of ints; got {window_size!r}"
    if not (isinstance(window_size, (tuple, list)) and len(window_size) == 2):
        raise ValueError(message)
    try:
        return int(window_size[0]), int(window_size[1])
    except (TypeError, ValueError):
        raise ValueError(message) from None


def attn_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, softmax_scale: float | None = None,
             causal: bool = False, deterministic: bool = False, sm_margin: int = 0, schedule: str = "auto",
             window_size: tuple[int, int] = (-1, -1), softcap: float = 0.0):
    """FlashAttention forward: returns (out, softmax_lse).

    q is (batch, seqlen_q, heads, head_dim), k (batch, seqlen_k, heads_kv, head_dim) and v
    (batch, seqlen_k, heads_kv, head_dim_v) with heads a multiple of heads_kv (GQA; MQA:
    heads_kv = 1), bf16 or fp16, head dims dash.capabilities.supports() (head_dim_v =
    head_dim, or 128 with 192), last dim contiguous. out is a new contiguous tensor of q's
    dtype, (batch, seqlen_q, heads, head_dim_v); softmax_lse is fp32 (batch, heads, seqlen_q), natural log, and
    -inf (with out 0) for a query row that sees no key. causal masks are aligned
    bottom-right. window_size = (left, right) is FlashAttention-3's sliding window: query i
    sees keys i + seqlen_k - seqlen_q - left .. i + seqlen_k - seqlen_q + right (a negative
    bound: unbounded; causal=True sets right = 0). The forward itself is always deterministic; `deterministic`, `schedule`
    and `sm_margin` are what autograd hands to attn_bwd (dash/autograd.py), so
    out.backward() runs the backward chosen here.
    """
    _library.require_library()
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(q.shape[-1])
    return torch.ops.dash.attn_fwd(q, k, v, float(softmax_scale), bool(causal), bool(deterministic),
                                   int(sm_margin), schedule, *_window(window_size), float(softcap))


def attn_bwd(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             out: torch.Tensor, softmax_lse: torch.Tensor, softmax_scale: float | None = None,
             causal: bool = False, deterministic: bool = False, sm_margin: int = 0,
             schedule: str = "auto", dq_trace: torch.Tensor | None = None,
             dq_trace_count: torch.Tensor | None = None, window_size: tuple[int, int] = (-1, -1),
             softcap: float = 0.0):
    """FlashAttention backward: returns (dq, dk, dv).

    Tensors are (batch, seqlen, heads, head_dim) with the last dim contiguous, as in
    flash_attn_interface (k, v, dk, dv with heads_kv heads: GQA / MQA); softmax_lse is fp32 (batch, heads, seqlen_q), natural log.
    causal masks are aligned bottom-right when seqlen_q != seqlen_k. With
    deterministic=True every dQ tile adds its partial sums in one fixed order, so the
    result is bitwise reproducible; with schedule="auto" it is also the same on any grid
    (sm_margin, SM count, heads or sequences per launch: README, reproducibility contract),
    while "shift" / "symmetric_shift" are faster on some shapes but grid-dependent.
    schedule ("auto", "ascending", "descending", "shift",
    "symmetric_shift", "diagonal" (banded masks), or "fa3_baseline": the DASH paper's
    baseline order, for comparison)
    picks the order in which KV tiles visit Q tiles and add into dQ;
    attn_bwd_plan() says what runs and why. sm_margin keeps that many SMs out of the
    persistent grid.
    dq_trace / dq_trace_count (int32, from trace_buffers()) record, per dQ tile, the KV
    tiles in the order they added.
    """
    _library.require_library()
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(q.shape[-1])
    return torch.ops.dash.attn_bwd(dout, q, k, v, out, softmax_lse, float(softmax_scale), bool(causal),
                                   bool(deterministic), int(sm_margin), schedule, dq_trace, dq_trace_count,
                                   *_window(window_size), float(softcap))


def attn_bwd_plan(q: torch.Tensor, k: torch.Tensor, causal: bool = False, deterministic: bool = False,
                  schedule: str = "auto", sm_margin: int = 0, window_size: tuple[int, int] = (-1, -1),
                  softcap: float = 0.0, head_dim_v: int | None = None) -> dict:
    """What attn_bwd runs for these shapes, without running it: {"schedule", "grid",
    "sm_count", "kv_parts", "deal_chunk", "reason"}. A requested schedule whose preconditions fail falls
    back to "ascending" (full mask), "descending" (causal) or "diagonal" (sliding window), and "reason"
    says why. head_dim_v: v's head dim (None: k's)."""
    _library.require_library()
    text = torch.ops.dash.attn_bwd_plan(q, k, bool(causal), bool(deterministic), schedule, int(sm_margin),
                                        *_window(window_size), float(softcap),
                                        -1 if head_dim_v is None else int(head_dim_v))
    return _parse_plan(text)


def _parse_plan(text: str) -> dict:
    """The plan ops' "schedule=..;grid=..;sm_count=..;kv_parts=..;deal_chunk=..;reason=.." (reason last: it
    may hold ';')."""
    fields = dict(item.split("=", 1) for item in text.split(";", 5))
    return dict(schedule=fields["schedule"], grid=int(fields["grid"]), sm_count=int(fields["sm_count"]),
                kv_parts=int(fields["kv_parts"]), deal_chunk=int(fields["deal_chunk"]), reason=fields["reason"])


def bwd_tile_shape(head_dim: int, head_dim_v: int | None = None, softcap: float = 0.0) -> tuple[int, int]:
    """(block_m, block_n) of the backward kernel for head dims it supports (asked of the
    library); softcap > 0: the softcap kernel's."""
    return capabilities.bwd_tile_shape(head_dim, head_dim_v, softcap)


def trace_buffers(batch: int, heads: int, seqlen_q: int, seqlen_k: int, head_dim: int, device,
                  head_dim_v: int | None = None, softcap: float = 0.0) -> tuple:
    """Zeroed (dq_trace, dq_trace_count) for attn_bwd's accumulation-order trace (head_dim_v:
    v's head dim, None means head_dim; the pair and softcap pick the backward's tiles).

    dq_trace[b, h, m, i] is the i-th KV tile that added into Q tile m of (b, h)."""
    block_m, block_n = bwd_tile_shape(head_dim, head_dim_v, softcap)
    num_m = -(-seqlen_q // block_m)
    num_n = -(-seqlen_k // block_n)
    trace = torch.zeros(batch, heads, num_m, num_n, dtype=torch.int32, device=device)
    count = torch.zeros(batch, heads, num_m, dtype=torch.int32, device=device)
    return trace, count


def attn_varlen_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
                    cu_seqlens_k: torch.Tensor, max_seqlen_q: int, max_seqlen_k: int,
                    seqused_q: torch.Tensor | None = None, seqused_k: torch.Tensor | None = None,
                    softmax_scale: float | None = None, causal: bool = False, deterministic: bool = False,
                    sm_margin: int = 0, schedule: str = "auto", window_size: tuple[int, int] = (-1, -1),
                    softcap: float = 0.0):
    """FlashAttention forward over a packed (variable-length) batch: returns (out, softmax_lse).

    q is (total_q, heads, head_dim), k and v (total_k, heads_kv, head_dim); sequence b is rows
    cu_seqlens_q[b]:cu_seqlens_q[b+1] of q and cu_seqlens_k[b]:cu_seqlens_k[b+1] of k / v
    (int32 on q's device; seqused_q / seqused_k, if given, how many of them are used).
    max_seqlen_q / max_seqlen_k bound the lengths (checked on the device). softmax_lse is
    fp32 (heads, total_q), as FlashAttention-3 returns it for varlen. causal masks and
    window_size (as attn_fwd's) are aligned bottom-right per sequence. Differentiable in q, k, v (its backward is attn_varlen_bwd with
    this call's deterministic / schedule / sm_margin)."""
    _library.require_library()
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(q.shape[-1])
    return torch.ops.dash.attn_varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                                          int(max_seqlen_q), int(max_seqlen_k), float(softmax_scale), bool(causal),
                                          bool(deterministic), int(sm_margin), schedule, *_window(window_size),
                                          float(softcap))


def attn_varlen_bwd(dout, q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q: int,
                    max_seqlen_k: int, seqused_q=None, seqused_k=None, softmax_scale: float | None = None,
                    causal: bool = False, deterministic: bool = False, sm_margin: int = 0, schedule: str = "auto",
                    dq_trace=None, dq_trace_count=None, window_size: tuple[int, int] = (-1, -1),
                    softcap: float = 0.0):
    """Backward of attn_varlen_fwd: returns (dq, dk, dv) in q's, k's and v's packed layouts.
    deterministic=True: bitwise reproducible (each dQ tile adds in one fixed order; banded
    (causal, sliding-window) packed batches run "diagonal": a sequence's tasks walk up from their diagonal Q tiles and
    each dQ tile adds from its diagonal KV tile back to the first KV tile of its band, the order the partials
    arrive in; full masks "ascending"; "descending" may be requested).
    dq_trace / dq_trace_count: from varlen_trace_buffers()."""
    _library.require_library()
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(q.shape[-1])
    return torch.ops.dash.attn_varlen_bwd(dout, q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k, seqused_q,
                                          seqused_k, int(max_seqlen_q), int(max_seqlen_k), float(softmax_scale),
                                          bool(causal), bool(deterministic), int(sm_margin), schedule, dq_trace,
                                          dq_trace_count, *_window(window_size), float(softcap))


def attn_varlen_bwd_plan(q, k, cu_seqlens_q, cu_seqlens_k, max_seqlen_q: int, max_seqlen_k: int,
                         causal: bool = False, deterministic: bool = False, schedule: str = "auto",
                         sm_margin: int = 0, window_size: tuple[int, int] = (-1, -1), softcap: float = 0.0,
                         head_dim_v: int | None = None) -> dict:
    """What attn_varlen_bwd runs (schedule, grid bound, reason), without running it.
    head_dim_v: v's head dim (None: k's)."""
    _library.require_library()
    text = torch.ops.dash.attn_varlen_bwd_plan(q, k, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
                                               int(max_seqlen_k), bool(causal), bool(deterministic), schedule,
                                               int(sm_margin), *_window(window_size), float(softcap),
                                               -1 if head_dim_v is None else int(head_dim_v))
    return _parse_plan(text)


def varlen_trace_buffers(heads: int, cu_seqlens_q, max_seqlen_q: int, max_seqlen_k: int, head_dim: int,
                         device, head_dim_v: int | None = None, softcap: float = 0.0) -> tuple:
    """Zeroed (dq_trace, dq_trace_count) for attn_varlen_bwd's accumulation-order trace,
    indexed by dQ tile number (dash.geometry.SeqGeometry.dq_tile): dq_trace[t, i] is the
    i-th KV tile that added into dQ tile t. head_dim_v and softcap as trace_buffers'."""
    from .geometry import SeqGeometry
    block_m, block_n = bwd_tile_shape(head_dim, head_dim_v, softcap)
    cu = [int(x) for x in cu_seqlens_q]
    geo = SeqGeometry.packed(heads, 1, cu, cu, max_seqlen_q, max_seqlen_q, block_m)
    num_n = -(-max_seqlen_k // block_n)
    trace = torch.zeros(geo.num_dq_tiles(), num_n, dtype=torch.int32, device=device)
    count = torch.zeros(geo.num_dq_tiles(), dtype=torch.int32, device=device)
    return trace, count
