"""Summaries of trace_run.py's dumps: per-tile phase totals and CTA spans."""
import sys, glob, os
import numpy as np
d = sys.argv[1]
for f in sorted(glob.glob(os.path.join(d, "tr_*.npy"))):
    tag = os.path.basename(f)[3:-4]
    buf = np.load(f); cta = np.load(os.path.join(d, f"cta_{tag}.npy"))
    n = int((cta[:, 1] != 0).sum())
    c = cta[:n]
    span = c[:, 1].max() - c[:, 0].min()
    ends = np.sort(c[:, 1] - c[:, 0].min())
    print(f"== {tag}: {n} CTAs, kernel span {span/1e3:.1f} us; CTA end: min {ends[0]/1e3:.1f} median {np.median(ends)/1e3:.1f} max {ends[-1]/1e3:.1f} us; "
          f"tiles/CTA {c[:,2].min()}-{c[:,2].max()}, steps/CTA {c[:,3].min()}-{c[:,3].max()}; busy mean/max {np.mean(c[:,1]-c[:,0])/span:.3f}")
    tot = {}
    for ci in range(buf.shape[0]):
        for wg in range(2):
            r = buf[ci, wg]
            m = r[:, 0] != 0
            r = r[m]
            ids = r[:, 9]
            kinds = np.where(ids & 0x8000, "F", np.where(ids & 0x4000, "L", "S"))
            masked = (ids & 0x2000) != 0
            acc = {"qwait": [], "first": [], "step": [], "mstep": [], "lastpv": [], "finalize": [], "epilogue": [], "tile": []}
            ph = {"data": [], "turn": [], "issue": [], "swait": [], "softmax": [], "pvwait": [], "tail": []}
            i = 0
            while i < len(r):
                if kinds[i] != "F": i += 1; continue
                j = i + 1
                while j < len(r) and kinds[j] != "L": j += 1
                if j >= len(r): break
                acc["qwait"].append(r[i, 0] - r[i, 8])
                nxt = r[i + 1, 0] if i + 1 < j else r[j, 0]
                acc["first"].append(nxt - r[i, 0])
                for k in range(i + 1, j):
                    per = r[k + 1, 0] - r[k, 0]
                    (acc["mstep"] if masked[k] else acc["step"]).append(per)
                    if not masked[k]:
                        dd = np.diff(r[k, :7])
                        for nm, x in zip(["data", "turn", "issue", "swait", "softmax", "pvwait"], dd): ph[nm].append(x)
                        ph["tail"].append(per - (r[k, 6] - r[k, 0]))
                acc["lastpv"].append(r[j, 4] - r[j, 0]); acc["finalize"].append(r[j, 5] - r[j, 4]); acc["epilogue"].append(r[j, 6] - r[j, 5])
                acc["tile"].append(r[j, 6] - r[i, 8])
                i = j + 1
            for key, v in acc.items(): tot.setdefault(key, []).extend(v)
            for key, v in ph.items(): tot.setdefault("ph_" + key, []).extend(v)
    ntile = len(tot["tile"])
    total = sum(tot["tile"])
    print(f"   traced tiles {ntile}; time shares of the traced tiles' spans (sum / count / median clk):")
    for key in ["qwait", "first", "step", "mstep", "lastpv", "finalize", "epilogue"]:
        v = np.array(tot[key])
        if len(v): print(f"     {key:9s} {v.sum()/total:6.3f}  n {len(v):6d}  median {int(np.median(v)):6d}  mean {int(v.mean()):6d}")
    print("   unmasked step phases (median): " + ", ".join(f"{k[3:]} {int(np.median(tot[k]))}" for k in tot if k.startswith("ph_") and len(tot[k])))
