#!/bin/bash
# Prototype FA4_XHALF, drained form (two halves per block, each half's
# Q K^T issued a half-step ahead of its softmax; dense unmasked tiles
# without ping-pong): correctness (fp8 test, sweep of the pingpong=0
# non-causal variants at d64/d128, ragged lengths), then kernel_ab.sh
# against HEAD's kernels.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/f8.db timeout 150 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log ) &
( FA4_DB=/tmp/sw.db SWEEP_CAUSAL=0 SWEEP_ONLY="pingpong=0 wgs=2 stages=2 swizzle=128" timeout 150 build/bench/sweep sm90 64,128 1,17,129,1000 > $O/sweep.txt 2>&1; echo "exit $?" >> $O/sweep.txt ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
echo "fp8: $(grep -c '^ok' $O/fp8.log) ok, $(grep -c '^not ok' $O/fp8.log) not ok, $(tail -1 $O/fp8.log)"; grep -A3 '^not ok' $O/fp8.log | head -8
echo "sweep: $(grep -E 'variants' $O/sweep.txt | tail -1) $(tail -1 $O/sweep.txt)"; grep 'FAIL' $O/sweep.txt | head -5 | cut -c1-250
AB_DB=/tmp/ab.db timeout 240 bash bench/kernel_ab.sh _dev/kold/kernels bench/results/2026-11-24-s24/xhalf2_rows.txt 2 > $O/ab.txt 2>&1
tail -6 $O/ab.txt
echo "total $(( $(date +%s) - T0 )) s"
