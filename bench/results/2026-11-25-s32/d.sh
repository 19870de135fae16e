#!/bin/bash
# The V^T copy, 4 blocks of 32 keys per CTA with the output phase over all
# 256 threads (a.sh/b.sh: one over 64 threads ran 2x slower, 39% achieved
# occupancy), groups padded apart in shared memory.  Checks, ncu, and
# HEAD (plan_bench_old) against it, processes alternating, two rounds.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_ONLY=defaults timeout 170 _dev/tests/test_gpu_fp8 > $O/fp8-defaults.txt 2>&1
echo "fp8 defaults rc=$? $(grep -c '^ok' $O/fp8-defaults.txt) ok, $(grep -c '^not ok' $O/fp8-defaults.txt) not ok"
grep '^not ok' $O/fp8-defaults.txt | head
timeout 120 _dev/tests/test_gpu_fp8_serving > $O/fp8-serving.txt 2>&1
echo "fp8 serving rc=$? $(grep -c '^ok' $O/fp8-serving.txt) ok, $(grep -c '^not ok' $O/fp8-serving.txt) not ok"
grep '^not ok' $O/fp8-serving.txt | head
for pb in plan_bench_old plan_bench; do
timeout 40 ncu --clock-control none --launch-skip 6 --launch-count 1 -k regex:fa4_v_ \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed \
    _dev/bench/$pb --batch 16 --seqlen-q 1024 --heads-q 16 --head-dim 128 --causal --dtype fp8 --heuristic \
    --rounds 1 --reps 2 2>&1 | grep -E 'gpu__time|dram__|sm__thr' | sed "s/^/$pb /"
done
for round in 1; do
for row in "16 1024 16 128 1" "16 1024 16 128 0" "8 2048 16 128 1" "8 2048 32 64 0" "16 1024 16 256 0"; do set -- $row
  c=; [ $5 = 1 ] && c=--causal
  for k in plan_bench_old plan_bench; do
    echo "r$round fp8 b$1 s$2 h$3 d$4 causal=$5 $k: $(_dev/bench/$k --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $c \
        --dtype fp8 --heuristic --rounds 9 --reps 10 2>&1 | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/')"
  done
done
done
