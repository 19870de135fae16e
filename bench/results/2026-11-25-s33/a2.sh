#!/bin/bash
# a.sh's timing again: the first run's filter dropped the times of the
# --config sources.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
: tests ran in a.sh


pb() { _dev/bench/plan_bench "$@" --rounds 9 --reps 10 2>&1 | grep -E '^source|rror' | sed 's/ from=.*//'; }
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
B="sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=0 late_k=1"
for r in 1 2; do
  echo "== r$r d128 16k plain"; pb $S --heuristic
  echo "== r$r d128 16k cap30, this tree"; pb $S --softcap 30 --heuristic --config "$B tanh_poly=25" --config "$B tanh_poly=50" --config "$B tanh_poly=75" --config "$B tanh_poly=100"
  echo "== r$r d128 16k cap30, HEAD's kernels"; FA4_KERNEL_DIR=_dev/headk/kernels pb $S --softcap 30 --heuristic --config "$B tanh_poly=50"
done
B="sm90 bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1"
echo "== d128 causal 16k plain"; pb $S --causal --heuristic
echo "== d128 causal 16k cap30, this tree"; pb $S --causal --softcap 30 --heuristic --config "$B tanh_poly=25" --config "$B tanh_poly=50" --config "$B tanh_poly=100"
echo "== d128 causal 16k cap30, HEAD's kernels"; FA4_KERNEL_DIR=_dev/headk/kernels pb $S --causal --softcap 30 --heuristic
