#!/bin/bash
# The committed tree (FA4_WG_RANGES where BM exceeds BN in queries): the
# correctness sweeps over the variants that compile the warpgroups' own
# ranges (d64 three-warpgroup tiles, d256 128-row tiles, d128 192-row GQA
# tiles, a sliding window at bn=64), and the GPU tests that touch masks and
# the tuner, in parallel.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
F="swizzle=128 exp2_emu=0 late_k=1"
sw() { # name env... -- args
  local n=$1; shift
  ( env FA4_DB=/tmp/$n.db "$@" > $O/sweep-$n.txt 2>&1; echo "exit $?" >> $O/sweep-$n.txt ) &
}
sw d64 SWEEP_ONLY="wgs=3 $F" SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 timeout 300 build/bench/sweep sm90 64 1,17,129,1000
sw d256 SWEEP_ONLY="$F" SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 timeout 300 build/bench/sweep sm90 256 1,17,129,1000
sw gqa SWEEP_ONLY="bm=192 $F" SWEEP_CAUSAL=1 SWEEP_DTYPE=bf16 SWEEP_HEADS=8/2 timeout 300 build/bench/sweep sm90 128 1,17,129,1000
sw win SWEEP_ONLY="bn=64 swizzle=128 exp2_emu=0" SWEEP_CAUSAL=1 SWEEP_WINDOW=100,20 SWEEP_DTYPE=fp16 timeout 300 build/bench/sweep sm90 128 17,129,1000
( FA4_DB=/tmp/g1.db FA4_TEST_ONLY="window tail pack dynamic jumps" timeout 300 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/g2.db timeout 300 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
wait
( FA4_DB=/tmp/g3.db timeout 200 build/tests/test_tune_gpu > $O/tune_gpu.log 2>&1; echo "exit $?" >> $O/tune_gpu.log )
for n in d64 d256 gqa win; do f=$O/sweep-$n.txt; echo "$n: $(grep -E '^SWEEP|variants;' $f | tail -1) $(tail -1 $f)"; grep '^FAIL\|COMPILE FAIL' $f | head -4 | cut -c1-250; done
for t in forward serving tune_gpu; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
echo "total $(( $(date +%s) - T0 )) s"
