import sys, numpy as np
buf = np.load(sys.argv[1])  # [cta][wg][step][8]
names = ["data", "turn", "issue", "S wait", "softmax", "PV wait"]
for cta in range(buf.shape[0]):
    rows = []
    for wg in range(2):
        st = buf[cta, wg]
        n = int((st[:, 0] != 0).sum())
        rows.append(st[:n])
    t0 = min(r[0, 0] for r in rows)
    if cta == 0:
        print("kind: F first step, L last PV + epilogue; times relative to CTA start (clk)")
        for wg in range(2):
            for k in range(min(40, len(rows[wg]))):
                r = rows[wg][k]; id_ = int(r[7])
                kind = "F" if id_ & 0x8000 else ("L" if id_ & 0x4000 else " ")
                d = np.diff(r[:7])
                nxt = rows[wg][k + 1][0] - r[6] if k + 1 < len(rows[wg]) else 0
                print(f"wg{wg} {k:3d} {kind} nb {id_ & 0x3fff:3d} start {r[0]-t0:8d} | " + " ".join(f"{x:5d}" for x in d) + f" | gap {nxt:5d}")
    # medians over steady steps (not F / L)
    for wg in range(2):
        r = rows[wg]
        ids = r[:, 7].astype(np.int64)
        steady = r[(ids & 0xc000) == 0]
        d = np.diff(steady[:, :7], axis=1)
        period = np.diff(steady[:, 2])
        per = period[(period > 0) & (period < 20000)]
        print(f"cta {cta} wg{wg}: steady {len(steady)} medians " + ", ".join(f"{n} {int(np.median(d[:, i]))}" for i, n in enumerate(names))
              + f"; turn-to-turn period median {int(np.median(per)) if len(per) else -1}")
    # last+epilogue and first steps
    for wg in range(2):
        r = rows[wg]; ids = r[:, 7].astype(np.int64)
        L = r[(ids & 0x4000) != 0]; F = r[(ids & 0x8000) != 0]
        if len(L): print(f"  wg{wg} last-PV records {len(L)}: median phases " + " ".join(str(int(x)) for x in np.median(np.diff(L[:, :7], axis=1), axis=0)))
        if len(F): print(f"  wg{wg} first-step records {len(F)}: median phases " + " ".join(str(int(x)) for x in np.median(np.diff(F[:, :7], axis=1), axis=0)))
