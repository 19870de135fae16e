#!/bin/bash
# The GPU tests at this tree (the packed default included), all families,
# two at a time.  Carries: _dev as build.  Writes $OUT/gpu-*.log.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
run() { name=$1; shift; ( FA4_DB=/tmp/c-$name.db timeout ${LIMIT:-270} "$@" > $O/gpu-$name.log 2>&1; echo "exit $?" >> $O/gpu-$name.log ) & }
run forward build/tests/test_gpu_forward; run serving build/tests/test_gpu_serving; wait
run fp8 build/tests/test_gpu_fp8; run fp8serving build/tests/test_gpu_fp8_serving; wait
for f in $O/gpu-*.log; do echo "$f: $(grep -c '^ok' $f) ok, $(grep -c '^not ok' $f) not ok, $(grep -c '# SKIP' $f) skip, $(tail -1 $f)"; grep '^not ok' $f | head -5 | cut -c1-250; done
