#!/bin/bash
# The committed tree: test_gpu_forward's remaining sections (grid,
# dynamic, exp2, pack; softcap, jumps, window and tail ran in
# tidy_tests.sh), two processes at once.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/g1.db FA4_TEST_ONLY="grid" timeout 480 build/tests/test_gpu_forward > $O/grid.log 2>&1; echo "exit $?" >> $O/grid.log ) &
( FA4_DB=/tmp/g2.db FA4_TEST_ONLY="dynamic exp2 pack" timeout 480 build/tests/test_gpu_forward > $O/rest.log 2>&1; echo "exit $?" >> $O/rest.log ) &
wait
for t in grid rest; do
  echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -12
done
