"""Where a forward tile's time goes, from clock64 stamps (DASH_EXP_FWD_TRACE_PTR; hdim 128 bf16 forward
units built from a trace branch, 16 slots a record, three records a tile: MMA warpgroups 0 and 1, then
the producer). Per tile and warpgroup: [0] / [1] the q_full wait's start / end, [2] first S landed,
[3] walk done, [4] last P V done, [8] finalize done, [5] epilogue done, [6] KV tiles, [7] m_block; the
epilogue's own stamps [9] [10] [11] (their meaning per --epilogue); with --details, [12] [13] [14] inside
the first step (before the K wait, K landed, turn taken) and the producer's Q issue ([3] of its record).
Fits (tile cycles) = a + b * (KV tiles) over the tiles.
Session 36 ran it as three copies, merged since (same output):
  --epilogue staged            exp/fwd-tile-phases (2605c56), call 2 (was fwd_epilogue_phases.py)
  --epilogue tma               exp/fwd-tma-store-trace, call 4 (was fwd_tma_epilogue_phases.py)
  --epilogue tma --details     exp/fwd-q2-trace, calls 6 and 7 (was fwd_q2_phases.py)
From the repository root: PYTHONPATH=$PWD python3 bench/results/2026-11-30-s36/fwd_tile_phases.py
[--epilogue staged|tma] [--details] [seqlen ...]"""
import argparse
import os

import numpy as np
import torch

import dash

MAX_TILES, RECS, SLOTS = 64, 3, 16
# The epilogue's parts between stamps [8] [9] [10] [11] [5], per build.
EPILOGUE_PARTS = {
    "staged": ("finalize", "barrier 1", "O to smem + LSE", "barrier 2", "copy-out"),
    "tma": ("finalize", "lane-0 store wait", "STSM", "LSE", "fence + TMA issue"),
}


