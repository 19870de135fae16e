#!/bin/bash
# The committed tree: the half-block and neighbouring mask sections of
# test_gpu_forward and the whole of test_gpu_serving (varlen and paged
# causal prefill through the half block under its 128x128 overrides), in
# parallel; then test_gpu_fp8 (fp8 keeps its machine code).  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
( FA4_DB=/tmp/g1.db FA4_TEST_ONLY="half ranges pack dynamic" timeout 330 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/g2.db timeout 330 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
wait
( FA4_DB=/tmp/g3.db timeout 200 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log )
for t in forward serving fp8; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
echo "total $(( $(date +%s) - T0 )) s"
