#!/bin/bash
# The final fp8 rules (d128 under a mask below 4k keys: 128x128 fused,
# dynamic; 4k and up: 192 x 96; d64 dense: the persistent scheduler):
# test_gpu_fp8's defaults (13 cases; 2 x 1000 and 8500 keys at d64 dense)
# and each default through the public API against bf16's seed row,
# processes alternating, two rounds.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_ONLY=defaults timeout 300 _dev/tests/test_gpu_fp8 > $O/fp8-defaults.txt 2>&1
echo "fp8 defaults rc=$? $(grep -c '^ok' $O/fp8-defaults.txt) ok, $(grep -c '^not ok' $O/fp8-defaults.txt) not ok"
grep '^not ok' $O/fp8-defaults.txt | head
cut() { sed 's/source=.* ms=\([0-9.]*\) .*config=\[sm90 \(bm=[0-9]* bn=[0-9]* stages=[0-9]*\).*\(sched=[a-z]*\) \(splits=[0-9]\).*/\1 \2 \3 \4/'; }
for r in 1 2; do
  for row in "8 2048 32 64 0" "2 8192 32 64 0" "1 16384 32 64 0" "16 1024 16 128 1" "8 2048 16 128 1" "4 4096 16 128 1"; do
    set -- $row; c=; [ $5 = 1 ] && c=--causal
    f=$(_dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $c --dtype fp8 --heuristic \
        --rounds 9 --reps 10 2>&1 | grep '^source\|skipped' | cut)
    b=$(_dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $c --db _dev/rh.db \
        --rounds 9 --reps 10 2>&1 | grep '^source' | sed 's/.* ms=\([0-9.]*\).*/\1/')
    echo "r$r b$1 s$2 h$3 d$4 causal=$5: fp8 $f | bf16 $b | $(echo "$f $b" | awk '{printf "%.3fx", $NF / $1}')"
  done
done
