#!/bin/bash
# device run 4: sm80 v3 defaults: GPU tests with FA4_FAMILIES=sm80, compare vs FA2/cuDNN
O=$OUT; export FA4_DB=/tmp/s7.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in test_gpu_forward test_gpu_serving; do
  FA4_FAMILIES=sm80 timeout 200 build/tests/$t > $O/$t-sm80.log 2>&1; echo "=== sm80 $t rc=$? ok=$(grep -c '^ok' $O/$t-sm80.log) not_ok=$(grep -c '^not ok' $O/$t-sm80.log)"; grep '^not ok' $O/$t-sm80.log | head -5
done
FA4_FAMILIES=sm80 PYTHONUNBUFFERED=1 timeout 330 python3 bench/compare.py --lib build/.libs/libfa4.so --no-fa4-cute --reps 10 --gemm 0 \
   --json "$O/compare80.json" > "$O/compare80.log" 2>&1; echo rc=$?; grep -A4 "^geomean" "$O/compare80.log"
