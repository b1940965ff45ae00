# cuDNN's 192x128 causal backward in the bench's own setting: same inputs, its grads against dash's
# (fp64-checked) and timing, full vs causal, for (192,128) and (192,192).
import sys, time, torch
sys.path.insert(0, "bench")
import bench_bwd as bb
from torch.nn.attention import sdpa_kernel, SDPBackend
import dash
for hd, hdv in [(192, 128), (192, 192)]:
    for seqlen in (2048, 16384):
        for causal in (False, True):
            p = bb.Problem(seqlen, hd, causal, 16384, 2048, head_dim_v=hdv)
            qh, kh, vh = (t.transpose(1, 2).detach().requires_grad_() for t in (p.q, p.k, p.v))
            doh = p.dout.transpose(1, 2)
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                out = torch.nn.functional.scaled_dot_product_attention(qh, kh, vh, is_causal=causal, scale=p.scale)
                g = torch.autograd.grad(out, (qh, kh, vh), doh, retain_graph=True)
                torch.cuda.synchronize(); t0 = time.perf_counter()
                for _ in range(10): torch.autograd.grad(out, (qh, kh, vh), doh, retain_graph=True)
                torch.cuda.synchronize(); t_c = (time.perf_counter() - t0) / 10
            o2, lse = dash.attn_fwd(p.q, p.k, p.v, p.scale, causal)
            gd = dash.attn_bwd(p.dout, p.q, p.k, p.v, o2, lse, p.scale, causal, True)
            torch.cuda.synchronize(); t0 = time.perf_counter()
            for _ in range(10): dash.attn_bwd(p.dout, p.q, p.k, p.v, o2, lse, p.scale, causal, True)
            torch.cuda.synchronize(); t_d = (time.perf_counter() - t0) / 10
            oerr = (out.transpose(1, 2).float() - o2.float()).abs().max().item()
            errs = [((a.transpose(1, 2).float() - b.float()).norm() / b.float().norm()).item() for a, b in zip(g, gd)]
            print(f"{hd}x{hdv} s={seqlen} causal={causal} b={p.batch} h={p.heads}: out diff {oerr:.2e}; grad rel diff "
                  f"cudnn vs dash {errs[0]:.2e} {errs[1]:.2e} {errs[2]:.2e}; cudnn {t_c*1e3:.3f} ms dash {t_d*1e3:.3f} ms "
                  f"TF cudnn {p.flops/t_c/1e12:.0f} dash {p.flops/t_d/1e12:.0f}", flush=True)
