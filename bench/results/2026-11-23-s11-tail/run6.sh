#!/bin/bash
# After the review mends (one combine launch for both layouts, the tail split's
# parameters from fa4_params' tile count): the tail-split cases and the
# split-KV serving paths again.  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11f.db FA4_SYSTEM_DB=
FA4_TEST_ONLY=tail timeout 150 build/tests/test_gpu_forward > $O/tail-tests-2.txt 2>&1
echo "tail rc=$?: $(grep -c '^ok' $O/tail-tests-2.txt) ok, $(grep -c '^not ok' $O/tail-tests-2.txt) not ok"
timeout 300 build/tests/test_gpu_serving > $O/test_gpu_serving-2.txt 2>&1
echo "serving rc=$?: $(grep -c '^ok' $O/test_gpu_serving-2.txt) ok, $(grep -c '^not ok' $O/test_gpu_serving-2.txt) not ok"
grep '^not ok' $O/*.txt | cut -c1-200 | head
