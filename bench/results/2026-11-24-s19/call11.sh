#!/bin/bash
# The committed tree (--no-cache, binaries stored once loaded, fp8's new
# default): test_gpu_forward from the start until the limit.  Carries: _dev.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
( FA4_DB=/tmp/t11.db timeout 470 build/tests/test_gpu_forward > $O/forward.log 2>&1; echo "exit $?" >> $O/forward.log )
echo "forward: $(grep -c '^ok' $O/forward.log) ok, $(grep -c '^not ok' $O/forward.log) not ok, $(tail -1 $O/forward.log)"; grep -A3 '^not ok' $O/forward.log | head -12
