"""dash: bitwise-deterministic FlashAttention backward for NVIDIA Hopper (sm90)."""
from . import reference
from ._library import LOADED as library_loaded
from .ops import attn_bwd, attn_bwd_plan, bwd_tile_shape, trace_buffers

__all__ = ["attn_bwd", "attn_bwd_plan", "bwd_tile_shape", "trace_buffers", "reference", "library_loaded"]
