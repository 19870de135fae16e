#!/usr/bin/env python3
"""Per-tile phases from tiles.sh's traces (fa4_trace[16][1088] u32; warp w =
wg*4 + warp; tile k at slots 8k..8k+7: 0 top, 1 Q ready, 5 first block done,
2 loop done (P V waited), 3 epilogue stored, 4 next tile's Q ready; 6 blocks,
7 m_block + 65536 head).  Prints each consumer warp 0 of a warpgroup's tiles
and the medians."""
import struct, sys, statistics as st
for path in sys.argv[1:]:
    raw = open(path, 'rb').read()
    n = len(raw) // 4
    a = struct.unpack('<%dI' % n, raw)
    W = n // 16
    print('==', path)
    for w in (4, 8, 12):          # warp 0 of consumer WG 0, 1, 2 (slot base wg*4+0)
        rows = a[w * W:(w + 1) * W]
        # wg index = w // 4 (consumer wg numbering starts at 0 -> trace uses wg*4)
    for wg in range(3):
        rows = a[(wg * 4) * W:(wg * 4 + 1) * W]
        tiles = []
        for k in range(128):
            s = rows[8 * k:8 * k + 8]
            if s[0] == 0:
                break
            tiles.append(s)
        if not tiles:
            continue
        ph = {'qwait': [], 'first': [], 'loop': [], 'epi': [], 'next': [], 'total': [], 'per_blk': []}
        t0 = tiles[0][0]
        lines = []
        for k, s in enumerate(tiles):
            d = lambda x, y: (s[y] - s[x]) & 0xffffffff
            nb = s[6]
            q, f, l, e, nx = d(0, 1), d(1, 5), d(5, 2), d(2, 3), d(3, 4)
            tot = d(0, 4)
            ph['qwait'].append(q); ph['first'].append(f); ph['loop'].append(l)
            ph['epi'].append(e); ph['next'].append(nx); ph['total'].append(tot)
            if nb > 1:
                ph['per_blk'].append(l / (nb - 1))
            if k < 6:
                lines.append('  tile %2d blocks %d mb %d: start %7d qwait %5d first %5d loop %6d epi %5d next %5d total %6d'
                             % (k, nb, s[7] & 0xffff, (s[0] - t0) & 0xffffffff, q, f, l, e, nx, tot))
        print(' wg %d: %d tiles' % (wg, len(tiles)))
        print('\n'.join(lines))
        print('  median: ' + ' '.join('%s %d' % (k, st.median(v)) for k, v in ph.items() if v))
