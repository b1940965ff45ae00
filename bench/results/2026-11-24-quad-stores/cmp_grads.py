import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
bad = [k for k in a if not all(torch.equal(x, y) for x, y in zip(a[k], b[k]))]
nan = [k for k in b if any(not torch.isfinite(x.float()).all() for x in b[k])]
print(f"{len(a)} calls, {len(bad)} differ, {len(nan)} non-finite")
for k in bad[:20]: print("DIFF", k, [float((x.float() - y.float()).abs().max()) for x, y in zip(a[k], b[k])])
