#!/bin/bash
# sm90 tail split (config splits=0): correctness first -- test_gpu_forward
# (new tail-split cases + everything as before: the ptx/combine refactor
# touches sm80 and sm90), test_gpu_fp8, test_api, and the split-KV part
# of test_gpu_serving (sm80 combine after its refactor).  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in "test_gpu_forward 230" "test_gpu_fp8 90" "test_api 60" "test_gpu_serving 170"; do set -- $t
  timeout $2 build/tests/$1 > $O/$1.txt 2>&1; rc=$?
  echo "$1 rc=$rc: $(grep -c '^ok' $O/$1.txt) ok, $(grep -c '^not ok' $O/$1.txt) not ok"
  grep '^not ok' $O/$1.txt | cut -c1-260 | head -8
done
grep 'tail split' $O/test_gpu_forward.txt | cut -c1-200
