"""Session 36: the s35 phase stamps plus the staged epilogue's own (a build of exp/fwd-tile-phases with
the epilogue stamped, 16 slots a record: [8] finalize done, [9] first barrier passed, [10] O and LSE
written to smem / global, [11] second barrier passed, [5] copy-out issued).
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
        print(f"        epilogue medians: finalize {np.median(e[:, 0]):.0f} | barrier 1 {np.median(e[:, 1]):.0f} | "
              f"O to smem + LSE {np.median(e[:, 2]):.0f} | barrier 2 {np.median(e[:, 3]):.0f} | copy-out {np.median(e[:, 4]):.0f}"
              f"  (means {' / '.join(f'{x:.0f}' for x in e.mean(0))})")
    prod = a[(a[:, 2] == 0) & (a[:, 1] > 0)]
    print(f"  producer q_empty wait: median {np.median(prod[:, 9]):.0f}, mean {prod[:, 9].mean():.0f} cycles")


if __name__ == "__main__":
    seqlens = [int(s) for s in sys.argv[1:]] or [2048, 4096, 16384]
    for s in seqlens:
        run(s, causal=True)
    run(2048, causal=False)
