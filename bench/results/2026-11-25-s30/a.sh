#!/bin/bash
# fp8 causal tiles in groups of heads, now that the O epilogue's addresses
# no longer spill the 3-warpgroup default (experiment build: XFP8HG=1 lets
# sm90_head_group take fp8).  (1) correctness: test_gpu_forward's hgroup
# section (two fp8 cases added) and test_gpu_fp8, grouped; (2) fp8 d128
# causal, 16k tokens at 2k-16k, each default ungrouped and grouped,
# processes alternating, two rounds; bf16's seed row for the ratio.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
XFP8HG=1 FA4_TEST_ONLY=hgroup timeout 150 _dev/tests/test_gpu_forward > $O/hgroup.txt 2>&1
echo "hgroup rc=$? $(grep -c '^ok' $O/hgroup.txt) ok, $(grep -c '^not ok' $O/hgroup.txt) not ok"
grep '^not ok' $O/hgroup.txt | head
XFP8HG=1 timeout 120 _dev/tests/test_gpu_fp8 > $O/fp8.txt 2>&1
echo "fp8 rc=$? $(grep -c '^ok' $O/fp8.txt) ok, $(grep -c '^not ok' $O/fp8.txt) not ok"
grep '^not ok' $O/fp8.txt | head
for r in 1 2; do
  for shape in "1 16384" "2 8192" "4 4096" "8 2048"; do set -- $shape
    for mode in off on; do
      if [ $mode = on ]; then export XFP8HG=1; else unset XFP8HG; fi
      _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --dtype fp8 \
          --rounds 9 --reps 10 --heuristic > /tmp/pb.txt 2>/tmp/pb.err
      echo "r$r fp8 c $2 grouped=$mode: $(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\).*/\1=\2/' | tr '\n' ' ') $(head -c 150 /tmp/pb.err)"
    done
    unset XFP8HG
    _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --db _dev/rh.db \
        --rounds 9 --reps 10 > /tmp/pb.txt 2>&1
    echo "r$r bf16 c $2 seed: $(grep '^source' /tmp/pb.txt | sed 's/.*ms=\([0-9.]*\).*/\1/')"
  done
done
cat /tmp/pb.txt | head -20
