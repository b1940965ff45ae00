"""Builds dash._C, the op library holding the sm90 kernels and the torch.ops.dash ops.

The library only registers ops (TORCH_LIBRARY, no Python module init) and is built
against the limited API, so one build loads under any CPython with the same torch.

Environment:
  CUTLASS_PATH          CUTLASS headers (see tools/cutlass_locator.py for the search order)
  DASH_INSTANTIATIONS   comma-separated globs over csrc/instantiations/*.cu stems, e.g.
                        'bwd_hdim128_bf16_*' (default: all); the rest raise a clear error
  MAX_JOBS              parallel compile jobs (ninja)
"""
import fnmatch
import os
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parent


def _default_cuda_home():
    # The nvcc on PATH may be a wrapper script; torch then guesses the wrong toolkit root.
    if os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH"):
        return
    for candidate in ("/usr/local/cuda", "/usr/local/cuda-13.0"):
        if os.path.isfile(os.path.join(candidate, "bin", "nvcc")):
            os.environ["CUDA_HOME"] = candidate
            return


_default_cuda_home()

from setuptools import setup  # noqa: E402
from torch.utils.cpp_extension import BuildExtension, CUDAExtension  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from check_library_errors import check as check_library_errors  # noqa: E402
from cutlass_locator import CutlassNotFound, find_cutlass_include  # noqa: E402


def instantiation_sources():
    all_units = sorted((ROOT / "csrc" / "instantiations").glob("*.cu"))
    patterns = [p.strip() for p in os.environ.get("DASH_INSTANTIATIONS", "*").split(",") if p.strip()]
    chosen = [u for u in all_units if any(fnmatch.fnmatch(u.stem, pat) for pat in patterns)]
    if not chosen:
        sys.exit(f"DASH_INSTANTIATIONS={os.environ.get('DASH_INSTANTIATIONS')!r} matches none of "
                 f"{[u.stem for u in all_units]}")
    return [str(u.relative_to(ROOT)) for u in chosen]


try:
    cutlass_include = find_cutlass_include(ROOT)
except CutlassNotFound as err:
    sys.exit(f"error: {err}")

nvcc_flags = [
    "-O3",
    "-std=c++17",
    "-gencode", "arch=compute_90a,code=sm_90a",
    "--expt-relaxed-constexpr",
    "--use_fast_math",
    "-DNDEBUG",
    "-Xptxas=--warn-on-spills",
]
if os.environ.get("DASH_LINEINFO"):
    nvcc_flags.append("-lineinfo")

def process_libstdcxx():
    """The libstdc++ this process (torch) runs on, as a link input, so the library shares it.

    Named on the link line before the compiler's implicit -lstdc++, it resolves the library's
    C++ runtime references first: a compiler that would link a static libstdc++ (the GPU
    machine's default CXX, /opt/gcc/bin/g++, did) would otherwise put a private copy in, and
    every C++ error the ops throw would crash the process instead of raising
    (tools/check_library_errors.py, run after the build, checks it)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libstdc++.so" in line}
    except OSError:
        return []
    return sorted(paths)[:1]


ext = CUDAExtension(
    name="dash._C",
    sources=[
        "csrc/binding/attn_bwd_op.cpp",
        "csrc/binding/attn_fwd_op.cpp",
        "csrc/binding/capabilities_op.cpp",
        "csrc/binding/attn_varlen_op.cpp",
        "csrc/binding/testing_ops.cu",
        "csrc/launch/bwd_registry.cpp",
        "csrc/launch/bwd_plan.cpp",
        "csrc/launch/fwd_registry.cpp",
        "csrc/launch/varlen_prepare.cu",
        *instantiation_sources(),
    ],
    include_dirs=[str(cutlass_include), str(ROOT / "csrc")],
    extra_compile_args={"cxx": ["-O3", "-std=c++17", "-DNDEBUG"], "nvcc": nvcc_flags},
    extra_link_args=process_libstdcxx(),
    py_limited_api=True,
)


class BuildAndCheck(BuildExtension.with_options(use_ninja=shutil.which("ninja") is not None)):
    """Builds, then checks that the library's C++ errors raise as Python exceptions
    (tools/check_library_errors.py: a compiler that links in a private libstdc++ breaks that)."""

    def run(self):
        super().run()
        for extension in self.extensions:
            problem = check_library_errors(self.get_ext_fullpath(extension.name))
            if problem:
                sys.exit(f"error: {problem}")


setup(
    name="dash",
    version="0.1.0",
    description="Deterministic FlashAttention backward for Hopper (sm90)",
    packages=["dash"],
    ext_modules=[ext],
    cmdclass={"build_ext": BuildAndCheck},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
    python_requires=">=3.9",
    install_requires=["torch"],
)
