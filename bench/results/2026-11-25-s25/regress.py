#!/usr/bin/env python3
"""Softmax duration (events 4..5) of each consumer warp against its overlap
with the other warpgroup's softmax on the same SM sub-partition: least
squares duration = solo + k * overlap.  Usage: regress.py TRACE..."""
import struct, sys
import numpy as np
for f in sys.argv[1:]:
    buf = open(f, 'rb').read(); W = 1088
    a = struct.unpack('<%dI' % (len(buf) // 4), buf)
    w = [a[i * W:(i + 1) * W] for i in range(16)]
    X, Y = [], []
    for x in range(8):
        other = [y for y in range(8) if y // 4 != x // 4 and y % 4 == x % 4][0]
        for n in range(3, 82):
            s0, s1 = w[x][n * 8 + 4], w[x][n * 8 + 5]
            ov = sum(max(0, min(s1, w[other][m * 8 + 5]) - max(s0, w[other][m * 8 + 4]))
                     for m in range(85) if w[other][m * 8 + 4] and w[other][m * 8 + 5])
            X.append(ov); Y.append(s1 - s0)
    X, Y = np.array(X, float), np.array(Y, float)
    c = np.linalg.lstsq(np.vstack([np.ones_like(X), X]).T, Y, rcond=None)[0]
    print('%s: softmax = %.0f + %.2f * overlap (mean %.0f, mean overlap %.0f)' % (f, c[0], c[1], Y.mean(), X.mean()))
