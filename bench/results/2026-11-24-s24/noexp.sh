#!/bin/bash
# Timing bound, not a kernel: the main loop's exponentials replaced by one
# FFMA (_dev/knoexp: HEAD's kernels, exp_row's ex2 -> fmaf; results wrong).
# If fp8 d128 then runs near its tensor time, MUFU and the tensor pipe do
# not overlap there.  HEAD vs knoexp, separate processes alternating.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
ROWS=("f8|$S --dtype fp8 --heuristic" "f8c|$S --dtype fp8 --causal --heuristic" "bf16|$S --heuristic" "f8d256|--batch 1 --seqlen-q 16384 --heads-q 8 --head-dim 256 --dtype fp8 --heuristic")
for row in "${ROWS[@]}"; do for k in head noexp; do kd=""; [ $k = noexp ] && kd=$PWD/_dev/knoexp/kernels; FA4_KERNEL_DIR=$kd FA4_DB=/tmp/$k.db build/bench/plan_bench ${row#*|} --rounds 1 > /dev/null 2>&1 & done; done; wait
for r in 1 2; do for row in "${ROWS[@]}"; do for k in head noexp; do
  kd=""; [ $k = noexp ] && kd=$PWD/_dev/knoexp/kernels
  ms=$(FA4_KERNEL_DIR=$kd FA4_DB=/tmp/$k.db build/bench/plan_bench ${row#*|} --rounds 7 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
  echo "r$r ${row%%|*} $k $ms"
done; done; done
