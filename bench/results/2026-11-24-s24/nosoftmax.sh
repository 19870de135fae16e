#!/bin/bash
# Timing bound, not a kernel: the main loop with no softmax work at all
# (_dev/knosm: exp_row returns at once, every warp takes the max-free path;
# P is the raw scores packed, results wrong): what the GEMMs, waits and
# ring cost alone.  HEAD vs knosm, separate processes alternating.
ln -sfn _dev build
export FA4_SYSTEM_DB=
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
ROWS=("f8|$S --dtype fp8 --heuristic" "bf16|$S --heuristic" "f8d256|--batch 1 --seqlen-q 16384 --heads-q 8 --head-dim 256 --dtype fp8 --heuristic")
for row in "${ROWS[@]}"; do for k in head nosm; do kd=""; [ $k = nosm ] && kd=$PWD/_dev/knosm/kernels; FA4_KERNEL_DIR=$kd FA4_DB=/tmp/$k.db build/bench/plan_bench ${row#*|} --rounds 1 > /dev/null 2>&1 & done; done; wait
for r in 1 2; do for row in "${ROWS[@]}"; do for k in head nosm; do
  kd=""; [ $k = nosm ] && kd=$PWD/_dev/knosm/kernels
  ms=$(FA4_KERNEL_DIR=$kd FA4_DB=/tmp/$k.db build/bench/plan_bench ${row#*|} --rounds 7 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
  echo "r$r ${row%%|*} $k $ms"
done; done; done
