"""What the compiled library supports, asked of the library itself
(`torch.ops.dash.capabilities()`, generated from csrc/instantiations/traits.py), so Python
never repeats the lists of head dims, dtypes, masks or tile shapes."""
from __future__ import annotations

import json

import torch

from . import _library, _traits
from ._traits import head_dim_name

_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


# Read once when the library loads (not inside a torch.compile trace, which would try to
# trace the op call).
_CAPABILITIES = json.loads(torch.ops.dash.capabilities()) if _library.LOADED else None


def capabilities() -> dict:
    """{"traits": {"head_dims": [[head_dim, head_dim_v], ...], "dtypes", "masks", "features",
    "fwd_tile", "bwd_tile", "bwd_softcap_tile": {"128": [block_m, block_n], "192x128": ...}},
    "fwd_short": {"64": {"tile", "max_seqlen_k", "masks", ...}}, ...},
    "compiled": {"fwd": [[head_dim, head_dim_v, dtype, mask, kind], ...], "bwd": [...]}}
    (kind: the registry keys: "plain" and "softcap" (the backward's capped-score instantiations;
    a forward kernel serving both kinds of call is listed as both, a fixed-offset softcap kernel,
    traits "fwd_capped_softmax", as "softcap" only); "short" / "short_softcap" for the forward's
    short-walk kernels; a head dim pair missing from bwd_tile is forward-only)."""
    _library.require_library()
    return _CAPABILITIES


def head_dim_pairs() -> tuple[tuple[int, int], ...]:
    """The supported (head_dim, head_dim_v) pairs of the forward."""
    return tuple(tuple(p) for p in capabilities()["traits"]["head_dims"])


def head_dims() -> tuple[int, ...]:
    """The supported head dims of q and k (v's: head_dim_pairs())."""
    return tuple(sorted({qk for qk, _ in head_dim_pairs()}))


def _pairs(backward: bool) -> list[tuple[int, int]]:
    keys = capabilities()["traits"]["bwd_tile" if backward else "fwd_tile"]
    return [p for p in head_dim_pairs() if head_dim_name(*p) in keys]


def supports(head_dim: int, head_dim_v: int | None = None, backward: bool = False) -> bool:
    """Whether the forward (backward=True: also the backward) runs these head dims. Compares
    with ==, so under torch.compile(dynamic=True) a symbolic head dim specializes (as a
    comparison with each supported dim does) instead of failing to trace."""
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    return any(head_dim == qk and head_dim_v == v for qk, v in _pairs(backward))


def describe_head_dims(backward: bool = False) -> str:
    """'64, 96, 128, 192, 256; 192 with head_dim_v 128' (the backward's when backward=True)."""
    return _traits.describe_head_dims(_pairs(backward))


def dtypes() -> tuple[torch.dtype, ...]:
    return tuple(_DTYPES[name] for name in capabilities()["traits"]["dtypes"])


def features() -> tuple[str, ...]:
    return tuple(capabilities()["traits"]["features"])


def bwd_tile_shape(head_dim: int, head_dim_v: int | None = None, softcap: float = 0.0) -> tuple[int, int]:
    """(block_m, block_n) of the backward kernel for head dims it supports (head_dim_v:
    None means head_dim); softcap > 0: the softcap kernel's, which may differ (the trait
    table's "bwd_softcap" block)."""
    traits = capabilities()["traits"]
    return tuple(traits["bwd_softcap_tile" if softcap > 0 else "bwd_tile"][head_dim_name(head_dim, head_dim_v)])


def fwd_takes_short_walk(head_dim: int, head_dim_v: int | None = None, *, banded: bool, seqlen_k: int,
                         dtype: torch.dtype = torch.bfloat16, softcap: float = 0.0) -> bool:
    """Whether a forward call runs the head dims' short-walk kernel (the trait table's
    "fwd_short"): it has one for the mask (banded: causal or a window), the call's keys
    (seqlen_k; a packed call's max_seqlen_k) are within its limit, and this build compiled it
    (for softcap > 0, its softcap kernel). The library's own rule (fwd_registry.cpp), asked
    through torch.ops.dash.fwd_takes_short_walk."""
    _library.require_library()
    head_dim_v = head_dim if head_dim_v is None else head_dim_v
    return bool(torch.ops.dash.fwd_takes_short_walk(head_dim, head_dim_v, dtype, banded, seqlen_k, softcap > 0))


def fwd_tile_shape(head_dim: int, head_dim_v: int | None = None, *, banded: bool | None = None,
                   seqlen_k: int | None = None, dtype: torch.dtype = torch.bfloat16,
                   softcap: float = 0.0) -> tuple[int, int]:
    """(block_m, block_n) of the forward kernel for supported head dims; with banded and seqlen_k,
    of the kernel a call with that mask, those keys and that softcap runs (fwd_takes_short_walk)."""
    if banded is not None and seqlen_k is not None and fwd_takes_short_walk(
            head_dim, head_dim_v, banded=banded, seqlen_k=seqlen_k, dtype=dtype, softcap=softcap):
        return tuple(capabilities()["traits"]["fwd_short"][head_dim_name(head_dim, head_dim_v)]["tile"])
    return tuple(capabilities()["traits"]["fwd_tile"][head_dim_name(head_dim, head_dim_v)])
