"""Checks that a built op library reports its C++ errors as Python exceptions.

The ops validate their arguments in C++ and throw c10 errors, which torch turns into Python
exceptions. That only works when the library shares the process's C++ runtime (libstdc++,
loaded by torch). A compiler whose link step puts a private, static copy of libstdc++ into the
library gives one whose every thrown error kills the process with a segmentation fault
instead: bad input would crash a training script rather than raise. The GPU machine's default
`CXX=/opt/gcc/bin/g++` (a wrapper around g++ 13 with its own library search path) built such a
library on 2026-11-27 (bench/RESULTS.md item 129). setup.py now names the running torch's
libstdc++ on the link line, which keeps that compiler's build on the shared runtime, and runs
this check after every build (the child process catches a crash); the build fails with the
reason. Needs no GPU: the error asked for is the unsupported head dim check, which comes
before the device check.

  python tools/check_library_errors.py dash/_C.abi3.so      # exit 0: errors raise; else why not
"""
import subprocess
import sys

_CHILD = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
q = torch.zeros(1, 8, 1, 72, dtype=torch.bfloat16)
try:
    torch.ops.dash.attn_fwd(q, q, q, 0.125, False)
except ValueError as err:
    sys.exit(0 if "head_dim 72" in str(err) else 4)
sys.exit(5)
"""

_REASONS = {
    4: "attn_fwd raised ValueError, but not the head-dim error this check asks for",
    5: "attn_fwd accepted head_dim 72 instead of raising ValueError",
}


def check(library_path):
    """None if the library raises its errors as Python exceptions; otherwise why not."""
    result = subprocess.run([sys.executable, "-c", _CHILD, str(library_path)], capture_output=True, text=True)
    if result.returncode == 0:
        return None
    if result.returncode < 0 or result.returncode in (139, 134):
        return (f"{library_path}: a C++ error thrown by the library killed the process (signal "
                f"{-result.returncode if result.returncode < 0 else result.returncode - 128}) instead of raising. "
                "The library was most likely linked with a private static copy of libstdc++ (the C++ compiler "
                "in $CXX, or a wrapper of it, links it in). Rebuild with the system compiler, e.g. "
                "CXX=/usr/bin/g++ CC=/usr/bin/gcc.")
    return (f"{library_path}: {_REASONS.get(result.returncode, f'the check exited {result.returncode}')}\n"
            f"{result.stderr[-2000:]}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    problem = check(sys.argv[1])
    if problem:
        sys.exit(problem)
    print(f"{sys.argv[1]}: C++ errors raise as Python exceptions")
