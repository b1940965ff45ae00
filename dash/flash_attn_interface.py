"""Drop-in for FlashAttention-3's `flash_attn_interface` module, backed by dash's kernels.

flash_attn_func, flash_attn_qkvpacked_func and flash_attn_varlen_func take the arguments
of FlashAttention-3 (hopper/flash_attn_interface.py) under the same names, positions and
defaults, and return what it returns: `out`, or `(out, softmax_lse)` with
return_attn_probs=True. `dash.patch_flash_attn_interface()` makes `import
flash_attn_interface` resolve to this module.

What dash runs: fixed-length (flash_attn_func, flash_attn_qkvpacked_func) and packed
variable-length batches (flash_attn_varlen_func with cu_seqlens / seqused, and
flash_attn_varlen_qkvpacked_func); MHA, GQA and MQA (k and v with heads_kv heads, q's heads a
multiple of them; pack_gqa is a speed hint in FlashAttention-3 and accepted, dash always
keeps a group's query heads on one K/V load); the head dims and dtypes of dash.capabilities
(64, 96, 128, 192 and 256, and 192 with v's 128; bf16/fp16); full, causal and sliding-window masks (window_size, bottom-right
aligned as in FlashAttention-3), softcap (scores capped to softcap * tanh(score / softcap)
before the softmax, as in FlashAttention-3). Every argument value outside that raises NotImplementedError
naming the argument and the value, instead of being ignored: qv, q/k/v_descale, attention_chunk
!= 0, num_splits != 1, other head dims or dtypes, empty fixed-length tensors, softmax_scale
<= 0, as well as FlashAttention-3's inference entry points (flash_attn_with_kvcache,
flash_attn_combine, get_scheduler_metadata).

Differences from FlashAttention-3:
  * deterministic defaults to None, meaning torch.are_deterministic_algorithms_enabled()
    decides at call time (under torch.compile the flag is guarded, so flipping it
    recompiles). True runs dash's ordered, bitwise reproducible backward; False the
    unordered one.
  * softmax_lse carries no gradient (FlashAttention-3 ignores it in its backward too);
    see dash/autograd.py.
  * qkvpacked's backward returns dqkv through autograd's unbind/split (one extra copy
    into the packed gradient) instead of writing the packed buffer in place.
"""
from __future__ import annotations

import math

import torch

from . import _library, capabilities, ops

__all__ = ["flash_attn_func", "flash_attn_qkvpacked_func", "flash_attn_varlen_func", "flash_attn_varlen_qkvpacked_func",
           "flash_attn_with_kvcache",
           "flash_attn_combine", "get_scheduler_metadata"]



def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"Tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    return repr(value)


def _not_supported(func: str, argument: str, value, detail: str = "") -> NotImplementedError:
    message = f"dash {func}: {argument}={_describe(value)} is not supported by dash"
    return NotImplementedError(message + (f" ({detail})" if detail else ""))


def _window(func: str, window_size) -> tuple[int, int]:
    return ops._window(window_size, f"dash {func}")


def _check_options(func: str, *, qv=None, q_descale=None, k_descale=None, v_descale=None, attention_chunk=0,
                   num_splits=1, pack_gqa=None) -> None:
    """NotImplementedError for every FlashAttention-3 feature dash lacks."""
    if qv is not None:
        raise _not_supported(func, "qv", qv, "no extra query-value term")
    for name, descale in (("q_descale", q_descale), ("k_descale", k_descale), ("v_descale", v_descale)):
        if descale is not None:
            raise _not_supported(func, name, descale, "no FP8 inputs")
    if attention_chunk != 0:
        raise _not_supported(func, "attention_chunk", attention_chunk, "only 0")
    if num_splits != 1:
        raise _not_supported(func, "num_splits", num_splits, "only 1: dash does not split the KV sequence")


