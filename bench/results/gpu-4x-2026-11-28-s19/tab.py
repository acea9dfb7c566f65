import json,sys,glob,os
# usage: tab.py DIR NP [symfile-pattern]  -> per op/size: sym R1, nccl R0, nccl R1, ratio vs best
D=sys.argv[1]; np_=sys.argv[2]
def load(pat):
    out={}
    for f in glob.glob(os.path.join(D,pat)):
        for r in json.load(open(f))['rows']:
            if r['inplace']: continue
            out.setdefault((r['op'],r['bytes']),[]).append(r['time_us'])
    return {k:sorted(v)[len(v)//2] for k,v in out.items()}
s=load(f'symcomm-np{np_}-R1-run*.json'); a=load(f'nccl-np{np_}-R0-run*.json'); b=load(f'nccl-np{np_}-R1-run*.json'); s0=load(f'symcomm-np{np_}-R0-run*.json')
ops=sorted(set(k[0] for k in s))
for op in ops:
    print('##',op)
    for (o,n) in sorted(k for k in s if k[0]==op):
        best=min(a.get((o,n),1e9),b.get((o,n),1e9))
        extra=f" R0 {s0[(o,n)]:8.2f} {s0[(o,n)]/a[(o,n)]:5.2f}" if (o,n) in s0 else ''
        fl='  <<' if s[(o,n)]>best else ''
        print(f"{n:>11} sym {s[(o,n)]:9.2f} ncclR0 {a.get((o,n),0):9.2f} ncclR1 {b.get((o,n),0):9.2f} ratio {s[(o,n)]/best:5.2f}{extra}{fl}")
