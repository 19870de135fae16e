#!/bin/bash
# Timing bounds, not kernels (results wrong): fp8 d128 16k without the
# softmax's row sums (_dev/knosum: exp_row adds nothing) and without P's
# e4m3 conversion (_dev/knocvt: P = raw bits, no F2FP/PRMT), against HEAD;
# what each piece of the per-score work costs.  Separate processes
# alternating, two rounds.  Carries: _dev as build.
ln -sfn _dev build
export FA4_SYSTEM_DB=
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 --heuristic"
for k in head nosum nocvt; do kd=""; [ $k != head ] && kd=$PWD/_dev/k$k/kernels; FA4_KERNEL_DIR=$kd FA4_DB=/tmp/$k.db build/bench/plan_bench $S --rounds 1 > /dev/null 2>&1 & done; wait
for r in 1 2; do for k in head nosum nocvt; do
  kd=""; [ $k != head ] && kd=$PWD/_dev/k$k/kernels
  ms=$(FA4_KERNEL_DIR=$kd FA4_DB=/tmp/$k.db build/bench/plan_bench $S --rounds 7 2>&1 | grep '^source' | grep -o 'ms=[0-9.]*')
  echo "r$r f8 $k $ms"
done; done