def _check_tensors(func: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rank: int = 4) -> None:
    """NotImplementedError for shapes and dtypes FlashAttention-3 takes and dash does not
    (rank 4: (batch, seqlen, heads, d); rank 3: a packed batch's (total, heads, d)).
    Malformed inputs (wrong rank, mixed dtypes, mismatched batch) are left to the op's own
    checks, which raise ValueError / TypeError as for dash.attn_fwd."""
    if q.dtype not in capabilities.dtypes():
        raise _not_supported(func, "q.dtype", q.dtype,
                             "supported: " + ", ".join(str(d) for d in capabilities.dtypes()))
    if q.dim() != rank or k.dim() != rank or v.dim() != rank:
        return
    head_dim, head_dim_v = q.shape[-1], v.shape[-1]
    if not capabilities.supports(head_dim, head_dim_v):
        if head_dim in capabilities.head_dims():
            raise _not_supported(func, "head_dim_v", head_dim_v, f"with head_dim {head_dim}; supported head dims: "
                                 + capabilities.describe_head_dims())
        raise _not_supported(func, "head_dim", head_dim, "supported head dims: " + capabilities.describe_head_dims())
    # Fail before the forward runs, not in the backward after it.
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    if needs_grad and not capabilities.supports(head_dim, head_dim_v, backward=True):
        raise _not_supported(func, "head_dim" if head_dim == head_dim_v else "head_dim_v",
                             head_dim if head_dim == head_dim_v else head_dim_v,
                             "forward only so far (inputs require grad): backward head dims: "
                             + capabilities.describe_head_dims(backward=True))
    if rank == 3:
        return  # packed batches: empty sequences and batches are fine
    heads_q = q.shape[2]
    for name, size in (("batch", q.shape[0]), ("seqlen_q", q.shape[1]), ("seqlen_k", k.shape[1]),
                       ("num_heads", heads_q)):
        if size == 0:
            raise _not_supported(func, name, size, "empty inputs: every size must be >= 1")


def _resolve_deterministic(deterministic) -> bool:
    """None (the default): torch.are_deterministic_algorithms_enabled() decides."""
    if deterministic is None:
        return torch.are_deterministic_algorithms_enabled()
    return bool(deterministic)


def _last_dim_contiguous(t: torch.Tensor) -> torch.Tensor:
    # As FlashAttention-3 does: other strides are free, a strided last dim costs a copy.
    return t if t.stride(-1) == 1 else t.contiguous()


def _default_scale(head_dim) -> float:
    """head_dim ** -0.5 (as FlashAttention-3 computes it) as a Python float, also when
    torch.compile(dynamic=True) makes head_dim symbolic (comparing it with the supported
    dims specializes it)."""
    for supported in capabilities.head_dims():
        if head_dim == supported:
            return supported ** -0.5
    return head_dim ** -0.5


def _prepare(func: str, q, k, v, softmax_scale, rank: int):
    """The checks and conversions both forward paths share: supported dtype and head dim, a
    positive scale (default head_dim ** -0.5), unit last-dim strides."""
    _library.require_library()
    _check_tensors(func, q, k, v, rank)
    if softmax_scale is None:
        softmax_scale = _default_scale(q.shape[-1])
    softmax_scale = float(softmax_scale)
    if math.isfinite(softmax_scale) and softmax_scale <= 0:
        raise _not_supported(func, "softmax_scale", softmax_scale, "must be > 0")
    return (*(_last_dim_contiguous(t) for t in (q, k, v)), softmax_scale)


def _attention(func: str, q, k, v, softmax_scale, causal, deterministic, sm_margin, window, softcap=0.0):
    q, k, v, softmax_scale = _prepare(func, q, k, v, softmax_scale, rank=4)
    return torch.ops.dash.attn_fwd(q, k, v, softmax_scale, bool(causal), _resolve_deterministic(deterministic),
                                   int(sm_margin), "auto", *window, float(softcap))


