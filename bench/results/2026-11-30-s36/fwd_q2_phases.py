"""Session 36: the phases of a tile on exp/fwd-q2 (two Q buffers, TMA-store epilogue; a build of
exp/fwd-q2-trace): the s35 phase stamps, the epilogue's ([8] finalize done, [9] lane 0's store wait
passed, [10] STSM done, [11] LSE written, [5] TMA issued), the producer's Q issue ([3] of its record),
the same medians by the tile's KV tiles (short tiles against long ones), and the first S GEMM's parts
([12] before the K wait, [13] K landed, [14] turn taken, [2] S landed).
Where a causal forward tile's time goes, per phase, from the exp/fwd-tile-phases build's clock64
stamps (DASH_EXP_FWD_TRACE_PTR; a build of branch exp/fwd-tile-phases, hdim 128 bf16 forward units).
Per tile and MMA warpgroup: the wait for Q and the tile record, the first S GEMM (K wait, turn, GEMM),
the rest of the walk, the last P V, the finalize + epilogue; per tile the producer's wait for q_empty.
Fits (tile cycles) = a + b * (KV tiles) over the tiles: a is the per-tile cost RESULTS item 256 puts at
~0.9 us above FlashAttention-3's.
From the repository root: PYTHONPATH=$PWD python3 bench/results/2026-11-30-s35/next/fwd_phases.py [seqlen ...]"""
import os
import sys

import numpy as np
import torch

import dash

MAX_TILES, RECS, SLOTS = 64, 3, 16


def run(seqlen, causal=True, heads=16, total=16384):
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
    analyze(t, f"hdim 128 {'causal' if causal else 'full'} {seqlen} (batch {batch}, {heads} heads)")


def analyze(t, label):
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
        print(f"        epilogue medians: finalize {np.median(e[:, 0]):.0f} | lane-0 store wait {np.median(e[:, 1]):.0f} | "
              f"STSM {np.median(e[:, 2]):.0f} | LSE {np.median(e[:, 3]):.0f} | fence + TMA issue {np.median(e[:, 4]):.0f}"
              f"  (means {' / '.join(f'{x:.0f}' for x in e.mean(0))})")
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
    seqlens = [int(s) for s in sys.argv[1:]] or [2048, 4096, 16384]
    for s in seqlens:
        run(s, causal=True)
    run(2048, causal=False)
