"""Where the build finds the CUTLASS/CuTe headers, in this order:

1. ``$CUTLASS_PATH`` (a CUTLASS checkout or its ``include`` folder),
2. the ``third_party/cutlass`` git submodule, if checked out,
3. the ``nvidia-cutlass`` wheel (``pip install nvidia-cutlass==4.2.0.0``), whose
   ``cutlass_library/source/include`` carries the full headers.

Kept free of torch so setup.py and CPU tests can import it on any machine.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib

HOW_TO_GET = ("dash needs the CUTLASS headers: run 'git submodule update --init third_party/cutlass', "
              "or 'pip install nvidia-cutlass==4.2.0.0', or set CUTLASS_PATH to a CUTLASS checkout")


class CutlassNotFound(RuntimeError):
    pass


def _has_headers(include_dir: pathlib.Path) -> bool:
    return (include_dir / "cutlass" / "cutlass.h").is_file() and (include_dir / "cute" / "tensor.hpp").is_file()


def _from_env(env: dict) -> pathlib.Path | None:
    root = env.get("CUTLASS_PATH")
    if not root:
        return None
    root_path = pathlib.Path(root)
    for candidate in (root_path / "include", root_path):
        if _has_headers(candidate):
            return candidate
    raise CutlassNotFound(f"CUTLASS_PATH={root} holds no cutlass/cutlass.h and cute/tensor.hpp. " + HOW_TO_GET)


def _from_wheel() -> pathlib.Path | None:
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = pathlib.Path(location) / "source" / "include"
        if _has_headers(candidate):
            return candidate
    return None


def find_cutlass_include(repo_root: pathlib.Path, env: dict | None = None) -> pathlib.Path:
    """The include directory holding cutlass/ and cute/; raises CutlassNotFound if none."""
    env = os.environ if env is None else env
    found = _from_env(env)
    if found is not None:
        return found
    submodule = repo_root / "third_party" / "cutlass" / "include"
    if _has_headers(submodule):
        return submodule
    found = _from_wheel()
    if found is not None:
        return found
    raise CutlassNotFound(HOW_TO_GET)