def flash_attn_func(q, k, v, softmax_scale=None, causal=False, qv=None, q_descale=None, k_descale=None,
                    v_descale=None, window_size=(-1, -1), attention_chunk=0, softcap=0.0, num_splits=1,
                    pack_gqa=None, deterministic=None, sm_margin=0, return_attn_probs=False):
    """Attention of q (batch, seqlen_q, heads, head_dim) over k, v (batch, seqlen_k, heads_kv,
    head_dim), heads a multiple of heads_kv (GQA; MQA: heads_kv = 1), differentiable in q, k, v.

    softmax_scale: None means 1/sqrt(head_dim). causal: bottom-right aligned mask;
    window_size = (left, right): query i sees keys i + seqlen_k - seqlen_q - left ..
    i + seqlen_k - seqlen_q + right (negative: unbounded; causal sets right = 0). A query
    row that sees no key gets out 0 and softmax_lse -inf. deterministic: True for the
    bitwise reproducible backward, False for the unordered one (past head dim 128 the
    ordered one is the faster and runs either way), None (default) follows
    torch.are_deterministic_algorithms_enabled() at call time. sm_margin: SMs the kernels
    leave free. Returns out (batch, seqlen_q, heads, head_dim_v), or (out, softmax_lse)
    with softmax_lse fp32 (batch, heads, seqlen_q) when return_attn_probs=True.
    The other arguments exist for FlashAttention-3 compatibility and accept only their
    default values (NotImplementedError otherwise), except pack_gqa, a speed hint that is
    accepted and ignored.
    """
    func = "flash_attn_func"
    _check_options(func, qv=qv, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale,
                   attention_chunk=attention_chunk, num_splits=num_splits, pack_gqa=pack_gqa)
    out, softmax_lse = _attention(func, q, k, v, softmax_scale, causal, deterministic, sm_margin,
                                  _window(func, window_size), softcap)
    return (out, softmax_lse) if return_attn_probs else out


def _unpack_qkv(func: str, qkv: torch.Tensor, num_heads_q):
    if qkv.dim() == 5:
        if qkv.shape[-3] != 3:
            raise ValueError(f"dash {func}: a 5-D qkv must be (batch, seqlen, 3, heads, head_dim); "
                             f"got shape {tuple(qkv.shape)}")
        return qkv.unbind(dim=-3)
    if qkv.dim() == 4:
        if num_heads_q is None:
            raise ValueError(f"dash {func}: a 4-D qkv (batch, seqlen, heads_q + 2 * heads_k, head_dim) needs "
                             "num_heads_q")
        heads_k, rest = divmod(qkv.shape[2] - num_heads_q, 2)
        if rest != 0 or heads_k < 1:
            raise ValueError(f"dash {func}: qkv has {qkv.shape[2]} heads, which is not num_heads_q "
                             f"({num_heads_q}) + 2 * heads_k")
        return qkv.split([num_heads_q, heads_k, heads_k], dim=-2)
    raise ValueError(f"dash {func}: qkv must be (batch, seqlen, 3, heads, head_dim) or (batch, seqlen, "
                     f"heads_q + 2 * heads_k, head_dim) with num_heads_q; got shape {tuple(qkv.shape)}")


