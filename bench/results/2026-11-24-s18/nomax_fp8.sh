#!/bin/bash
# The max-free loop after the quad-consistent renorm: test_gpu_forward's
# jumps, tail, pack and softcap sections, then test_gpu_fp8 and
# test_gpu_fp8_serving.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/j.db FA4_TEST_ONLY="jumps tail pack softcap" timeout 200 build/tests/test_gpu_forward > $O/fwd.log 2>&1; echo "exit $?" >> $O/fwd.log )
echo "forward jumps/tail/pack/softcap: $(grep -c '^ok' $O/fwd.log) ok, $(grep -c '^not ok' $O/fwd.log) not ok, $(tail -1 $O/fwd.log)"; grep -A2 '^not ok' $O/fwd.log | head -12
( FA4_DB=/tmp/f.db timeout 170 build/tests/test_gpu_fp8 > $O/fp8.log 2>&1; echo "exit $?" >> $O/fp8.log )
echo "fp8: $(grep -c '^ok' $O/fp8.log) ok, $(grep -c '^not ok' $O/fp8.log) not ok, $(tail -1 $O/fp8.log)"; grep -A2 '^not ok' $O/fp8.log | head -8
( FA4_DB=/tmp/s.db timeout 170 build/tests/test_gpu_fp8_serving > $O/fp8s.log 2>&1; echo "exit $?" >> $O/fp8s.log )
echo "fp8 serving: $(grep -c '^ok' $O/fp8s.log) ok, $(grep -c '^not ok' $O/fp8s.log) not ok, $(tail -1 $O/fp8s.log)"; grep -A2 '^not ok' $O/fp8s.log | head -8
