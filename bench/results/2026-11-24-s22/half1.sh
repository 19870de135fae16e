#!/bin/bash
# FA4_DIAG_HALF (a warpgroup's first block at half width where its rows see
# only the block's first half): correctness sweeps over the variants that
# compile it and the mask/serving GPU tests, in parallel; then the ten seed
# rows whose machine code changed, old tree against new, three rounds
# (bench/kernel_ab.sh).  Carries: _dev as build (_dev/oldk: HEAD's kernels).
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
F="swizzle=128 exp2_emu=0 late_k=1"
sw() { # name env... : one sweep in the background
  local n=$1; shift
  ( env FA4_DB=/tmp/$n.db "$@" > $O/sweep-$n.txt 2>&1; echo "exit $?" >> $O/sweep-$n.txt ) &
}
sw d64 SWEEP_ONLY="bn=128 $F" SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 timeout 270 build/bench/sweep sm90 64 1,17,129,1000
sw d128 SWEEP_ONLY="bn=128 $F pingpong=1" SWEEP_CAUSAL=1 SWEEP_DTYPE=fp16 timeout 270 build/bench/sweep sm90 128 1,17,129,1000
sw gqa SWEEP_ONLY="bn=128 $F" SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 SWEEP_HEADS=8/2 timeout 270 build/bench/sweep sm90 128 1,17,129,1000
sw win SWEEP_ONLY="bn=128 swizzle=128 exp2_emu=0 late_k=0" SWEEP_CAUSAL=1 SWEEP_WINDOW=100,20 SWEEP_DTYPE=bf16 timeout 270 build/bench/sweep sm90 64 17,129,1000
( FA4_DB=/tmp/g1.db FA4_TEST_ONLY="ranges window tail pack softcap" timeout 270 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/g2.db timeout 270 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
for n in d64 d128 gqa win; do f=$O/sweep-$n.txt; echo "$n: $(grep -E '^SWEEP|variants;' $f | tail -1) $(tail -1 $f)"; grep '^FAIL\|COMPILE FAIL' $f | head -4 | cut -c1-250; done
for t in forward serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
AB_DB=/tmp/ab.db timeout 300 bash bench/kernel_ab.sh $PWD/_dev/oldk/kernels bench/results/2026-11-24-s22/half_rows.txt 3 > $O/ab.txt 2>&1
tail -11 $O/ab.txt
echo "total $(( $(date +%s) - T0 )) s"