def flash_attn_qkvpacked_func(qkv, softmax_scale=None, causal=False, q_descale=None, k_descale=None,
                              v_descale=None, window_size=(-1, -1), attention_chunk=0, softcap=0.0,
                              deterministic=None, num_heads_q=None, sm_margin=0, return_attn_probs=False):
    """flash_attn_func on q, k, v packed in one tensor: qkv (batch, seqlen, 3, heads,
    head_dim), or 4-D (batch, seqlen, 3 * heads, head_dim) with num_heads_q=heads.
    The gradient arrives in qkv's layout. Arguments and return value as flash_attn_func.
    """
    func = "flash_attn_qkvpacked_func"
    _check_options(func, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale,
                   attention_chunk=attention_chunk)
    q, k, v = _unpack_qkv(func, qkv, num_heads_q)
    out, softmax_lse = _attention(func, q, k, v, softmax_scale, causal, deterministic, sm_margin,
                                  _window(func, window_size), softcap)
    return (out, softmax_lse) if return_attn_probs else out


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_q=None,
                           seqused_k=None, softmax_scale=None, causal=False, qv=None, q_descale=None,
                           k_descale=None, v_descale=None, window_size=(-1, -1), attention_chunk=0, softcap=0.0,
                           num_splits=1, pack_gqa=None, deterministic=None, sm_margin=0, return_attn_probs=False):
    """Attention over a packed (variable-length) batch, differentiable in q, k, v.

    q (total_q, heads, head_dim), k and v (total_k, heads_kv, head_dim); sequence b is rows
    cu_seqlens_q[b]:cu_seqlens_q[b + 1] of q and cu_seqlens_k[b]:cu_seqlens_k[b + 1] of k, v
    (int32 tensors on q's device; seqused_q / seqused_k optionally say how many of those rows
    are used: the rest get out 0). max_seqlen_q / max_seqlen_k bound the lengths (checked on
    the device: a violation is a device-side error, as for invalid cu_seqlens). causal and
    window_size: bottom-right aligned per sequence. Returns out (total_q, heads, head_dim), or (out,
    softmax_lse) with softmax_lse fp32 (heads, total_q) when return_attn_probs=True. Other
    arguments as flash_attn_func.
    """
    func = "flash_attn_varlen_func"
    _check_options(func, qv=qv, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale,
                   attention_chunk=attention_chunk, num_splits=num_splits, pack_gqa=pack_gqa)
    out, softmax_lse = _varlen_attention(func, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                         seqused_q, seqused_k, softmax_scale, causal, deterministic, sm_margin,
                                         _window(func, window_size), softcap)
    return (out, softmax_lse) if return_attn_probs else out


def _varlen_attention(func, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_q, seqused_k,
                      softmax_scale, causal, deterministic, sm_margin, window, softcap=0.0):
    q, k, v, softmax_scale = _prepare(func, q, k, v, softmax_scale, rank=3)
    return torch.ops.dash.attn_varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                                          int(max_seqlen_q), int(max_seqlen_k), softmax_scale, bool(causal),
                                          _resolve_deterministic(deterministic), int(sm_margin), "auto", *window,
                                          float(softcap))


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, softmax_scale=None, causal=False,
                                     q_descale=None, k_descale=None, v_descale=None, window_size=(-1, -1),
                                     attention_chunk=0, softcap=0.0, deterministic=None, num_heads_q=None,
                                     sm_margin=0, return_attn_probs=False):
    """flash_attn_varlen_func on q, k, v packed in one tensor with one cu_seqlens for both
    sides (self-attention): qkv (total, 3, heads, head_dim), or 3-D (total, heads_q + 2 *
    heads_k, head_dim) with num_heads_q (GQA). FlashAttention-3's hopper interface has no
    such function; this follows its flash_attn_qkvpacked_func (the gradient arrives in
    qkv's layout). Returns out (total, heads_q, head_dim), or (out, softmax_lse)."""
    func = "flash_attn_varlen_qkvpacked_func"
    _check_options(func, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale,
                   attention_chunk=attention_chunk)
    window = _window(func, window_size)
    if qkv.dim() == 4:
        if qkv.shape[1] != 3:
            raise ValueError(f"dash {func}: a 4-D qkv must be (total, 3, heads, head_dim); got shape "
                             f"{tuple(qkv.shape)}")
        q, k, v = qkv.unbind(dim=1)
    elif qkv.dim() == 3:
        if num_heads_q is None:
            raise ValueError(f"dash {func}: a 3-D qkv (total, heads_q + 2 * heads_k, head_dim) needs num_heads_q")
        heads_k, rest = divmod(qkv.shape[1] - num_heads_q, 2)
        if rest != 0 or heads_k < 1:
            raise ValueError(f"dash {func}: qkv has {qkv.shape[1]} heads, which is not num_heads_q "
                             f"({num_heads_q}) + 2 * heads_k")
        q, k, v = qkv.split([num_heads_q, heads_k, heads_k], dim=1)
    else:
        raise ValueError(f"dash {func}: qkv must be (total, 3, heads, head_dim) or (total, heads_q + 2 * heads_k, "
                         f"head_dim) with num_heads_q; got shape {tuple(qkv.shape)}")
    out, softmax_lse = _varlen_attention(func, q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, None, None,
                                         softmax_scale, causal, deterministic, sm_margin, window, softcap)
    return (out, softmax_lse) if return_attn_probs else out


