#!/bin/bash
# Softcap's cost at the committed tree (prepare_scores moved the softcap
# after the Q release in the first block): d128 16k plain against cap 30,
# non-causal and causal, each problem's default, separate processes
# alternating, two rounds.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
for r in 1 2; do for c in "" "--causal"; do for s in "" "--softcap 30"; do
  x=$(FA4_DB=/tmp/pb.db timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 $c $s --heuristic 2>&1 | grep '^source' | tail -1)
  echo "r$r d128 ${c:-non-causal} ${s:-plain} $(echo "$x" | grep -o 'ms=[0-9.]*')"
done; done; done | tee $O/softcap.txt
