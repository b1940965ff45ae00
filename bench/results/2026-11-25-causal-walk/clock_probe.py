"""Steady-state TFLOPS with the SM clock and board power nvidia-smi sampled during each timed window."""
import os, subprocess, sys, time, re
import torch
sys.path.insert(0, os.getcwd())
import dash
from dash.flash_attn_interface import flash_attn_func as dash_fa
impls = {"dash": dash_fa}
try:
    import flash_attn_interface as fa3
    impls["fa3"] = lambda q, k, v, causal: fa3.flash_attn_func(q, k, v, causal=causal)
except Exception as e:
    print("no fa3:", e)
out = os.environ.get("OUT", "/tmp")
log = os.path.join(out, "smi.csv")
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks.mem", "--format=csv,noheader,nounits", "-lms", "50"],
                       stdout=open(log, "w"))
time.sleep(1)
hd = int(os.environ.get("HDIM", "128"))
windows = []
for seqlen in [int(x) for x in sys.argv[1:]] or [2048, 16384]:
    batch = 16384 // seqlen
    heads = 2048 // hd
    q, k, v = (torch.randn(batch, seqlen, heads, hd, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for causal in (False, True):
        for name, f in impls.items():
            g = lambda: f(q, k, v, causal=causal)
            t0 = time.time()
            while time.time() - t0 < 2.0: g()
            torch.cuda.synchronize()
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
            w0 = time.time(); ev[0].record(); n = 0
            while time.time() - w0 < 1.5:
                g(); n += 1
            ev[1].record(); torch.cuda.synchronize(); w1 = time.time()
            ms = ev[0].elapsed_time(ev[1]) / n
            flops = 4 * batch * heads * seqlen * seqlen * hd / (2 if causal else 1)
            windows.append((name, seqlen, "causal" if causal else "full", flops / ms / 1e9, w0 + 0.2, w1))
smi.terminate(); smi.wait()
rows = []
import datetime
for line in open(log):
    p = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((ts, float(p[1]), float(p[2]), float(p[3])))
    except Exception:
        pass
print("| impl | seqlen | mask | TFLOPS | SM MHz (mean) | power W (mean) | samples |")
print("|---|---:|---|---:|---:|---:|---:|")
for name, s, m, tf, a, b in windows:
    sel = [r for r in rows if a <= r[0] <= b]
    if sel:
        print(f"| {name} | {s} | {m} | {tf:.1f} | {sum(r[1] for r in sel)/len(sel):.0f} | {sum(r[2] for r in sel)/len(sel):.0f} | {len(sel)} |")
    else:
        print(f"| {name} | {s} | {m} | {tf:.1f} | - | - | 0 |")
