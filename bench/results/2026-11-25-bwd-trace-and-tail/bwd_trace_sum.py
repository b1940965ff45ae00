"""Summaries of bwd_trace_run.py's dumps: where the CTAs' time goes (task waits, loops, epilogues,
idle tail) and the step phases (clock64) of 4 CTAs."""
import sys, glob, os
import numpy as np
d = sys.argv[1]
names = ["qwait", "dowait", "swait", "softmax", "dpwait", "ds+bar", "dvdq+dqbuf", "dqst+dkwait", "advance"]
for f in sorted(glob.glob(os.path.join(d, "tk_*.npy"))):
    tag = os.path.basename(f)[3:-4]
    tk = np.load(f); st = np.load(os.path.join(d, f"st_{tag}.npy"))
    valid = tk[:, :, 1] != 0
    ncta = int(valid.any(axis=1).sum())
    t0 = tk[:, :, 0][valid].min()
    real = valid & (tk[:, :, 4] > 0)
    span = tk[:, :, 3][real].max() - t0
    wait = (tk[:, :, 1] - tk[:, :, 0])[real].sum()
    loop = (tk[:, :, 2] - tk[:, :, 1])[real].sum()
    epi = (tk[:, :, 3] - tk[:, :, 2])[real].sum()
    ends = np.array([tk[c, :, 3][real[c]].max() - t0 for c in range(ncta) if real[c].any()])
    tail = (span - ends).sum()
    nsteps = tk[:, :, 4][real].sum()
    ntask = real.sum()
    tot = span * ncta
    print(f"== {tag}: {ncta} CTAs, span {span/1e3:.1f} us, tasks {ntask} ({ntask/ncta:.1f}/CTA), steps {nsteps}; "
          f"share: task wait {wait/tot:.3f}, loops {loop/tot:.3f}, epilogue {epi/tot:.3f}, idle tail {tail/tot:.3f}; "
          f"loop ns/step {loop/nsteps:.0f}; per task: wait {wait/ntask/1e3:.2f} us, epilogue {epi/ntask/1e3:.2f} us; "
          f"CTA end min/med/max {ends.min()/1e3:.0f}/{np.median(ends)/1e3:.0f}/{ends.max()/1e3:.0f} us")
    ph = {k: [] for k in names}; first = []; masked = []; plain = []
    for c in range(4):
        r = st[c]; r = r[r[:, 0] != 0]
        for i in range(len(r) - 1):
            same_task = (r[i, 9] >> 16) == (r[i + 1, 9] >> 16)
            if not same_task: continue
            per = r[i + 1, 0] - r[i, 0]
            is_first = i == 0 or (r[i - 1, 9] >> 16) != (r[i, 9] >> 16)
            if is_first: first.append(per); continue
            if r[i, 9] & 0x8000: masked.append(per); continue
            plain.append(per)
            dd = np.diff(r[i, :9]).tolist() + [r[i + 1, 0] - r[i, 8]]
            for k, x in zip(names, dd): ph[k].append(x)
    med = lambda v: int(np.median(v)) if len(v) else -1
    print(f"   steps (clk, median): first {med(first)} (n {len(first)}), masked {med(masked)} (n {len(masked)}), plain {med(plain)} (n {len(plain)}, mean {int(np.mean(plain)) if plain else -1})")
    print("   plain step phases (median): " + ", ".join(f"{k} {med(v)}" for k, v in ph.items()))
