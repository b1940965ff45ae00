"""One implementation's forward on bench_varlen's short mix (hdim 128, causal, 16 heads, 16k tokens of
documents 16-1024 long), called 8 times (ncu profiles one main kernel: --launch-skip 5 --launch-count 1
with a kernel-name filter).  python ncu_varlen_one.py IMPL [MIX]"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from bench_varlen import MIXES, VarlenProblem, document_lengths  # noqa: E402

impl = sys.argv[1]
mix = sys.argv[2] if len(sys.argv) > 2 else "short"
prob = VarlenProblem(document_lengths(16384, *MIXES[mix]), 16, 16, 128, True, forward=True)
fn = prob.dash_fn(False) if impl == "dash" else prob.fa3_fn(False)
for _ in range(8):
    fn()
torch.cuda.synchronize()
