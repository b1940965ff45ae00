"""Backward steady-state TFLOPS with the SM clock and board power (nvidia-smi, every 50 ms) during
each timed window: bench_bwd's problems and implementations, each run 2 s untimed, then 1.5 s timed.
  python bwd_clock_probe.py HDIM:SEQLEN:MASK ... --impl dash_det dash fa3 fa3_det"""
import argparse, datetime, os, pathlib, subprocess, sys, time
import torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
from bench_bwd import Problem, make_fn, parse_hdim, run_queued  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("problems", nargs="+")
ap.add_argument("--impl", nargs="+", default=["dash_det", "dash", "fa3", "fa3_det"])
args = ap.parse_args()
log = os.path.join(os.environ.get("OUT", "/tmp"), "smi_bwd.csv")
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
                        "--format=csv,noheader,nounits", "-lms", "50"], stdout=open(log, "w"))
time.sleep(1)
windows = []
for spec in args.problems:
    hd, seqlen, mask = spec.split(":")
    d, dv = parse_hdim(hd)
    prob = Problem(int(seqlen), d, mask == "causal", 16384, 2048 if d <= 128 else 3072, head_dim_v=dv)
    for impl in args.impl:
        fn = make_fn(prob, impl)
        if fn is None:
            continue
        run_queued(fn, 2.0, 0)
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        w0 = time.time(); ev[0].record(); n = 0
        while time.time() - w0 < 1.5:
            fn(); n += 1
        ev[1].record(); torch.cuda.synchronize(); w1 = time.time()
        ms = ev[0].elapsed_time(ev[1]) / n
        windows.append((impl, spec, prob.flops / (ms * 1e-3) / 1e12, w0 + 0.2, w1))
smi.terminate(); smi.wait()
rows = []
for line in open(log):
    p = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((ts, float(p[1]), float(p[2]), float(p[3])))
    except Exception:
        pass
print("| impl | problem | TFLOPS | SM MHz (mean) | power W (mean) | temp C | TFLOPS / GHz |")
print("|---|---|---:|---:|---:|---:|---:|")
for impl, spec, tf, a, b in windows:
    sel = [r for r in rows if a <= r[0] <= b]
    if sel:
        mhz = sum(r[1] for r in sel) / len(sel)
        print(f"| {impl} | {spec} | {tf:.1f} | {mhz:.0f} | {sum(r[2] for r in sel)/len(sel):.0f} | "
              f"{sum(r[3] for r in sel)/len(sel):.0f} | {tf / mhz * 1000:.1f} |")
    else:
        print(f"| {impl} | {spec} | {tf:.1f} | - | - | - | - |")
