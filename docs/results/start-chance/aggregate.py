"""Pools the runs of run.txt's split files (one table per file, named VARIANT-....txt) per scenario, load and
configuration: median goodput with min-max, false refusals pooled with a Wilson 95 % interval, failures' p99.
Usage: python3 aggregate.py DIR [old,new]"""
import sys,re,glob,statistics,math
d=sys.argv[1]; vs=sys.argv[2].split(',') if len(sys.argv)>2 else ['old','new']
rows={}
for f in sorted(glob.glob(d+'/*.txt')):
    v=f.split('/')[-1].split('-')[0]
    for line in open(f):
        if not line.startswith('| s') or line.startswith('| scenario'): continue
        c=[x.strip() for x in line.strip().strip('|').split('|')]
        key=(c[0],c[1],c[2]); r=rows.setdefault((v,)+key,{'g':[],'k':0,'n':0,'fp':[],'to':[],'ref':[],'sp':[]})
        r['g'].append(float(c[3].split()[0])); r['fp'].append(c[9]); r['to'].append(c[6]); r['ref'].append(c[5]); r['sp'].append(c[8])
        m=re.match(r'([\d.]+) % \[.*\] of (\d+)',c[7])
        if m:
            n=int(m.group(2)); r['n']+=n; r['k']+=round(float(m.group(1))*n/100)
def wilson(k,n,z=1.96):
    if n==0: return (0,0)
    p=k/n; den=1+z*z/n; c=(p+z*z/(2*n))/den; h=z*math.sqrt(p*(1-p)/n+z*z/(4*n*n))/den
    return (100*(c-h),100*(c+h))
keys=sorted({k[1:] for k in rows})
for key in keys:
    for v in vs:
        r=rows.get((v,)+key)
        if not r: continue
        g=r['g']; fr=''
        if r['n']: lo,hi=wilson(r['k'],r['n']); fr=f"false {r['k']}/{r['n']} = {100*r['k']/r['n']:.0f} % [{lo:.0f}–{hi:.0f}]"
        print(f"{' '.join(key):40s} {v:5s} goodput {statistics.median(g):6.0f} ({min(g):.0f}–{max(g):.0f})  fp99 {r['fp']}  timedout {r['to']}  {fr}")
print()
for key in keys:
    for v in vs:
        r=rows.get((v,)+key)
        if not r or 'pool' in key[2]: continue
        fp=sorted(float(x) for x in r['fp']); to=[float(x.split('(')[1].split()[0]) for x in r['to']]
        ref=[float(x) for x in r['ref']]
        print(f"{' '.join(key):40s} {v:5s} fp99 median {statistics.median(fp)} ({fp[0]}–{fp[-1]}) timedout% median {statistics.median(to)} ({min(to)}–{max(to)}) refused-at-once median {statistics.median(ref)}")
