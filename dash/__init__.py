"""dash: bitwise-deterministic FlashAttention backward for NVIDIA Hopper (sm90)."""
from . import reference
from ._library import LOADED as library_loaded
from .ops import (attn_bwd, attn_bwd_plan, attn_fwd, attn_varlen_bwd, attn_varlen_bwd_plan, attn_varlen_fwd,
                  bwd_tile_shape, trace_buffers, varlen_trace_buffers)
from .patch import patch_flash_attn_interface

if library_loaded:
    from . import autograd as _autograd  # noqa: F401  (registers attn_fwd's backward)

__all__ = ["attn_fwd", "attn_bwd", "attn_bwd_plan", "attn_varlen_fwd", "attn_varlen_bwd", "attn_varlen_bwd_plan",
           "bwd_tile_shape", "trace_buffers", "varlen_trace_buffers", "reference",
           "library_loaded", "patch_flash_attn_interface"]
