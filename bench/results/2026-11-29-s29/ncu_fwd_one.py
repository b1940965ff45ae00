"""One dash forward on one bench_fwd problem, softcap optional, called 8 times (ncu profiles one main
kernel: --launch-skip 5 --launch-count 1 with a kernel-name filter).
  python ncu_fwd_one.py HDIM SEQLEN MASK SOFTCAP"""
import pathlib, sys
import torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from bench_fwd import FwdProblem  # noqa: E402
hd, seqlen, mask, softcap = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
prob = FwdProblem(seqlen, hd, mask == "causal", 16384, 2048, softcap=softcap)
fn = prob.dash_fn()
for _ in range(8):
    fn()
torch.cuda.synchronize()