def run(seqlen, epilogue, details, causal=True, heads=16, total=16384):
    batch = max(1, total // seqlen)
    q, k, v = (torch.randn(batch, seqlen, heads, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    grid = torch.cuda.get_device_properties(0).multi_processor_count
    buf = torch.zeros(grid * MAX_TILES * RECS * SLOTS, dtype=torch.int64, device="cuda")
    os.environ.pop("DASH_EXP_FWD_TRACE_PTR", None)
    for _ in range(30):
        dash.attn_fwd(q, k, v, causal=causal)
    torch.cuda.synchronize()
    os.environ["DASH_EXP_FWD_TRACE_PTR"] = str(buf.data_ptr())
    for _ in range(3):  # the last call's stamps stay (each call overwrites its tiles' records)
        buf.zero_()
        dash.attn_fwd(q, k, v, causal=causal)
    torch.cuda.synchronize()
    os.environ.pop("DASH_EXP_FWD_TRACE_PTR", None)
    t = buf.view(grid, MAX_TILES, RECS, SLOTS).cpu().numpy().astype(np.int64)
    analyze(t, f"hdim 128 {'causal' if causal else 'full'} {seqlen} (batch {batch}, {heads} heads)", epilogue, details)


def analyze(t, label, epilogue, details):
    grid = t.shape[0]
    rows = []  # (cta, ordinal, wg, q_wait, first_s, walk, last_pv, epi, n, prod_q_wait, tile from q_full to epilogue done)
    for cta in range(grid):
        for o in range(MAX_TILES):
            for wg in range(2):
                r = t[cta, o, wg]
                if r[5] == 0:
                    continue
                prod = t[cta, o, 2]
                rows.append((cta, o, wg, r[1] - r[0], r[2] - r[1], r[3] - r[2], r[4] - r[3], r[5] - r[4], r[6],
                             prod[1] - prod[0], r[5] - r[1]))
    a = np.array(rows, dtype=np.float64)
    print(f"\n== {label}: {len(a) // 2} tiles a warpgroup "
          f"stamped over {grid} CTAs (cycles; SM clock ~1.98 GHz under load)")
    names = ["q wait", "first S", "walk", "last PV", "epilogue", "", "", "tile (q_full to epi)"]
    for wg in range(2):
        w = a[a[:, 2] == wg]
        later = w[w[:, 1] > 0]  # a CTA's first tile waits on the launch, not on a previous tile
        parts = " | ".join(f"{names[i]} {np.median(later[:, 3 + i]):.0f}" for i in range(5))
        n = later[:, 8]
        walk_per_step = np.median(later[n > 1, 5] / (n[n > 1] - 1)) if (n > 1).any() else float("nan")
        if n.std() > 0:
            fit = np.polyfit(n, later[:, 10], 1)
            tile = f"tile = {fit[1]:.0f} + {fit[0]:.0f} x KV tiles (least squares over {len(later)} tiles)"
        else:
            tile = f"tile {np.median(later[:, 10]):.0f} ({int(n[0])} KV tiles each)"
        print(f"  wg {wg}: medians (tiles after a CTA's first) {parts} | walk a step {walk_per_step:.0f} | {tile}")
        e = np.array([[t[c, o, wg, 8] - t[c, o, wg, 4], t[c, o, wg, 9] - t[c, o, wg, 8], t[c, o, wg, 10] - t[c, o, wg, 9],
                       t[c, o, wg, 11] - t[c, o, wg, 10], t[c, o, wg, 5] - t[c, o, wg, 11]]
                      for c in range(grid) for o in range(1, MAX_TILES) if t[c, o, wg, 5] != 0], dtype=np.float64)
        names_e = EPILOGUE_PARTS[epilogue]
        print("        epilogue medians: " + " | ".join(f"{names_e[i]} {np.median(e[:, i]):.0f}" for i in range(5))
              + f"  (means {' / '.join(f'{x:.0f}' for x in e.mean(0))})")
        if not details:
            continue
        f = np.array([[t[c, o, wg, 12] - t[c, o, wg, 1], t[c, o, wg, 13] - t[c, o, wg, 12], t[c, o, wg, 14] - t[c, o, wg, 13],
                       t[c, o, wg, 2] - t[c, o, wg, 14]]
                      for c in range(grid) for o in range(1, MAX_TILES) if t[c, o, wg, 5] != 0 and t[c, o, wg, 14] != 0],
                     dtype=np.float64)
        if len(f):
            print(f"        first S medians: tile setup {np.median(f[:, 0]):.0f} | K wait {np.median(f[:, 1]):.0f} | "
                  f"turn wait {np.median(f[:, 2]):.0f} | GEMM issue to landed {np.median(f[:, 3]):.0f}")
        # By KV tiles: q wait, first S, epilogue, and how long before the warpgroup reached its q_full wait
        # the producer had issued the tile's Q (negative: after).
        lead = np.array([t[c, o, wg, 0] - t[c, o, 2, 3] for c in range(grid) for o in range(1, MAX_TILES)
                         if t[c, o, wg, 5] != 0], dtype=np.float64)
        w = a[(a[:, 2] == wg) & (a[:, 1] > 0)]
        for lo, hi in ((1, 2), (3, 6), (7, 12), (13, 1 << 30)):
            sel = (w[:, 8] >= lo) & (w[:, 8] <= hi)
            if sel.sum() == 0:
                continue
            print(f"        KV tiles {lo}-{hi if hi < 1 << 30 else 'max'} ({int(sel.sum())} tiles): q wait {np.median(w[sel, 3]):.0f} | "
                  f"first S {np.median(w[sel, 4]):.0f} | epilogue {np.median(w[sel, 7]):.0f} | "
                  f"Q issued {np.median(lead[sel]):.0f} cycles before the q_full wait")
    prod = a[(a[:, 2] == 0) & (a[:, 1] > 0)]
    print(f"  producer q_empty wait: median {np.median(prod[:, 9]):.0f}, mean {prod[:, 9].mean():.0f} cycles")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--epilogue", choices=sorted(EPILOGUE_PARTS), default="tma")
    ap.add_argument("--details", action="store_true", help="the first step's parts and the medians by KV tiles")
    ap.add_argument("seqlens", type=int, nargs="*", default=[2048, 4096, 16384])
    args = ap.parse_args()
    for s in args.seqlens:
        run(s, args.epilogue, args.details, causal=True)
    run(2048, args.epilogue, args.details, causal=False)
