#!/bin/bash
# Programmatic dependent launch: correctness with it on (the default), then
# plan_bench with and without (FA4_DISABLE_PDL=1), separate processes
# alternating, three rounds, on the short prefill rows and decode steps.
# Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/f8.db timeout 100 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log ) &
( FA4_DB=/tmp/fw.db FA4_TEST_ONLY="tail dynamic half pack" timeout 100 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/sv.db timeout 100 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
for f in fp8 forward serving; do echo "$f: $(grep -c '^ok' $O/$f.log) ok, $(grep -c '^not ok' $O/$f.log) not ok, $(tail -1 $O/$f.log)"; grep -A3 '^not ok' $O/$f.log | head -8; done
export FA4_DB=/tmp/pb.db
ROWS=(
"d64c512|--batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --causal"
"d64n512|--batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64"
"d128c512|--batch 32 --seqlen-q 512 --heads-q 16 --head-dim 128 --causal"
"d128n512|--batch 32 --seqlen-q 512 --heads-q 16 --head-dim 128"
"d256n512|--batch 32 --seqlen-q 512 --heads-q 8 --head-dim 256"
"d128c1k|--batch 16 --seqlen-q 1024 --heads-q 16 --head-dim 128 --causal"
"dec128k|--batch 1 --seqlen-q 1 --seqlen-k 131072 --heads-q 32 --heads-kv 8 --head-dim 128"
"dec32x8k|--batch 32 --seqlen-q 1 --seqlen-k 8192 --heads-q 32 --heads-kv 8 --head-dim 128"
"f8n4k|--batch 4 --seqlen-q 4096 --heads-q 16 --head-dim 128 --dtype fp8"
)
for row in "${ROWS[@]}"; do build/bench/plan_bench ${row#*|} --rounds 1 --heuristic > /dev/null 2>&1; done
for r in 1 2 3; do
  for row in "${ROWS[@]}"; do
    for pdl in on off; do
      dis=0; [ $pdl = off ] && dis=1
      ms=$(FA4_DISABLE_PDL=$dis build/bench/plan_bench ${row#*|} --rounds 7 --heuristic 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
      echo "r$r ${row%%|*} $pdl $ms"
    done
  done
done > $O/pdl.txt
python3 - $O/pdl.txt <<'PY'
import sys, collections, statistics
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 4 and f[3].startswith("ms="): t[f[1]][f[2]].append(float(f[3][3:]))
for k, v in t.items():
    ch = [(b / a - 1) * 100 for a, b in zip(v["off"], v["on"])]
    print(f"{k:10s} off {' '.join('%.4f' % x for x in v['off'])}  on {' '.join('%.4f' % x for x in v['on'])}  change {' '.join('%+.1f%%' % c for c in ch)}  median {statistics.median(ch):+.1f}%")
PY
echo "total $(( $(date +%s) - T0 )) s"
