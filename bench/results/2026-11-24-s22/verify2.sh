#!/bin/bash
# After the review refactor (the half block through gemm_qk / convert_p /
# gemm_pv templated on their arrays, zero_first_block_v shared with the
# main loop; dense machine code unchanged): the sections and programs
# whose paths the refactor touched, in parallel.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
T0=$(date +%s)
( FA4_DB=/tmp/g1.db FA4_TEST_ONLY="half ranges" timeout 320 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log ) &
( FA4_DB=/tmp/g2.db timeout 320 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
( FA4_DB=/tmp/g3.db timeout 320 build/tests/test_gpu_fp8_serving > $O/fp8_serving.log 2>&1; echo "exit $?" >> $O/fp8_serving.log ) &
wait
for t in forward serving fp8_serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
echo "total $(( $(date +%s) - T0 )) s"
