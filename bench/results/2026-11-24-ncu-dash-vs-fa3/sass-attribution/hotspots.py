# Reads an `ncu --page source --csv --print-source sass` export (gzip): stall samples split into the MMA
# warps (code before USETMAXREG.DEALLOC) and the producer warpgroup, and the MMA warps' top instructions.
#   python hotspots.py src64.csv.gz 40
import csv,gzip,sys,re
rows=list(csv.reader(gzip.open(sys.argv[1],'rt')))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
def num(x):
    try: return float(x.replace(',',''))
    except: return 0.0
ins=[(int(r[0],16), r[1].strip(), num(r[ix['Warp Stall Sampling (All Samples)']]), {k:num(r[ix[k]]) for k in ['stall_barrier','stall_wait','stall_sleep','stall_membar','stall_long_sb','stall_short_sb','stall_mio','stall_selected','stall_dispatch','stall_not_selected','stall_branch_resolving','stall_no_inst','stall_math']}, num(r[ix['Instructions Executed']])) for r in data]
base=ins[0][0]
dealloc=next((a for a,s,*_ in ins if 'USETMAXREG.DEALLOC' in s), None)
tot=sum(x[2] for x in ins)
mma=[x for x in ins if dealloc is None or x[0]<dealloc]; prod=[x for x in ins if dealloc is not None and x[0]>=dealloc]
print("total samples",tot,"mma",sum(x[2] for x in mma),"producer",sum(x[2] for x in prod))
for name,grp in (("MMA",mma),("producer",prod)):
    agg={}
    for x in grp:
        for k,v in x[3].items(): agg[k]=agg.get(k,0)+v
    print(name, {k:int(v) for k,v in sorted(agg.items(),key=lambda kv:-kv[1])[:8]})
print("top MMA instructions by samples:")
for a,s,n,st,ex in sorted(mma,key=lambda x:-x[2])[:int(sys.argv[2]) if len(sys.argv)>2 else 30]:
    top=sorted(st.items(),key=lambda kv:-kv[1])[:2]
    print(f"{a-base:6x} {n:7.0f} {s[:60]:60s} {top}")
