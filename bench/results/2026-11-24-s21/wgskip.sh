#!/bin/bash
# Per-warpgroup key ranges (a warpgroup skips the blocks its rows do not
# see): correctness over every causal / windowed sm90 variant on ragged
# lengths, the GPU tests that touch masks, then the seed's 20 causal configs
# timed on the old kernel tree (_dev/oldk) against the new one (separate
# processes alternating, two rounds).  Carries: _dev as build, _dev/oldk.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
OLD=$PWD/_dev/oldk/kernels
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/s1.db SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 timeout 330 build/bench/sweep sm90 64,256 1,17,129,1000 > $O/sweep-causal.txt 2>&1; echo "exit $?" >> $O/sweep-causal.txt ) &
( FA4_DB=/tmp/s2.db SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 SWEEP_HEADS=8/2 timeout 330 build/bench/sweep sm90 128 1,17,129,1000 > $O/sweep-gqa.txt 2>&1; echo "exit $?" >> $O/sweep-gqa.txt ) &
( FA4_DB=/tmp/s3.db SWEEP_CAUSAL=1 SWEEP_WINDOW=100,20 SWEEP_DTYPE=fp16 timeout 330 build/bench/sweep sm90 64,128 17,129,1000 > $O/sweep-window.txt 2>&1; echo "exit $?" >> $O/sweep-window.txt ) &
( FA4_DB=/tmp/g1.db FA4_TEST_ONLY="window tail pack dynamic jumps" timeout 330 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log
  FA4_DB=/tmp/g2.db timeout 200 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
# the A/B kernels compiled meanwhile into one database (binaries cached by source hash)
( while IFS='|' read name shape cfg; do
    for k in old new; do
      if [ $k = old ]; then kd="FA4_KERNEL_DIR=$OLD"; else kd=; fi
      env $kd FA4_DB=/tmp/ab.db build/bench/plan_bench --rounds 1 --reps 1 $shape --config "$cfg" > /dev/null 2>&1 &
    done
    wait
  done < bench/results/2026-11-24-s21/causal_rows.txt; echo "precompiled $(( $(date +%s) - T0 )) s" ) > $O/precompile.txt 2>&1 &
wait
echo "correctness phase $(( $(date +%s) - T0 )) s"
for f in sweep-causal sweep-gqa sweep-window; do echo "$f: $(grep -c '^FAIL' $O/$f.txt) FAIL; $(grep -E 'variants;|^variants|failures' $O/$f.txt | tail -2 | tr '\n' ' ')"; grep '^FAIL\|COMPILE FAIL' $O/$f.txt | head -5; done
for t in forward serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
cat $O/precompile.txt
for r in 1 2; do
  while IFS='|' read name shape cfg; do
    for k in old new; do
      if [ $k = old ]; then kd="FA4_KERNEL_DIR=$OLD"; else kd=; fi
      ms=$(env $kd FA4_DB=/tmp/ab.db timeout 60 build/bench/plan_bench $shape --config "$cfg" 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
      echo "r$r $name $k $ms"
    done
  done < bench/results/2026-11-24-s21/causal_rows.txt
done > $O/ab.txt
echo "total $(( $(date +%s) - T0 )) s"
python3 - $O/ab.txt <<'PY'
import sys, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 4 and f[3].startswith("ms="):
        d[f[1]][f[2]].append(float(f[3][3:]))
for k, v in d.items():
    o, n = v["old"], v["new"]
    print(f"{k:14s} old {' '.join('%.4f' % x for x in o)}  new {' '.join('%.4f' % x for x in n)}  "
          f"change {' '.join('%+.1f%%' % ((b / a - 1) * 100) for a, b in zip(o, n))}")
PY
