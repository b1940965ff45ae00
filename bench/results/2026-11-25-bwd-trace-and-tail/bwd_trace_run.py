"""Traced backward (hdim 128 / 64, full / causal, det / non-det): clock64 stamps of 4 CTAs' steps and
every CTA's tasks (globaltimer)."""
import ctypes, os, time, sys
import numpy as np
import torch
import dash

out = os.environ.get("OUT", "/tmp")
SCHED = os.environ.get("SCHED", "auto")
HDS = [int(x) for x in os.environ.get("HDS", "128 64").split()]
CAUSALS = [bool(int(x)) for x in os.environ.get("CAUSALS", "0 1").split()]
DETS = [bool(int(x)) for x in os.environ.get("DETS", "1 0").split()]
lib = ctypes.CDLL(os.path.join(os.path.dirname(dash.__file__), "_C.abi3.so"))
for hd in HDS:
    for seqlen in (4096, 16384):
        for causal in CAUSALS:
            for det in DETS:
                batch, heads = 16384 // seqlen, 2048 // hd
                name = "band" if causal else "full"
                copy = getattr(lib, f"dash_bwd_trace_copy_{hd}_{name}")
                copy.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong]
                clear = getattr(lib, f"dash_bwd_trace_clear_{hd}_{name}")
                q, k, v, do = (torch.randn(batch, seqlen, heads, hd, device="cuda", dtype=torch.bfloat16) for _ in range(4))
                scale = hd ** -0.5
                # out and LSE from SDPA's flash kernel (this library holds only the traced backward units)
                res = torch.ops.aten._scaled_dot_product_flash_attention(
                    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), 0.0, causal, False, scale=scale)
                o = res[0].transpose(1, 2).contiguous(); lse = res[1].contiguous()
                f = lambda: dash.attn_bwd(do, q, k, v, o, lse, scale, causal, det, schedule=SCHED if det else 'auto')
                t0 = time.time()
                while time.time() - t0 < 1.5:
                    f()
                torch.cuda.synchronize()
                ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
                ev[0].record()
                for _ in range(30): f()
                ev[1].record(); torch.cuda.synchronize()
                ms = ev[0].elapsed_time(ev[1]) / 30
                flops = 2.5 * 4 * batch * heads * seqlen * seqlen * hd / (2 if causal else 1)
                rc0 = clear()
                f(); torch.cuda.synchronize()
                steps = np.zeros((4, 2048, 10), dtype=np.int64); tasks = np.zeros((1024, 64, 6), dtype=np.int64)
                rc = copy(steps.ctypes.data, steps.nbytes, tasks.ctypes.data, tasks.nbytes)
                tag = f"{hd}_{name}_{seqlen}_{SCHED if det else 'nondet'}"
                print(f"{tag}: {ms:.3f} ms, {flops / ms / 1e9:.1f} TFLOPS, rc {rc0} {rc}", flush=True)
                np.save(os.path.join(out, f"st_{tag}.npy"), steps)
                np.save(os.path.join(out, f"tk_{tag}.npy"), tasks)
