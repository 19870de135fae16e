#!/bin/bash
# The committed tree's last state (variants that spill with the max-free
# loop fall back to the max-first one in lib/jit.c; late_k converts P
# before the rescale branch again): test_gpu_forward's jumps and tail
# sections, then HEAD~1's kernels (_dev/kold) against these (_dev/knew),
# separate processes alternating, two rounds.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/j.db FA4_TEST_ONLY="jumps tail" timeout 150 build/tests/test_gpu_forward > $O/fwd.log 2>&1; echo "exit $?" >> $O/fwd.log )
echo "forward jumps/tail: $(grep -c '^ok' $O/fwd.log) ok, $(grep -c '^not ok' $O/fwd.log) not ok, $(tail -1 $O/fwd.log)"; grep -A2 '^not ok' $O/fwd.log | head -12
CASES=("--head-dim 128 --heads-q 16" "--head-dim 128 --heads-q 16 --causal" "--head-dim 64 --heads-q 32" "--head-dim 128 --heads-q 16 --dtype fp8")
for r in 1 2; do
  for shape in "${CASES[@]}"; do
    for k in kold knew; do
      t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 $shape --heuristic 2>&1 | grep '^source' | tail -1)
      echo "r$r [$shape] $k $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o ' bm=[0-9]* bn=[0-9]*' | head -1) $(echo "$t" | grep -o 'late_k=[01]' | head -1)"
    done
  done
done
