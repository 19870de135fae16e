#!/usr/bin/env python3
"""Summarise a trace buffer (16 warps x 1088 u32 clocks; slot n*8+code per
loop event, 1024+k per tile event) from the trace experiment tree.
Events: 0 top, 1 K/V landed, 2 turn, 3 issued, 4 S ready, 5 softmax done,
6 P V done, 7 P ready.  Prints per-WG median durations and the overlap of
the warpgroups' softmax intervals (warp 0 of each WG)."""
import struct, sys, statistics
buf = open(sys.argv[1], 'rb').read()
W = 1088
a = struct.unpack('<%dI' % (len(buf) // 4), buf)
warps = [a[i * W:(i + 1) * W] for i in range(16)]
wgs = [w for w in range(4) if any(warps[4 * w][:1024])]
names = ['K/V wait', 'turn wait', 'issue', 'S wait', 'softmax', 'PV wait', 'P conv+resc', 'to next top']
def ev(w, n, c): return warps[w][n * 8 + c]
blocks = sorted({n for w in wgs for n in range(128) if ev(4 * w, n, 0) and ev(4 * w, n, 7)}, reverse=True)
t0 = min(ev(4 * w, n, 0) for w in wgs for n in blocks)
inner = blocks[3:-3]
print('blocks traced', len(blocks), 'WGs', wgs)
for w in wgs:
    d = []
    for c in range(7):
        d.append(statistics.median([(ev(4 * w, n, c + 1) - ev(4 * w, n, c)) & 0xffffffff for n in inner]))
    per = statistics.median([(ev(4 * w, n - 1, 0) - ev(4 * w, n, 0)) & 0xffffffff for n in inner if n - 1 in blocks])
    d.append(per - sum(d))
    print('WG%d period %5d: ' % (w, per) + '  '.join('%s %d' % (names[i], d[i]) for i in range(8)))
# overlap of softmax intervals [4,5] between WGs, and of S-wait intervals
def iv(w, c0, c1): return [(ev(4 * w, n, c0) - t0, ev(4 * w, n, c1) - t0) for n in inner]
def overlap(A, B):
    tot = 0
    for a0, a1 in A:
        for b0, b1 in B:
            tot += max(0, min(a1, b1) - max(a0, b0))
    return tot
if len(wgs) >= 2:
    for x in range(len(wgs)):
        for y in range(x + 1, len(wgs)):
            A, B = iv(wgs[x], 4, 5), iv(wgs[y], 4, 5)
            sa = sum(b - a for a, b in A)
            print('softmax overlap WG%d/WG%d: %.0f%% of WG%d softmax time' % (wgs[x], wgs[y], 100 * overlap(A, B) / sa, wgs[x]))
if len(sys.argv) > 2:
    for n in inner[:int(sys.argv[2])]:
        print(n, ' | '.join(' '.join('%6d' % (ev(4 * w, n, c) - t0) for c in range(8)) for w in wgs))
