#!/bin/bash
# Rebuilt test binaries (run.sh's test_gpu_fp8_serving was linked before the
# budget change, so its sm90 varlen-over-pages configs were still refused):
# test_gpu_fp8_serving, the Python fp8 tests, test_gpu_serving.  Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 200 build/tests/test_gpu_fp8_serving > $O/test_gpu_fp8_serving-2.txt 2>&1
echo "test_gpu_fp8_serving rc=$?: $(grep -c '^ok' $O/test_gpu_fp8_serving-2.txt) ok, $(grep -c '^not ok' $O/test_gpu_fp8_serving-2.txt) not ok"
grep '^not ok' $O/test_gpu_fp8_serving-2.txt | cut -c1-250 | head
grep 'varlen queries over 16-row pages' $O/test_gpu_fp8_serving-2.txt | cut -c1-120 | head -12
export PYTHONPATH=$(pwd)/python FA4_LIBRARY=$(pwd)/build/.libs/libfa4.so
timeout 120 python3 python/tests/run.py -k fp8 --tap > $O/python-fp8-tests.txt 2>$O/python-fp8-tests-stderr.txt
echo "python fp8 tests rc=$?: $(grep -c '^ok' $O/python-fp8-tests.txt) ok, $(grep -c '^not ok' $O/python-fp8-tests.txt) not ok"
grep -E '^not ok' $O/python-fp8-tests.txt | cut -c1-300 | head
timeout 250 build/tests/test_gpu_serving > $O/test_gpu_serving-2.txt 2>&1
echo "test_gpu_serving rc=$?: $(grep -c '^ok' $O/test_gpu_serving-2.txt) ok, $(grep -c '^not ok' $O/test_gpu_serving-2.txt) not ok"
grep '^not ok' $O/test_gpu_serving-2.txt | cut -c1-250 | head