# --- FlashAttention-3's private entry points ------------------------------------------
# TransformerEngine, Megatron and ring-attention libraries call these positionally (for
# context parallelism they merge partial results by the returned LSE), so they keep
# FlashAttention-3's parameter names, order and defaults (including its `sequed_q`).

def _flash_attn_forward(q, k, v, k_new=None, v_new=None, qv=None, out_=None, cu_seqlens_q=None, cu_seqlens_k=None,
                        cu_seqlens_k_new=None, seqused_q=None, seqused_k=None, max_seqlen_q=None, max_seqlen_k=None,
                        page_table=None, kv_batch_idx=None, leftpad_k=None, rotary_cos=None, rotary_sin=None,
                        seqlens_rotary=None, q_descale=None, k_descale=None, v_descale=None, softmax_scale=None,
                        causal=False, window_size_left=-1, window_size_right=-1, attention_chunk=0, softcap=0.0,
                        rotary_interleaved=True, scheduler_metadata=None, num_splits=1, pack_gqa=None, sm_margin=0):
    """FlashAttention-3's `_flash_attn_forward`: returns (out, softmax_lse, out_accum,
    softmax_lse_accum), the last two empty (dash does not split the KV sequence). Fixed
    length (q (batch, seqlen, heads, d)) or packed (cu_seqlens_q / _k with max_seqlen_q /
    _k, q (total, heads, d)). out_, if given, receives out and is returned. No autograd:
    callers pair it with _flash_attn_backward in their own autograd.Function. The KV-cache,
    rotary, paged and FP8 arguments raise NotImplementedError when given."""
    func = "_flash_attn_forward"
    for name, value in (("k_new", k_new), ("v_new", v_new), ("cu_seqlens_k_new", cu_seqlens_k_new),
                        ("page_table", page_table), ("kv_batch_idx", kv_batch_idx), ("leftpad_k", leftpad_k),
                        ("rotary_cos", rotary_cos), ("rotary_sin", rotary_sin), ("seqlens_rotary", seqlens_rotary),
                        ("scheduler_metadata", scheduler_metadata)):
        if value is not None:
            raise _not_supported(func, name, value, "KV-cache / rotary / paged inference arguments")
    _check_options(func, qv=qv, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale,
                   attention_chunk=attention_chunk, num_splits=1 if num_splits == 0 else num_splits)
    window = (int(window_size_left), int(window_size_right))
    with torch.no_grad():
        if cu_seqlens_q is not None or cu_seqlens_k is not None:
            if cu_seqlens_q is None or cu_seqlens_k is None or max_seqlen_q is None or max_seqlen_k is None:
                raise ValueError(f"dash {func}: a variable-length call needs cu_seqlens_q, cu_seqlens_k, max_seqlen_q "
                                 "and max_seqlen_k")
            out, softmax_lse = _varlen_attention(func, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                                 max_seqlen_k, seqused_q, seqused_k, softmax_scale, causal, False,
                                                 sm_margin, window, softcap)
        else:
            if seqused_q is not None or seqused_k is not None:
                raise _not_supported(func, "seqused_q", seqused_q, "seqused needs cu_seqlens (a packed batch)")
            out, softmax_lse = _attention(func, q, k, v, softmax_scale, causal, False, sm_margin, window, softcap)
    if out_ is not None:
        out_.copy_(out)
        out = out_
    empty = torch.empty(0, device=out.device)
    return out, softmax_lse, empty, empty.clone()


