# Stall samples of one reason by opcode, MMA warps only (code before USETMAXREG.DEALLOC), from an
# `ncu --page source --csv --print-source sass` export (gzip).  python stalls_by_opcode.py src.csv.gz stall_wait
import csv,gzip,sys,re,collections
rows=list(csv.reader(gzip.open(sys.argv[1],'rt')))
hdr=rows[1]; data=rows[2:]; ix={h:i for i,h in enumerate(hdr)}
def num(x):
    try: return float(x.replace(',',''))
    except: return 0.0
ins=[(int(r[0],16), r[1].strip(), {k:num(r[ix[k]]) for k in hdr if k.startswith('stall_')}, num(r[ix['Instructions Executed']])) for r in data]
dealloc=next((a for a,s,*_ in ins if 'USETMAXREG.DEALLOC' in s), None)
mma=[x for x in ins if x[0]<dealloc]
reason=sys.argv[2]
by=collections.Counter(); cnt=collections.Counter()
for a,s,st,ex in mma:
    op=re.sub(r'^@!?U?P\w+\s+','',s).split()[0] if s else '?'
    op=op.split('.')[0]
    by[op]+=st.get(reason,0); cnt[op]+=ex
tot=sum(by.values())
print(reason,'total',int(tot))
for op,v in by.most_common(14): print(f"  {op:12s} {v:8.0f} {100*v/tot:5.1f}%  executed {cnt[op]:.3g}")
