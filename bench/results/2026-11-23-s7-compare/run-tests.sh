#!/bin/bash
O=$OUT; export FA4_DB=/tmp/s7b.db FA4_SYSTEM_DB=
for t in test_gpu_forward test_gpu_fp8 test_api; do
  timeout 280 build/tests/$t > $O/$t.log 2>&1; echo "=== $t rc=$? ok=$(grep -c '^ok' $O/$t.log) not_ok=$(grep -c '^not ok' $O/$t.log)"; grep '^not ok' $O/$t.log | head -5
done