def _flash_attn_backward(dout, q, k, v, out, softmax_lse, cu_seqlens_q=None, cu_seqlens_k=None, sequed_q=None,
                         sequed_k=None, max_seqlen_q=None, max_seqlen_k=None, dq=None, dk=None, dv=None,
                         softmax_scale=None, is_causal=False, window_size_left=-1, window_size_right=-1, softcap=0.0,
                         deterministic=False, sm_margin=0):
    """FlashAttention-3's `_flash_attn_backward`: writes the gradients into the buffers dq,
    dk, dv (as in FlashAttention-3, a gradient whose buffer is None is not returned) and
    returns softmax_d = rowsum(dout * out) in fp32, shaped like softmax_lse ((batch, heads,
    seqlen_q), or (heads, total_q) for a packed batch; FlashAttention-3 pads it to its tile
    rows). deterministic=True runs dash's ordered, bitwise reproducible backward. dash
    computes into fresh buffers and copies into the given ones (one extra copy each)."""
    func = "_flash_attn_backward"
    window = (int(window_size_left), int(window_size_right))
    _library.require_library()
    if softmax_scale is None:
        softmax_scale = _default_scale(q.shape[-1])
    dout, q, k, v, out = (_last_dim_contiguous(t) for t in (dout, q, k, v, out))
    with torch.no_grad():
        if cu_seqlens_q is not None or cu_seqlens_k is not None:
            if cu_seqlens_q is None or cu_seqlens_k is None or max_seqlen_q is None or max_seqlen_k is None:
                raise ValueError(f"dash {func}: a variable-length call needs cu_seqlens_q, cu_seqlens_k, max_seqlen_q "
                                 "and max_seqlen_k")
            grads = torch.ops.dash.attn_varlen_bwd(dout, q, k, v, out, softmax_lse, cu_seqlens_q, cu_seqlens_k,
                                                   sequed_q, sequed_k, int(max_seqlen_q), int(max_seqlen_k),
                                                   float(softmax_scale), bool(is_causal), bool(deterministic),
                                                   int(sm_margin), "auto", None, None, *window, float(softcap))
            softmax_d = (dout.float() * out.float()).sum(-1).transpose(0, 1).contiguous()
        else:
            grads = torch.ops.dash.attn_bwd(dout, q, k, v, out, softmax_lse, float(softmax_scale), bool(is_causal),
                                            bool(deterministic), int(sm_margin), "auto", None, None, *window,
                                            float(softcap))
            softmax_d = (dout.float() * out.float()).sum(-1).transpose(1, 2).contiguous()
        for given, grad in zip((dq, dk, dv), grads):
            if given is not None:
                given.copy_(grad)
    return softmax_d


def _not_provided(func: str) -> NotImplementedError:
    return NotImplementedError(f"dash {func}: not supported by dash, which provides flash_attn_func, "
                               "flash_attn_qkvpacked_func, flash_attn_varlen_func and "
                               "flash_attn_varlen_qkvpacked_func (training-shaped attention) only")


def flash_attn_with_kvcache(*args, **kwargs):
    """FlashAttention-3's KV-cache (inference) entry point: not supported by dash, raises."""
    raise _not_provided("flash_attn_with_kvcache")


def flash_attn_combine(*args, **kwargs):
    """FlashAttention-3's split-KV combine: not supported by dash, raises."""
    raise _not_provided("flash_attn_combine")


def get_scheduler_metadata(*args, **kwargs):
    """FlashAttention-3's KV-cache scheduler metadata: not supported by dash, raises."""
    raise _not_provided("get_scheduler_metadata")
