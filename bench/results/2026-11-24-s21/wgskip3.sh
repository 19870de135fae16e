#!/bin/bash
# FA4_WG_RANGES only where the tile spans more queries than a key block
# (budget_sm90.c): the ten seed rows whose machine code changed, old tree
# against new, three rounds; then every causal grid row (and the GQA
# causal rows) re-tuned over the seed rehashed to these sources (the other
# 30 rows have the same machine code), exported.  Carries: _dev as build,
# _dev/oldk, _dev/rh.db.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
OLD=$PWD/_dev/oldk/kernels
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
ROWS=$O/rows.txt
grep -E '^(d64g1c(2048|4096|8192|16384)|d256g1c[0-9]+)\|' bench/results/2026-11-24-s21/causal_rows.txt > $ROWS
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
cp _dev/rh.db /tmp/tune.db
timeout 380 build/fa4-tune tune --problems bench/results/2026-11-24-s21/causal.json -j 16 --db /tmp/tune.db > $O/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 )) s"; grep -E "search:|confirmed|stored|fastest|kept|default" $O/tune.txt | cut -c1-200 | tail -50
build/fa4-tune export --json $O/tuned.json --db /tmp/tune.db > $O/export.err 2>&1; echo "export rc=$?"
