import csv,statistics,sys
res={}
d=sys.argv[1] if len(sys.argv)>1 else '.'
for which in ['old','new']:
    for r in [1,2,3]:
        for row in csv.DictReader(open(f'{d}/guard-{which}-{r}.csv')):
            p=row['Param: statement']; res.setdefault((p,which),[]).append(float(row['Score']))
names=['point select (48 chars)','insert (51)','update (90)','upsert (165)','report (600)']
print("| statement | c8a10db ns | this change ns | ratio of medians |")
print("|---|---:|---:|---:|")
for p in ['0','1','2','3','4']:
    o=res[(p,'old')]; n=res[(p,'new')]
    print(f"| {names[int(p)]} | {statistics.median(o):.1f} ({min(o):.1f}–{max(o):.1f}) | {statistics.median(n):.1f} ({min(n):.1f}–{max(n):.1f}) | {statistics.median(n)/statistics.median(o):.2f} |")
