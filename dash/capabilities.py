"""What the compiled library supports, asked of the library itself
(`torch.ops.dash.capabilities()`, generated from csrc/instantiations/traits.py), so Python
never repeats the lists of head dims, dtypes, masks or tile shapes."""
from __future__ import annotations

import json

import torch

from . import _library

_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


# Read once when the library loads (not inside a torch.compile trace, which would try to
# trace the op call).
_CAPABILITIES = json.loads(torch.ops.dash.capabilities()) if _library.LOADED else None


def capabilities() -> dict:
    """{"traits": {"head_dims", "dtypes", "masks", "features", "fwd_tile", "bwd_tile"},
    "compiled": {"fwd": [[head_dim, dtype, mask, score_mod], ...], "bwd": [...]}} (score_mod:
    "plain", or "softcap" for the backward's capped-score instantiations)."""
    _library.require_library()
    return _CAPABILITIES


def head_dims() -> tuple[int, ...]:
    return tuple(capabilities()["traits"]["head_dims"])


def dtypes() -> tuple[torch.dtype, ...]:
    return tuple(_DTYPES[name] for name in capabilities()["traits"]["dtypes"])


def features() -> tuple[str, ...]:
    return tuple(capabilities()["traits"]["features"])


def bwd_tile_shape(head_dim: int) -> tuple[int, int]:
    """(block_m, block_n) of the backward kernel for a supported head dim."""
    return tuple(capabilities()["traits"]["bwd_tile"][str(int(head_dim))])


def fwd_tile_shape(head_dim: int) -> tuple[int, int]:
    """(block_m, block_n) of the forward kernel for a supported head dim."""
    return tuple(capabilities()["traits"]["fwd_tile"][str(int(head_dim))])
