"""Loops forward + backward calls of banded and packed shapes (the window cases of
tests/test_window.py: rows without keys, keys without rows, packed batches with empty and
one-row documents, every band kind, hdim 64 / 128, both backward modes), each synchronized,
until the deadline, and reports a stall: a watchdog thread prints the call that has not
returned after 15 s, dumps the Python stacks and exits 3. What found the rare stall of
counter-dealt deterministic backward calls (bench/RESULTS.md item 85), which a test file
run hit about once in 30-130 thousand calls.

  python tools/stress_calls.py 60      # seconds; exit 0 and the number of calls if none stalled"""
import faulthandler
import os
import pathlib
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
import torch  # noqa: E402

from band_helpers import (MIXES, NO_KEY, VARLEN_MASKS, make_qkv, make_varlen, run_bwd, run_fwd,  # noqa: E402
                          varlen_bwd, varlen_case, varlen_fwd)

STALL_S = 15


def cases():
    for head_dim in (64, 128):
        for seqlen_q, seqlen_k, causal, window, _ in NO_KEY:
            x = make_qkv(2, seqlen_q, seqlen_k, 4, head_dim, torch.bfloat16, heads_kv=2, seed=seqlen_q)
            yield f"fixed hdim {head_dim} {seqlen_q}x{seqlen_k} causal={causal} window={window}", x, causal, window
        for mix, (lengths_q, lengths_k) in MIXES.items():
            for causal, window in VARLEN_MASKS:
                heads, heads_kv, dtype, seed = varlen_case(mix, causal, window, head_dim)
                x = make_varlen(lengths_q, lengths_k, heads, heads_kv, head_dim, dtype, seed=seed)
                yield f"packed hdim {head_dim} {mix} causal={causal} window={window}", x, causal, window


def main(seconds):
    state = {"calls": 0, "where": "", "beat": time.time()}

    def watchdog():
        while True:
            time.sleep(1)
            if time.time() - state["beat"] > STALL_S:
                print(f"STALL > {STALL_S} s at call {state['calls']}: {state['where']}", flush=True)
                faulthandler.dump_traceback(all_threads=True)
                os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    work = list(cases())
    deadline = time.time() + seconds
    while time.time() < deadline:
        for name, x, causal, window in work:
            for deterministic in (True, False):
                state["beat"], state["where"] = time.time(), f"{name} deterministic={deterministic}"
                if isinstance(x, tuple):
                    q, k, v, dout = x
                    out, lse = run_fwd(q, k, v, causal, window)
                    torch.cuda.synchronize()
                    run_bwd(dout, q, k, v, out, lse, causal, window, deterministic=deterministic)
                else:
                    out, lse = varlen_fwd(x, causal, window)
                    torch.cuda.synchronize()
                    varlen_bwd(x, out, lse, causal, window, deterministic)
                torch.cuda.synchronize()
                state["calls"] += 1
    print(f"{state['calls']} forward + backward calls in {seconds:.0f} s, no stall")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
