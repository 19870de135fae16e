#!/bin/bash
# The share's scores alone leave softcap_scores as exponents (softcap_done);
# the others keep exp_row's FFMA, so tanh_poly=0 compiles to HEAD's code
# byte for byte.  (1) test_gpu_forward's softcap section; (2) the shares
# again, one process per shape, two rounds for the dense rows.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
pb() { _dev/bench/plan_bench "$@" --rounds 9 --reps 10 2>&1 | grep -E '^source|rror' | sed 's/ from=.*//; s/sm90 bm=.*sched=[a-z]* //'; }
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
B="sm90 bm=192 bn=80 stages=3 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=0 late_k=1"
B64="sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=0 late_k=1"
S64="--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64"
for r in 1 2; do
  echo "== r$r d128 16k plain"; pb $S --heuristic
  echo "== r$r d128 16k cap30"; pb $S --softcap 30 --heuristic --config "$B tanh_poly=25" --config "$B tanh_poly=50" --config "$B tanh_poly=75" --config "$B tanh_poly=100"
  echo "== r$r d64 16k cap30"; pb $S64 --softcap 30 --heuristic --config "$B64 exp2_emu=25 tanh_poly=75" --config "$B64 exp2_emu=0 tanh_poly=50" --config "$B64 exp2_emu=0 tanh_poly=75" --config "$B64 exp2_emu=0 tanh_poly=100"
done
B="sm90 bm=128 bn=176 stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain late_k=1"
echo "== d128 causal 16k cap30"; pb $S --causal --softcap 30 --heuristic --config "$B tanh_poly=25" --config "$B tanh_poly=50" --config "$B tanh_poly=100"
B="sm90 bm=192 bn=128 stages=2 swizzle=128 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain late_k=1"
echo "== d64 causal 16k cap30"; pb $S64 --causal --softcap 30 --heuristic --config "$B exp2_emu=0 tanh_poly=50" --config "$B exp2_emu=0 tanh_poly=75" --config "$B exp2_emu=25 tanh_poly=75"
B="sm90 bm=192 bn=128 stages=2 swizzle=64 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=persistent"
echo "== fp8 d64 16k cap30"; pb $S64 --dtype fp8 --softcap 30 --heuristic --config "$B tanh_poly=75" --config "$B tanh_poly=100"
echo "== fp8 d64 16k cap30, HEAD's kernels"; FA4_KERNEL_DIR=_dev/headk/kernels pb $S64 --dtype fp8 --softcap 30 --heuristic
B="sm90 bm=192 bn=96 stages=4 swizzle=32 wgs=3 regs=32/160 rescale=8 sched=plain"
echo "== fp8 d128 16k cap30"; pb $S --dtype fp8 --softcap 30 --heuristic --config "$B tanh_poly=75"
echo "== fp8 d128 16k cap30, HEAD's kernels"; FA4_KERNEL_DIR=_dev/headk/kernels pb $S --dtype fp8 --softcap 30 --heuristic
FA4_TEST_ONLY=softcap timeout 200 _dev/tests/test_gpu_forward > $O/fwd-softcap.txt 2>&1
echo "softcap rc=$? $(grep -c '^ok' $O/fwd-softcap.txt) ok, $(grep -c '^not ok' $O/fwd-softcap.txt) not ok, $(grep -c 'tanh_poly=100' $O/fwd-softcap.txt) on tanh_poly=100"
grep -A3 '^not ok' $O/fwd-softcap.txt | head -20
