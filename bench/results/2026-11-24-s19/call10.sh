#!/bin/bash
# The fp8 default for d96-d128 without a mask (fused ring, persistent, no
# ping-pong): test_gpu_fp8 with it, then the default through the public API
# on the three shapes of the NOTES table (two rounds).  Carries: _dev.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/t10.db timeout 330 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log )
echo "fp8: $(grep -c '^ok' $O/fp8.log) ok, $(grep -c '^not ok' $O/fp8.log) not ok, $(tail -1 $O/fp8.log) $(grep '^1\.\.' $O/fp8.log)"; grep -A3 '^not ok' $O/fp8.log | head -12
for r in 1 2; do
 for shape in "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128" "--batch 4 --seqlen-q 4096 --heads-q 16 --head-dim 128" "--batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8 --head-dim 128"; do
  t=$(FA4_DB=/tmp/h10.db timeout 60 build/bench/plan_bench $shape --dtype fp8 --heuristic 2>&1 | grep '^source\|^plan_bench' | tail -1)
  echo "r$r fp8 [$shape] $(echo "$t" | grep -o 'ms=[0-9.]*\|^plan_bench.*') $(echo "$t" | grep -o 'fused_kv=[01]' | head -1) $(echo "$t" | grep -o 'sched=[a-z]*' | head -1)"
 done
done
