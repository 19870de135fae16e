#!/bin/bash
# Per-warpgroup key ranges, second look: the seed's causal configs on the
# old tree (_dev/oldk) and the new one, three rounds (separate processes
# alternating, kernels compiled first into one database); then the
# correctness sweeps cut to one swizzle / exp2 / late_k setting (every
# tile, ring, scheduler, split and ping-pong choice kept).
# Carries: _dev as build, _dev/oldk.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
OLD=$PWD/_dev/oldk/kernels
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
ROWS=$O/rows.txt
grep -E '^(d64g1c(512|1024|4096|8192|16384)|d128g1c(4096|8192|16384)|d256g1c(512|1024))\|' \
    bench/results/2026-11-24-s21/causal_rows.txt > $ROWS
while IFS='|' read name shape cfg; do
  FA4_KERNEL_DIR=$OLD FA4_DB=/tmp/ab.db build/bench/plan_bench --rounds 1 --reps 1 $shape --config "$cfg" > /dev/null 2>&1 &
  FA4_DB=/tmp/ab.db build/bench/plan_bench --rounds 1 --reps 1 $shape --config "$cfg" > /dev/null 2>&1 &
done < $ROWS
wait; echo "precompiled $(( $(date +%s) - T0 )) s"
for r in 1 2 3; do
  while IFS='|' read name shape cfg; do
    for k in old new; do
      if [ $k = old ]; then kd="FA4_KERNEL_DIR=$OLD"; else kd=; fi
      ms=$(env $kd FA4_DB=/tmp/ab.db timeout 60 build/bench/plan_bench $shape --config "$cfg" 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
      echo "r$r $name $k $ms"
    done
  done < $ROWS
done > $O/ab.txt
echo "timed $(( $(date +%s) - T0 )) s"
python3 - $O/ab.txt <<'PY'
import sys, collections, statistics
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 4 and f[3].startswith("ms="):
        d[f[1]][f[2]].append(float(f[3][3:]))
for k, v in d.items():
    o, n = v["old"], v["new"]
    ch = [(b / a - 1) * 100 for a, b in zip(o, n)]
    print(f"{k:14s} old {' '.join('%.4f' % x for x in o)}  new {' '.join('%.4f' % x for x in n)}  "
          f"change {' '.join('%+.1f%%' % c for c in ch)}  median {statistics.median(ch):+.1f}%")
PY
F="swizzle=128 exp2_emu=0 late_k=1"
( FA4_DB=/tmp/s1.db SWEEP_ONLY="$F" SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 timeout 250 build/bench/sweep sm90 64,256 1,17,129,1000 > $O/sweep-causal.txt 2>&1; echo "exit $?" >> $O/sweep-causal.txt ) &
( FA4_DB=/tmp/s2.db SWEEP_ONLY="$F" SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 SWEEP_HEADS=8/2 timeout 250 build/bench/sweep sm90 128 1,17,129,1000 > $O/sweep-gqa.txt 2>&1; echo "exit $?" >> $O/sweep-gqa.txt ) &
( FA4_DB=/tmp/s3.db SWEEP_ONLY="$F" SWEEP_CAUSAL=1 SWEEP_WINDOW=100,20 SWEEP_DTYPE=fp16 timeout 250 build/bench/sweep sm90 64,128 17,129,1000 > $O/sweep-window.txt 2>&1; echo "exit $?" >> $O/sweep-window.txt ) &
wait
for f in sweep-causal sweep-gqa sweep-window; do echo "$f: $(grep -c '^FAIL' $O/$f.txt) FAIL; $(grep -E 'variants;|^group' $O/$f.txt | tail -1); $(tail -2 $O/$f.txt | tr '\n' ' ')"; grep '^FAIL\|COMPILE FAIL' $O/$f.txt | head -5; done
echo "total $(( $(date +%s) - T0 )) s"
