#!/bin/bash
# The committed sm80 v5 tree on the GPU: the serving tests in full (their sm80
# tiles of 32 rows, fp8 ones included, now take the lean loop on Hopper).
# Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
T0=$(date +%s)
( FA4_DB=/tmp/sv.db timeout 420 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
( FA4_DB=/tmp/f8.db timeout 420 build/tests/test_gpu_fp8_serving > $O/fp8_serving.log 2>&1; echo "exit $?" >> $O/fp8_serving.log ) &
wait
for t in serving fp8_serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
echo "total $(( $(date +%s) - T0 )) s"
