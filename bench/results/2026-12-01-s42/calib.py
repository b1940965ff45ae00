import importlib.util, sys
spec = importlib.util.spec_from_file_location("sim3", "/work/main/bench/results/2026-12-01-s42/tail_model.py")
src = open("/work/main/bench/results/2026-12-01-s42/tail_model.py").read().split("shapes = ")[0]
exec(src)
meas = {(128,2048):1.1,(128,4096):0.1,(128,8192):0.9,(128,16384):0.7,(192,2048):-9.4,(192,4096):-4.6,(192,8192):-3.5,(192,16384):-1.5}
for reduce, handoff in [(0.3,0.3),(0.3,1.0),(0.3,2.0),(0.6,2.0)]:
    out=[]
    for (hd,s),m in meas.items():
        bm,bn = (64,128) if hd==128 else (64,96); H = 16 if hd==128 else 10; B=16384//s
        d = run(bm,bn,s,H,B,"diag",reduce,handoff)[0]
        a = run(bm,bn,s,H,B,"alldesc8",reduce,handoff)[0]
        out.append("%d/%dk %+.1f|%+.1f" % (hd, s//1024, m, 100*(d/a-1)))
    print(reduce, handoff, "  ".join(out), flush=True)
