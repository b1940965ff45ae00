"""Installs what building and testing dash need, where it is missing, so that the README's
commands work on a fresh machine (CPU-only or Hopper): torch 2.11 (the version the CUDA 13.0
toolkit and the GPU machine's image match), ninja, pytest, numpy, matplotlib, transformers 5 (for
the integration's tests), and the CUTLASS
headers (the third_party/cutlass submodule if checked out, else the nvidia-cutlass wheel).
An installed torch of another version is kept, with a warning (the build may still work).

  python tools/ensure_deps.py          # what `make build` / `make test` run first
"""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from cutlass_locator import CutlassNotFound, find_cutlass_include  # noqa: E402

TORCH = "torch==2.11.0"
CUTLASS_WHEEL = "nvidia-cutlass==4.2.0.0"
MODULES = {"ninja": "ninja", "pytest": "pytest", "numpy": "numpy", "matplotlib": "matplotlib",
           "transformers": "transformers>=5,<6"}  # transformers: the integration's tests


def missing() -> list[str]:
    wanted = []
    if importlib.util.find_spec("torch") is None:
        wanted.append(TORCH)
    else:
        import torch
        if not torch.__version__.startswith("2.11."):
            print(f"ensure_deps: keeping the installed torch {torch.__version__} (dash is built and tested with "
                  f"{TORCH})", file=sys.stderr)
    wanted += [package for module, package in MODULES.items() if importlib.util.find_spec(module) is None]
    try:
        find_cutlass_include(ROOT)
    except CutlassNotFound:
        wanted.append(CUTLASS_WHEEL)
    return wanted


def main() -> int:
    wanted = missing()
    if not wanted:
        return 0
    print(f"ensure_deps: installing {' '.join(wanted)}", flush=True)
    return subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted])


if __name__ == "__main__":
    sys.exit(main())
