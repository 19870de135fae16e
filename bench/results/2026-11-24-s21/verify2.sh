#!/bin/bash
# The committed tree: the GPU tests that verify.sh left unfinished or did
# not run -- test_gpu_serving whole, and the fp8 tests (fp8 d64's default,
# three warpgroups of 192x128, compiles the warpgroups' own key ranges
# under a causal mask) -- three processes at once.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
T0=$(date +%s)
for t in serving fp8 fp8_serving; do
  ( FA4_DB=/tmp/v-$t.db timeout 420 build/tests/test_gpu_$t > $O/$t.log 2>&1; echo "exit $?" >> $O/$t.log ) &
done
wait
for t in serving fp8 fp8_serving; do
  echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -12
done
echo "total $(( $(date +%s) - T0 )) s"
