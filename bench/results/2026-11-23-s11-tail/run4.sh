#!/bin/bash
# After merging the sm100 decode branch (split-KV helpers moved from
# launch_sm80.c into launch.c) and the tail split: the sm80 split-KV paths
# on the GPU (test_gpu_serving, test_gpu_fp8_serving) and the Python
# package's tests.  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11b.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in "test_gpu_serving 300" "test_gpu_fp8_serving 200"; do set -- $t
  timeout $2 build/tests/$1 > $O/$1.txt 2>&1; rc=$?
  echo "$1 rc=$rc: $(grep -c '^ok' $O/$1.txt) ok, $(grep -c '^not ok' $O/$1.txt) not ok"
  grep '^not ok' $O/$1.txt | cut -c1-260 | head -8
done
