#!/bin/bash
# Softcap's tanh share as a config field (tanh_poly_pct) with the constant
# max's cap, scale and max folded into the polynomial (tanh_fold). (1)
# test_gpu_forward's softcap section: every sm90 case also with all of the
# tanh on the polynomial; (2) bf16 d128 16k cap 30 at shares 0-100 in one
# process, the plain problem, HEAD's kernels (FA4_KERNEL_DIR) at the
# default and at 50%; the same for causal 16k.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
FA4_TEST_ONLY=softcap timeout 200 _dev/tests/test_gpu_forward > $O/fwd-softcap.txt 2>&1
echo "softcap rc=$? $(grep -c '^ok' $O/fwd-softcap.txt) ok, $(grep -c '^not ok' $O/fwd-softcap.txt) not ok, $(grep -c 'tanh_poly=100' $O/fwd-softcap.txt) on tanh_poly=100"
grep -A3 '^not ok' $O/fwd-softcap.txt | head -20
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
