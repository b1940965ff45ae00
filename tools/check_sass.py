"""Disassembles the op library and checks every main forward and backward kernel: WGMMA
present (HGMMA), TMA loads (UTMALDG), bulk reduce-adds (UBLKRED, backward), and no local-memory traffic
(LDL/STL, i.e. register spills) in the MMA warpgroups' main loop. Also reports spills
elsewhere: in the MMA warps outside that loop (per task) and in the producer warpgroup (which
runs with 24-40 registers): all of its code, and the most in any one of its per-step loops.
Exit code 1 if a check fails.

  python tools/check_sass.py dash/_C.abi3.so
Uses cuobjdump from PATH, CUDA_HOME, or the copy Triton ships."""
import bisect
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


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


def split_functions(sass):
    functions, name = {}, None
    for line in sass.splitlines():
        match = re.search(r"Function : (\S+)", line)
        if match:
            name = match.group(1)
            functions[name] = []
            continue
        match = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if name and match:
            functions[name].append((int(match.group(1), 16), match.group(2).strip()))
    return functions


def is_spill(ins):
    return re.search(r"\b(LDL|STL)\b", ins) is not None


def loops_issuing(code, opcode):
    """Bodies of the loops in `code` (a backward branch and what it jumps back over) that issue
    `opcode`. `code` is in address order: a body is a slice, and a running count of `opcode`
    says whether it issues one (the whole library's check then takes seconds, not minutes)."""
    addresses = [a for a, _ in code]
    issues = re.compile(rf"\b{opcode}\b")
    issued_before = [0]
    for _, ins in code:
        issued_before.append(issued_before[-1] + (issues.search(ins) is not None))
    loops = []
    for end, (addr, ins) in enumerate(code):
        match = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", ins)
        if match and int(match.group(1), 16) < addr:
            begin = bisect.bisect_left(addresses, int(match.group(1), 16))
            if issued_before[end + 1] > issued_before[begin]:
                loops.append(code[begin:end + 1])
    return loops


def innermost(loops):
    spans = [(body[0][0], body[-1][0]) for body in loops]
    return [body for body, span in zip(loops, spans)
            if not any(other != span and span[0] <= other[0] and other[1] <= span[1] for other in spans)]


def analyse(instructions):
    count = lambda op, seq: sum(re.search(rf"\b{op}\b", i) is not None for _, i in seq)  # noqa: E731
    dealloc = next((a for a, i in instructions if "USETMAXREG.DEALLOC" in i), None)
    mma = [(a, i) for a, i in instructions if dealloc is None or a < dealloc]
    producer = [(a, i) for a, i in instructions if dealloc is not None and a >= dealloc]
    # The MMA main loop: the innermost (shortest) loop of the MMA warps' code that issues HGMMA.
    main_loop = min(loops_issuing(mma, "HGMMA"), key=len, default=[])
    main_spills = sum(is_spill(i) for _, i in main_loop)
    # The producer's per-step loops: the innermost loops that issue a TMA load (one per
    # schedule, stream and dealing; a wait's retry loop issues none).
    step_spills = [sum(is_spill(i) for _, i in body) for body in innermost(loops_issuing(producer, "UTMALDG"))]
    return dict(hgmma=count("HGMMA", instructions), utmaldg=count("UTMALDG", instructions),
                ublkred=count("UBLKRED", instructions), main_loop_len=len(main_loop), main_spills=main_spills,
                mma_other_spills=sum(is_spill(i) for _, i in mma) - main_spills,
                producer_spills=sum(is_spill(i) for _, i in producer),
                producer_step_spills=max(step_spills, default=0))


def dump_sass(path):
    """The library's SASS: its cubins extracted (cuobjdump -xelf) and disassembled in parallel,
    one process each (the whole library in one cuobjdump call took ~1.5 minutes, one core)."""
    cuobjdump = find_cuobjdump()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([cuobjdump, "-xelf", "all", os.path.abspath(path)], cwd=tmp, capture_output=True, check=True)
        # In the library's order (cuobjdump numbers them: _C.abi3.<n>.sm_90.cubin).
        cubins = sorted(pathlib.Path(tmp).glob("*.cubin"),
                        key=lambda c: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", c.name)])
        if not cubins:
            return subprocess.run([cuobjdump, "--dump-sass", path], capture_output=True, text=True, check=True).stdout
        dump = lambda cubin: subprocess.run([cuobjdump, "--dump-sass", str(cubin)], capture_output=True,  # noqa: E731
                                            text=True, check=True).stdout
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            return "".join(pool.map(dump, cubins))


def main(path):
    sass = dump_sass(path)
    failed, found = False, False
    for name, instructions in split_functions(sass).items():
        kind = "bwd" if "attn_bwd_sm90_kernel" in name else "fwd" if "attn_fwd_sm90_kernel" in name else None
        if kind is None:
            continue
        found = True
        r = analyse(instructions)
        config = re.search(r"(?:Bwd|Fwd)ConfigILi(\d+)ELi(\d+)E", name)
        dtype = "fp16" if "half_t" in name else "bf16"
        mask = "band" if "BandMask" in name else "full"
        softcap = " softcap" if re.search(r"(?:Band|Full)MaskELb1E", name) else ""
        dims = (config.group(1) if config.group(1) == config.group(2) else f"{config.group(1)}x{config.group(2)}"
                if config else "")
        label = f"{kind} hdim{dims} {dtype} {mask}{softcap}" if config else name[:40]
        ok = r["hgmma"] > 0 and r["utmaldg"] > 0 and (kind == "fwd" or r["ublkred"] > 0) and \
            r["main_loop_len"] > 0 and r["main_spills"] == 0
        failed |= not ok
        print(f"{label:32s} HGMMA {r['hgmma']:3d} UTMALDG {r['utmaldg']:3d} UBLKRED {r['ublkred']:2d} | "
              f"MMA main loop ({r['main_loop_len']} instr) LDL/STL {r['main_spills']} | "
              f"MMA per-task {r['mma_other_spills']} | producer warps {r['producer_spills']} "
              f"(a step loop <= {r['producer_step_spills']}) | {'ok' if ok else 'FAIL'}")
    if not found:
        print("no attention kernel found")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(next(pathlib.Path("dash").glob("_C*.so"))))
