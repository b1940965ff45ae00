"""One backward implementation on one bench_bwd problem, called 3 times (ncu profiles the 3rd main kernel:
--launch-skip 2 --launch-count 1 with a kernel-name filter).  python ncu_one.py IMPL HDIM SEQLEN MASK"""
import pathlib, sys
import torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
from bench_bwd import Problem, _make_fn  # noqa: E402
impl, hd, seqlen, mask = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
prob = Problem(seqlen, hd, mask == "causal", 16384, 2048)
fn = _make_fn(prob, impl, [])  # runs it 5 times
fn()
torch.cuda.synchronize()
