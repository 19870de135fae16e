#!/bin/bash
# After hoisting V's fp8 factor in the sm80 epilogue: test_gpu_fp8_serving.  Carries: build.
O=$OUT; mkdir -p $O
timeout 220 build/tests/test_gpu_fp8_serving > $O/test_gpu_fp8_serving-final.txt 2>&1
echo "test_gpu_fp8_serving rc=$?: $(grep -c '^ok' $O/test_gpu_fp8_serving-final.txt) ok, $(grep -c '^not ok' $O/test_gpu_fp8_serving-final.txt) not ok"
grep '^not ok' $O/test_gpu_fp8_serving-final.txt | cut -c1-250 | head
