#!/bin/bash
# What the max-free block's safety net costs (diagnostic kernels, not for
# use): _dev/kQ replaces the recompute branch (sums past 2^100) by a trap,
# _dev/kR drops the sums check and its votes altogether (exact only while
# no P outgrows its type, as on plan_bench's inputs).  HEAD's kernels
# (embedded) against both, separate processes alternating, two rounds,
# each shape's heuristic config.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
CASES=("--head-dim 128 --heads-q 16 --dtype fp8" "--head-dim 128 --heads-q 16" "--head-dim 64 --heads-q 32" "--head-dim 128 --heads-q 16 --causal")
for r in 1 2; do
  for shape in "${CASES[@]}"; do
    for k in head kQ kR; do
      kd=""; [ $k != head ] && kd=$PWD/_dev/$k
      t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$kd timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 $shape --heuristic 2>&1 | grep '^source' | tail -1)
      echo "r$r [$shape] $k $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o ' bm=[0-9]* bn=[0-9]*' | head -1) $(echo "$t" | grep -o 'late_k=[01]' | head -1)"
    done
  done
done | tee $O/checkcost.txt
