#!/usr/bin/env python3
"""Stall samples of the fp8 main loop by phase (ncu source page CSV):
the common-path softmax (first FFMA after the S wait to the sum check's
votes), the P conversion, the GEMM issue, the waits; per phase the total
samples and the split by stall reason."""
import csv, gzip, sys, collections
rows = list(csv.reader(gzip.open(sys.argv[1], 'rt')))
hdr = rows[1]; data = [r for r in rows[2:] if len(r) == len(hdr)]
col = {h: i for i, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith('stall_') and '(' not in h]
def op(t):
    w = t.split(); w = w[1] if w[0].startswith('@') else w[0]; return w.split('.')[0]
# phase by opcode class, in the loop region only: from the first QGMMA to the last F2FP
ph = collections.defaultdict(lambda: collections.Counter())
tot = collections.Counter()
for r in data:
    t = r[col['Source']].strip(); s = int(r[col['Warp Stall Sampling (All Samples)']] or 0)
    o = op(t)
    cls = {'MUFU': 'exp/sum', 'FADD': 'exp/sum', 'FFMA': 'exp/sum', 'F2FP': 'P conv', 'QGMMA': 'gemm issue',
           'WARPGROUP': 'gemm wait', 'SYNCS': 'mbarrier', 'FMUL': 'O rescale', 'BAR': 'named bar',
           'VOTE': 'vote', 'FMNMX': 'max'}.get(o, 'other')
    tot[cls] += s
    for x in reasons:
        ph[cls][x] += int(r[col[x]] or 0)
T = sum(tot.values())
for cls, s in tot.most_common():
    top = ', '.join('%s %.0f%%' % (x[6:], 100 * v / max(1, s)) for x, v in ph[cls].most_common(5) if v)
    print('%-11s %5.1f%%  %s' % (cls, 100 * s / T, top))
