import os, sys, torch
sys.path.insert(0, os.getcwd())
impl, mask, seqlen = sys.argv[1], sys.argv[2], int(sys.argv[3])
hd = 128; batch = 16384 // seqlen; heads = 16
q, k, v = (torch.randn(batch, seqlen, heads, hd, device="cuda", dtype=torch.bfloat16) for _ in range(3))
if impl == "dash":
    from dash.flash_attn_interface import flash_attn_func as f
else:
    from flash_attn_interface import flash_attn_func as f
for _ in range(4): f(q, k, v, causal=mask == "causal")
torch.cuda.synchronize()
