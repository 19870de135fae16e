#!/bin/bash
# sm80 v4 defaults (loop changes + fused_kv at d > 128): correctness with
# FA4_FAMILIES=sm80, then compare.py against FA2 and cuDNN (SDPA).  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s9e.db FA4_SYSTEM_DB=
cd build
FA4_FAMILIES=sm80 timeout 260 tests/test_gpu_forward > $O/sm80-forward.txt 2>&1
echo "forward rc=$? ok=$(grep -c '^ok' $O/sm80-forward.txt) notok=$(grep -c '^not ok' $O/sm80-forward.txt)"; grep '^not ok' $O/sm80-forward.txt | head -5
cd ..
FA4_FAMILIES=sm80 PYTHONUNBUFFERED=1 timeout ${LIMIT:-300} python3 bench/compare.py --lib build/.libs/libfa4.so --no-fa4-cute \
    --no-flashinfer --reps 10 --gemm 0 --json "$O/compare80.json" > "$O/compare80.txt" 2>&1; echo rc=$?
grep -A6 "^geomean" "$O/compare80.txt"
