#!/bin/bash
# The committed build on the H100: the fp8 tests (dense defaults and explicit
# configs; serving: varlen and paged prefill through the V^T copy's 32-key
# blocks), in parallel, each to its time limit.
ln -sfn _dev build
O=${OUT:-/tmp}/f8verify; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/v1.db timeout 240 build/tests/test_gpu_fp8 > $O/fp8.txt 2>&1; echo "exit $?" >> $O/fp8.txt ) &
( FA4_DB=/tmp/v2.db timeout 240 build/tests/test_gpu_fp8_serving > $O/fp8_serving.txt 2>&1; echo "exit $?" >> $O/fp8_serving.txt ) &
wait
for f in fp8 fp8_serving; do echo "$f: $(grep -c '^ok' $O/$f.txt) ok, $(grep -c '^not ok' $O/$f.txt) not ok, $(grep '^1\.\.' $O/$f.txt) $(tail -1 $O/$f.txt)"; grep -A4 '^not ok' $O/$f.txt | head -10; done
