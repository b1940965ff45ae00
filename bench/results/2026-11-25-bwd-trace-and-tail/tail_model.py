import heapq,sys
def sim(lengths, G, overhead=0):
    h=[(0.0,i) for i in range(G)]; heapq.heapify(h)
    for L in lengths:
        t,i=heapq.heappop(h); heapq.heappush(h,(t+L+overhead,i))
    return max(t for t,_ in h)
def run(S, bm, bn, H, B, G=132, ov=2, causal=True):
    N=S//bn; M=S//bm
    L=(lambda n: M - (n*bn)//bm) if causal else (lambda n: M)
    tot=sum(L(n)+ov for n in range(N))*H*B
    diag=[L(n) for b in range(B) for h in range(H) for n in reversed(range(N))]
    lpt=sorted(diag,reverse=True)
    return tot/G/sim(diag,G,ov), tot/G/sim(lpt,G,ov)
for hd,bm,bn in ((64,128,128),(128,64,128)):
  for S in (4096,16384):
    for hid in (2048,16384):
      H=hid//hd; B=16384//S
      print(hd,S,hid,'causal diag/LPT eff %.3f %.3f'%run(S,bm,bn,H,B),' full %.3f'%run(S,bm,bn,H,B,causal=False)[0])
