#!/bin/bash
# Correctness of the max-free main loop: test_gpu_forward's jumps section
# first, then the whole test (every section).  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/j.db FA4_TEST_ONLY="jumps" timeout 100 build/tests/test_gpu_forward > $O/jumps.log 2>&1; echo "exit $?" >> $O/jumps.log )
echo "forward jumps: $(grep -c '^ok' $O/jumps.log) ok, $(grep -c '^not ok' $O/jumps.log) not ok, $(tail -1 $O/jumps.log)"; grep -A2 '^not ok' $O/jumps.log | head -20
( FA4_DB=/tmp/t.db timeout 440 build/tests/test_gpu_forward > $O/fwd.log 2>&1; echo "exit $?" >> $O/fwd.log )
echo "forward: $(grep -c '^ok' $O/fwd.log) ok, $(grep -c '^not ok' $O/fwd.log) not ok, $(grep -c '# SKIP' $O/fwd.log) skip, $(tail -1 $O/fwd.log)"; grep -A2 '^not ok' $O/fwd.log | head -20
