import math, sys, pathlib, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import dash
hdim, seqlen, softcap = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
shape = (16384 // seqlen, seqlen, 2048 // hdim, hdim)
q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) * (2 if softcap else 1) for _ in range(3))
for _ in range(20): dash.attn_fwd(q, k, v, 1 / math.sqrt(hdim), False, softcap=softcap)
torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStart()
dash.attn_fwd(q, k, v, 1 / math.sqrt(hdim), False, softcap=softcap)
torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStop()
