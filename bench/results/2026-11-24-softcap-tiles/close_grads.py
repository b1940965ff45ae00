# Two builds with different tilings: gradients equal up to bf16 rounding of the sums.
import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
worst = 0.0
for k in a:
    for x, y in zip(a[k], b[k]):
        x, y = x.float(), y.float()
        err = float((x - y).abs().max() / (x.abs().max() + 1e-6))
        worst = max(worst, err)
        if err > 2e-2 or not torch.isfinite(y).all():
            print("FAR", k, err)
print(f"{len(a)} calls, worst max-abs-diff / max-abs = {worst:.2e}")
