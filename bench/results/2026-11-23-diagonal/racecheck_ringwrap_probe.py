# racecheck probe: fixed-length calls where each CTA runs many steps (the dQ record ring wraps)
import sys, pathlib, torch
sys.path.insert(0, str(pathlib.Path.cwd())); sys.path.insert(0, str(pathlib.Path.cwd() / "tests"))
import dash
from gpu_helpers import make_inputs, run_dash
for causal, sched in ((True, "symmetric_shift"), (False, "shift"), (True, "descending")):
    for det in (False, True):
        x = make_inputs(1, 1024, 1024, 1, 128, torch.bfloat16, causal, seed=1)
        run_dash(x, causal, deterministic=det, schedule=sched, sm_margin=130)
        torch.cuda.synchronize()
        print("fixed 1024 sm_margin=130", causal, sched, det, "ok", flush=True)
