import csv,statistics,sys
d=sys.argv[1]
res={}
for r in [1,2,3]:
    for row in csv.DictReader(open(f'{d}/mysql-pg-{r}.csv')):
        m=row['Benchmark'].split('.')[-1]; p=row['Param: statement']
        res.setdefault((p,m),[]).append(float(row['Score']))
names=['point select (48 chars)','insert (51)','update (90)','upsert (165)','report (600)']
print("| statement | PostgreSQL's rules ns | MySQL's rules ns | MySQL / PostgreSQL |")
print("|---|---:|---:|---:|")
for p in ['0','1','2','3','4']:
    a=res[(p,'find')]; b=res[(p,'mysql')]
    print(f"| {names[int(p)]} | {statistics.median(a):.1f} ({min(a):.1f}–{max(a):.1f}) | {statistics.median(b):.1f} ({min(b):.1f}–{max(b):.1f}) | {statistics.median(b)/statistics.median(a):.2f} |")
