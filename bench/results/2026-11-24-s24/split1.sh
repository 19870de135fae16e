#!/bin/bash
# FA4_PV_SPLIT (P V in two wgmma groups; the first half of P converted among
# the other half's exponentials): correctness on the experiment build (default 1 embedded), then
# kernel_ab.sh against HEAD's kernels (_dev/kold) on eight rows.
# Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/f8.db timeout 150 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log ) &
( FA4_DB=/tmp/fw.db FA4_TEST_ONLY="jumps softcap half ranges" timeout 150 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
wait
echo "checked $(( $(date +%s) - T0 )) s"
for f in fp8 forward; do echo "$f: $(grep -c '^ok' $O/$f.log) ok, $(grep -c '^not ok' $O/$f.log) not ok, $(tail -1 $O/$f.log)"; grep -A3 '^not ok' $O/$f.log | head -8; done
AB_DB=/tmp/ab.db timeout 330 bash bench/kernel_ab.sh _dev/kold/kernels bench/results/2026-11-24-s24/pvf_rows.txt 2 > $O/ab.txt 2>&1
tail -9 $O/ab.txt
echo "total $(( $(date +%s) - T0 )) s"
