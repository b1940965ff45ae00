import math, sys, pathlib, torch
sys.path.insert(0, sys.argv[4])
import dash
hdim, seqlen, causal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "causal"
shape = (16384 // seqlen, seqlen, 2048 // hdim, hdim)
q, k, v, do = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(4))
s = 1 / math.sqrt(hdim)
o, lse = dash.attn_fwd(q, k, v, s, causal)
for _ in range(20): dash.attn_bwd(do, q, k, v, o, lse, s, causal, True)
torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStart()
dash.attn_bwd(do, q, k, v, o, lse, s, causal, True)
torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStop()
