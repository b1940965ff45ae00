"""Quick diagnostic of the forward kernel on a GPU: for a few shapes, out / LSE error
against the fp64 reference (next to a plain PyTorch computation's error in the same
dtype), NaN counts, then forward TFLOPS of dash vs cuDNN on a few benchmark shapes.
Prints as it goes, so a hang shows where."""
import pathlib
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import dash  # noqa: E402
from dash import reference  # noqa: E402

CASES = [  # batch, sq, sk, heads, hdim, causal
    (1, 128, 128, 1, 128, False), (1, 1, 1, 1, 64, True), (2, 300, 300, 2, 128, False), (2, 300, 300, 2, 128, True),
    (1, 1000, 1000, 2, 64, False), (1, 1000, 1000, 2, 64, True), (1, 113, 203, 2, 128, True),
    (1, 203, 113, 2, 64, True), (1, 400, 100, 2, 128, True), (2, 2048, 2048, 4, 128, True), (1, 4097, 4097, 2, 64, False),
]


def check(dtype):
    for batch, sq, sk, heads, hdim, causal in CASES:
        g = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(batch, sq, heads, hdim, device="cuda", dtype=dtype, generator=g)
        k = torch.randn(batch, sk, heads, hdim, device="cuda", dtype=dtype, generator=g)
        v = torch.randn(batch, sk, heads, hdim, device="cuda", dtype=dtype, generator=g)
        torch.full((batch, sq, heads, hdim), float("nan"), device="cuda", dtype=dtype)  # poison the allocator
        out, lse = torch.ops.dash.attn_fwd(q, k, v, hdim ** -0.5, causal)
        torch.cuda.synchronize()
        ref_o, ref_lse = reference.attention_forward(q, k, v, causal=causal, compute_dtype=torch.float64)
        pt_o, _ = reference.attention_forward(q, k, v, causal=causal, compute_dtype=dtype)
        err = (out.double() - ref_o.double()).abs().max().item()
        perr = (pt_o.double() - ref_o.double()).abs().max().item()
        finite = torch.isfinite(ref_lse)
        lse_err = (lse.double() - ref_lse)[finite].abs().max().item() if finite.any() else 0.0
        inf_ok = bool(torch.equal(torch.isinf(lse), ~finite))
        ok = err <= 2 * perr + 1e-3 and lse_err < 1e-3 and inf_ok and not torch.isnan(out).any()
        print(f"{'OK ' if ok else 'BAD'} {dtype} b{batch} sq{sq} sk{sk} h{heads} d{hdim} causal={causal}: "
              f"out err {err:.2e} (pt {perr:.2e}) lse err {lse_err:.2e} -inf rows match {inf_ok} "
              f"nan {int(torch.isnan(out).sum())}", flush=True)


def bench(fn, reps=20):
    for _ in range(3):
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(start, end))
    return times[len(times) // 2]


def speed():
    for hdim in (128, 64):
        for seqlen in (1024, 4096, 8192, 16384):
            for causal in (False, True):
                batch, heads = 16384 // seqlen, 2048 // hdim
                q, k, v = (torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16)
                           for _ in range(3))
                flops = reference.attention_flops(batch, heads, seqlen, seqlen, hdim, causal, backward=False)
                t_dash = bench(lambda: torch.ops.dash.attn_fwd(q, k, v, hdim ** -0.5, causal))
                qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    t_cudnn = bench(lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal))
                print(f"hdim {hdim} seqlen {seqlen:5d} {'causal' if causal else 'full  '}: dash "
                      f"{flops / t_dash / 1e9:6.1f} cuDNN {flops / t_cudnn / 1e9:6.1f} TFLOPS "
                      f"ratio {t_cudnn / t_dash:.3f}", flush=True)


if __name__ == "__main__":
    check(torch.bfloat16)
    check(torch.float16)
    if "--no-speed" not in sys.argv:
        speed()
