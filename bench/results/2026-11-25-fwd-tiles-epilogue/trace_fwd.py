"""Run the traced forward (hdim 128 full) and dump dash_fwd_trace: [cta][wg][step][8] clock64 stamps."""
import ctypes, json, os, sys, time
import numpy as np
import torch
import dash
from dash.flash_attn_interface import flash_attn_func

out = os.environ.get("OUT", "/tmp")
lib = ctypes.CDLL(os.path.join(os.path.dirname(dash.__file__), "_C.abi3.so"))
fn = lib.dash_fwd_trace_copy
fn.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
shape = (4, 3, 256, 8)
res = {}
for seqlen, batch in [(4096, 4), (16384, 1), (2048, 8)]:
    q, k, v = (torch.randn(batch, seqlen, 16, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    f = lambda: flash_attn_func(q, k, v, causal=False)
    t0 = time.time()
    while time.time() - t0 < 1.0:
        f()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ev[0].record()
    for _ in range(20): f()
    ev[1].record(); torch.cuda.synchronize()
    ms = ev[0].elapsed_time(ev[1]) / 20
    flops = 4 * batch * 16 * seqlen * seqlen * 128
    buf = np.zeros(shape, dtype=np.int64)
    rc = fn(buf.ctypes.data, buf.nbytes)
    print(f"seqlen {seqlen}: {ms:.3f} ms, {flops / ms / 1e9:.1f} TFLOPS, copy rc {rc}")
    np.save(os.path.join(out, f"trace_{seqlen}.npy"), buf)
