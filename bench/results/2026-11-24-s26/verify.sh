#!/bin/bash
# The committed tree on the GPU: the serving tests (varlen and paged keep one
# Q slot; their kernels' sources changed shape) and the fp8 tests, in parallel.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/verify; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/v1.db timeout 280 _dev/tests/test_gpu_serving > $O/verify/serving.tap 2>&1; echo "exit $?" >> $O/verify/serving.tap ) &
( FA4_DB=/tmp/v2.db timeout 280 _dev/tests/test_gpu_fp8_serving > $O/verify/fp8_serving.tap 2>&1; echo "exit $?" >> $O/verify/fp8_serving.tap ) &
( FA4_DB=/tmp/v3.db timeout 280 _dev/tests/test_gpu_fp8 > $O/verify/fp8.tap 2>&1; echo "exit $?" >> $O/verify/fp8.tap ) &
wait
for t in serving fp8_serving fp8; do echo "$t: $(grep -c '^ok' $O/verify/$t.tap) ok, $(grep -c '^not ok' $O/verify/$t.tap) not ok, $(tail -1 $O/verify/$t.tap)"; grep -A3 '^not ok' $O/verify/$t.tap | head -6; done
