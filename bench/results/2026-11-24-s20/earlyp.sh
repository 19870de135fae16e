#!/bin/bash
# P converted right after the exponentials of the max-free block, before
# the sums' check (_dev/kP, FA4_EARLY_P; the P V wait then sits at the top
# of the exponentials' block, as ptxas places it), against HEAD's kernels
# (embedded): the jumps section (renorm and recompute paths convert again)
# on kP first, then separate processes alternating, two rounds, each
# shape's heuristic config.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/j.db FA4_KERNEL_DIR=$PWD/_dev/kP FA4_TEST_ONLY="jumps" timeout 120 build/tests/test_gpu_forward > $O/jumps.log 2>&1; echo "exit $?" >> $O/jumps.log )
echo "kP forward jumps: $(grep -c '^ok' $O/jumps.log) ok, $(grep -c '^not ok' $O/jumps.log) not ok, $(tail -1 $O/jumps.log)"; grep -A2 '^not ok' $O/jumps.log | head -12
CASES=("--head-dim 128 --heads-q 16 --dtype fp8" "--head-dim 128 --heads-q 16" "--head-dim 64 --heads-q 32" "--head-dim 128 --heads-q 16 --causal")
for r in 1 2; do
  for shape in "${CASES[@]}"; do
    for k in head kP; do
      kd=""; [ $k = kP ] && kd=$PWD/_dev/kP
      t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$kd timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 $shape --heuristic 2>&1 | grep '^source' | tail -1)
      echo "r$r [$shape] $k $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o ' bm=[0-9]* bn=[0-9]*' | head -1) $(echo "$t" | grep -o 'late_k=[01]' | head -1)"
    done
  done
done | tee $O/earlyp.txt
