"""Traced hdim 128 forward (full, causal): clock64 stamps of 4 CTAs' steps and every CTA's span."""
import ctypes, os, time, sys
import numpy as np
import torch
import dash
from dash.flash_attn_interface import flash_attn_func

out = os.environ.get("OUT", "/tmp")
lib = ctypes.CDLL(os.path.join(os.path.dirname(dash.__file__), "_C.abi3.so"))
shape = (4, 3, 2048, 10)
for seqlen in [int(x) for x in sys.argv[1:]] or [2048, 16384]:
    batch = 16384 // seqlen
    for causal in (False, True):
        name = "band" if causal else "full"
        copy = getattr(lib, f"dash_fwd_trace_copy_{name}")
        copy.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong]
        clear = getattr(lib, f"dash_fwd_trace_clear_{name}")
        q, k, v = (torch.randn(batch, seqlen, 16, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        f = lambda: flash_attn_func(q, k, v, causal=causal)
        t0 = time.time()
        while time.time() - t0 < 1.5:
            f()
        torch.cuda.synchronize()
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        ev[0].record()
        for _ in range(30): f()
        ev[1].record(); torch.cuda.synchronize()
        ms = ev[0].elapsed_time(ev[1]) / 30
        flops = 4 * batch * 16 * seqlen * seqlen * 128 / (2 if causal else 1)
        rc0 = clear()
        f(); torch.cuda.synchronize()
        buf = np.zeros(shape, dtype=np.int64); cta = np.zeros((1024, 4), dtype=np.int64)
        rc = copy(buf.ctypes.data, buf.nbytes, cta.ctypes.data, cta.nbytes)
        print(f"{name} seqlen {seqlen}: {ms:.3f} ms, {flops / ms / 1e9:.1f} TFLOPS, rc {rc0} {rc}", flush=True)
        np.save(os.path.join(out, f"tr_{name}_{seqlen}.npy"), buf)
        np.save(os.path.join(out, f"cta_{name}_{seqlen}.npy"), cta)
