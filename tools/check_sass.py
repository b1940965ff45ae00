"""Disassembles the op library and checks every main backward kernel: WGMMA present
(HGMMA), TMA loads (UTMALDG), bulk reduce-adds (UBLKRED), and no local-memory traffic
(LDL/STL = register spills). Exit code 1 if a check fails.

  python tools/check_sass.py dash/_C.abi3.so
Uses cuobjdump from PATH, CUDA_HOME, or the copy Triton ships."""
import collections
import os
import pathlib
import re
import shutil
import subprocess
import sys


def find_cuobjdump():
    candidates = [shutil.which("cuobjdump")]
    if os.environ.get("CUDA_HOME"):
        candidates.append(os.path.join(os.environ["CUDA_HOME"], "bin", "cuobjdump"))
    try:
        import triton
        candidates.append(str(pathlib.Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"))
    except ImportError:
        pass
    for c in candidates:
        if c and os.path.isfile(c):
            return c
    sys.exit("cuobjdump not found (install the CUDA toolkit or triton)")


def main(path):
    sass = subprocess.run([find_cuobjdump(), "--dump-sass", path], capture_output=True, text=True, check=True).stdout
    kernels = collections.OrderedDict()
    current = None
    for line in sass.splitlines():
        match = re.search(r"Function : (\S+)", line)
        if match:
            current = match.group(1)
            kernels[current] = collections.Counter()
            continue
        if current is None:
            continue
        for op in ("HGMMA", "UTMALDG", "UBLKRED", "UBLKCP", "LDL", "STL", "USETMAXREG"):
            if re.search(rf"\b{op}\b", line):
                kernels[current][op] += 1
    failed = False
    for name, counts in kernels.items():
        if "attn_bwd_sm90_kernel" not in name:
            continue
        config = re.search(r"BwdConfigILi(\d+)EN7cutlass(\w+?)ELb(\d)", name)
        label = f"hdim{config.group(1)} {config.group(2).replace('6half_t', 'fp16').replace('10bfloat16_t', 'bf16')} " \
                f"{'causal' if config.group(3) == '1' else 'full'}" if config else name[:60]
        ok = counts["HGMMA"] > 0 and counts["UTMALDG"] > 0 and counts["UBLKRED"] > 0 and \
            counts["LDL"] == 0 and counts["STL"] == 0
        failed |= not ok
        print(f"{label:28s} HGMMA {counts['HGMMA']:3d}  UTMALDG {counts['UTMALDG']:3d}  UBLKRED {counts['UBLKRED']:2d}  "
              f"UBLKCP {counts['UBLKCP']:2d}  LDL {counts['LDL']}  STL {counts['STL']}  {'ok' if ok else 'FAIL'}")
    if not any("attn_bwd_sm90_kernel" in k for k in kernels):
        print("no backward kernel found")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(next(pathlib.Path("dash").glob("_C*.so"))))
