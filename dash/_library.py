"""Loads the compiled op library (dash/_C*.so) into torch.ops.dash."""
from __future__ import annotations

import pathlib

import torch

_HERE = pathlib.Path(__file__).resolve().parent
_load_error: str | None = None


def _find_library() -> pathlib.Path | None:
    candidates = sorted(_HERE.glob("_C*.so"))
    return candidates[0] if candidates else None


def _load() -> bool:
    global _load_error
    path = _find_library()
    if path is None:
        _load_error = ("dash's op library is not built: run 'make build' "
                       "(or 'pip install --no-build-isolation .') in the repository")
        return False
    try:
        torch.ops.load_library(str(path))
    except OSError as err:  # e.g. built against another torch
        _load_error = f"dash could not load {path.name}: {err}"
        return False
    return True


LOADED = _load()


def require_library() -> None:
    if not LOADED:
        raise RuntimeError(_load_error)
