#!/bin/bash
# The sm80 kernel after this stop's fp8 changes (element size per tensor,
# O's own pack, the score scale struct): the dense 16-bit forward sweep on
# the portable family (FA4_FAMILIES=sm80).  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
cd build
FA4_FAMILIES=sm80 timeout 300 tests/test_gpu_forward > $O/sm80-forward.txt 2>&1
echo "FA4_FAMILIES=sm80 test_gpu_forward rc=$?: $(grep -c '^ok' $O/sm80-forward.txt) ok, $(grep -c '^not ok' $O/sm80-forward.txt) not ok"
grep '^not ok' $O/sm80-forward.txt | cut -c1-250 | head
