"""HF transformers: dash as an attention implementation.

    import dash.integrations.transformers as dash_hf
    dash_hf.register()                     # once, before building the model
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="dash")

Registered through transformers' own extension points (AttentionInterface for the kernel,
AttentionMaskInterface with transformers' flash-attention mask, so the model hands over
the 2-D padding mask, or None, instead of a dense 4-D mask). It does not impersonate the
`flash-attn-3` distribution. What it runs:
  * batches without padding: dash's flash_attn_func;
  * right- or left-padded batches (2-D attention_mask): the tokens are unpadded into a
    packed batch and run through flash_attn_varlen_func (one host sync for the longest
    sequence, as transformers' flash-attention path does);
  * packed sequences (several documents in one row, told apart by position_ids restarting
    at 0, or by the cu_seq_lens_q/k and max_length_q/k keyword arguments of transformers'
    DataCollatorWithFlattening): flash_attn_varlen_func;
  * GQA / MQA as the config has it (no repeat of K/V); causal as the module says;
  * sliding windows (Mistral, Gemma-2 local layers): window_size = (sliding_window - 1,
    sliding_window - 1), as transformers' flash-attention path passes it; softcap (Gemma-2's
    attn_logit_softcapping) as FlashAttention-3's.
Determinism: the ordered backward runs when torch.use_deterministic_algorithms(True) is on
or FLASH_ATTENTION_DETERMINISTIC=1 (what transformers' enable_full_determinism sets).
Attention dropout raises NotImplementedError; so does a query length different from the key
length (generation with a cache).
"""
from __future__ import annotations

import os

import torch

from .. import flash_attn_interface as fai

NAME = "dash"


def deterministic_requested() -> bool:
    return torch.are_deterministic_algorithms_enabled() or os.environ.get("FLASH_ATTENTION_DETERMINISTIC") == "1"


def _cu_seqlens(lengths: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.pad(torch.cumsum(lengths, 0, dtype=torch.int32), (1, 0))


def _packed_from_position_ids(position_ids: torch.Tensor):
    """cu_seqlens of the documents of a (1, total) row whose position_ids restart at 0, or None
    if the row holds one document (positions 0, 1, 2, ... throughout)."""
    flat = position_ids.reshape(-1)
    starts = torch.nonzero(flat == 0).reshape(-1).to(torch.int32)
    if starts.numel() <= 1:
        return None, 0
    total = torch.tensor([flat.numel()], dtype=torch.int32, device=flat.device)
    cu = torch.cat([starts, total])
    return cu, int((cu[1:] - cu[:-1]).max())


def _half_dtype(module: torch.nn.Module, query: torch.Tensor) -> torch.dtype:
    """The 16-bit dtype to run in when the projections hand over fp32 (RoPE in fp32 under
    autocast, or an fp32 model): autocast's dtype, else the module's own 16-bit weights, as
    transformers' flash-attention path decides it."""
    if torch.is_autocast_enabled(query.device.type):
        return torch.get_autocast_dtype(query.device.type)
    for param in module.parameters():
        if param.dtype in (torch.bfloat16, torch.float16):
            return param.dtype
    raise NotImplementedError("dash transformers attention: query is float32 outside autocast and the module has "
                              "no bf16/fp16 weights; dash runs bf16 or fp16 (use autocast or a 16-bit model)")


def dash_attention_forward(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                           attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                           sliding_window: int | None = None, softcap: float | None = None,
                           is_causal: bool | None = None, **kwargs):
    """transformers' attention-function contract: query (batch, heads, q_len, d), key / value
    (batch, heads_kv, kv_len, d); returns (out (batch, q_len, heads, d), None)."""
    func = "dash transformers attention"
    if dropout:
        raise NotImplementedError(f"{func}: attention dropout={dropout} is not supported by dash (set the config's "
                                  "attention_dropout to 0)")
    if kwargs.get("output_attentions"):
        raise NotImplementedError(f"{func}: output_attentions=True (dash returns no attention weights)")
    causal = bool(is_causal if is_causal is not None else getattr(module, "is_causal", True))
    deterministic = deterministic_requested()
    if query.dtype == torch.float32:
        dtype = _half_dtype(module, query)
        query, key, value = (t.to(dtype) for t in (query, key, value))
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))  # (batch, len, heads, d)
    batch, q_len, heads, _ = q.shape
    head_dim_v = v.shape[3]
    kv_len = k.shape[1]
    if q_len != kv_len:
        raise NotImplementedError(f"{func}: query length {q_len} != key length {kv_len} (generation with a cache) "
                                  "is not supported by dash")
    # transformers' flash-attention path: a window only when it is shorter than the keys.
    window = ((sliding_window - 1, sliding_window - 1) if sliding_window is not None and kv_len > sliding_window
              else (-1, -1))
    varlen = dict(softmax_scale=scaling, causal=causal, deterministic=deterministic, window_size=window,
                  softcap=float(softcap or 0.0))

    if attention_mask is not None and attention_mask.dim() == 2 and not bool(attention_mask.all()):
        # Padded batch: gather the real tokens into a packed batch, scatter the result back.
        mask = attention_mask[:, -kv_len:].bool()
        lengths = mask.sum(-1, dtype=torch.int32)
        cu = _cu_seqlens(lengths)
        longest = int(lengths.max())
        index = torch.nonzero(mask.reshape(-1)).reshape(-1)
        packed = [t.reshape(batch * q_len, t.shape[2], t.shape[3]).index_select(0, index) for t in (q, k, v)]
        out_packed = fai.flash_attn_varlen_func(*packed, cu, cu, longest, longest, **varlen)
        out = out_packed.new_zeros(batch * q_len, heads, head_dim_v).index_copy(0, index, out_packed)
        return out.view(batch, q_len, heads, head_dim_v), None

    cu = kwargs.get("cu_seq_lens_q")
    if cu is not None:  # DataCollatorWithFlattening
        cu_k = kwargs.get("cu_seq_lens_k", cu)
        longest_q = int(kwargs.get("max_length_q") or int((cu[1:] - cu[:-1]).max()))
        longest_k = int(kwargs.get("max_length_k") or longest_q)
        out = fai.flash_attn_varlen_func(*(t.reshape(-1, t.shape[2], t.shape[3]) for t in (q, k, v)),
                                         cu.to(torch.int32), cu_k.to(torch.int32), longest_q, longest_k, **varlen)
        return out.view(batch, q_len, heads, head_dim_v), None
    position_ids = kwargs.get("position_ids")
    if position_ids is not None and batch == 1:
        cu, longest = _packed_from_position_ids(position_ids)
        if cu is not None:
            out = fai.flash_attn_varlen_func(*(t.reshape(-1, t.shape[2], t.shape[3]) for t in (q, k, v)), cu, cu,
                                             longest, longest, **varlen)
            return out.view(batch, q_len, heads, head_dim_v), None

    return fai.flash_attn_func(q, k, v, **varlen), None


def register(name: str = NAME) -> str:
    """Registers dash with transformers under `name` (default "dash"): pass
    attn_implementation=name when building a model. Returns the name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask

    AttentionInterface.register(name, dash_attention_forward)
    AttentionMaskInterface.register(name, flash_attention_mask)
    return name
