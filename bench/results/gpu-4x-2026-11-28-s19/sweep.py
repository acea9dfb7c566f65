import sys,glob,os,re
# sweep.py DIR PREFIX : table per op: size x variant (oop time us)
D,pre=sys.argv[1],sys.argv[2]
data={}; names=[]
for f in sorted(glob.glob(os.path.join(D,pre+'*.txt'))):
    n=os.path.basename(f)[len(pre):-4]; names.append(n); op=None
    for line in open(f):
        m=re.match(r'# (\w+), float32',line)
        if m: op=m.group(1); continue
        p=line.split()
        if op and len(p)>8 and p[0].isdigit():
            data.setdefault(op,{}).setdefault(int(p[0]),{})[n]=float(p[5])
order=[n for n in names if 'nccl' in n]+[n for n in names if 'nccl' not in n]
for op,rows in data.items():
    print('##',op); print('%9s '%'size'+' '.join('%9s'%n[-9:] for n in order))
    for s in sorted(rows):
        r=rows[s]; best=min([r[n] for n in order if 'nccl' in n and n in r] or [0])
        cells=[]
        for n in order:
            v=r.get(n)
            cells.append('%9s'%('' if v is None else ('%.1f'%v)+('*' if 'nccl' not in n and v<=best else ' ')))
        print('%9d '%s+' '.join(cells))
