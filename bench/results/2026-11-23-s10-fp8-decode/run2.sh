#!/bin/bash
# After the zero-workspace test fix: test_gpu_fp8_serving in full, the Python
# package's fp8 tests (sm80 layouts included), and bench/fp8_serving.py (fp8
# against bf16 through the Python package; decode now on the sm80 family).
# Carries: build.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s10.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 240 build/tests/test_gpu_fp8_serving > $O/test_gpu_fp8_serving-2.txt 2>&1
echo "test_gpu_fp8_serving rc=$?: $(grep -c '^ok' $O/test_gpu_fp8_serving-2.txt) ok, $(grep -c '^not ok' $O/test_gpu_fp8_serving-2.txt) not ok"
grep -E '^not ok' $O/test_gpu_fp8_serving-2.txt | cut -c1-300 | head -20
export PYTHONPATH=$(pwd)/python FA4_LIBRARY=$(pwd)/build/.libs/libfa4.so
timeout 150 python3 python/tests/run.py -k fp8 --tap > $O/python-fp8-tests.txt 2>$O/python-fp8-tests-stderr.txt
echo "python fp8 tests rc=$?: $(grep -c '^ok' $O/python-fp8-tests.txt) ok, $(grep -c '^not ok' $O/python-fp8-tests.txt) not ok"
grep -E '^not ok' $O/python-fp8-tests.txt | cut -c1-300 | head; tail -3 $O/python-fp8-tests-stderr.txt
PYTHONUNBUFFERED=1 timeout 150 python3 bench/fp8_serving.py > $O/fp8-serving-py.txt 2>&1; echo "fp8_serving.py rc=$?"
grep -v Warning $O/fp8-serving-py.txt | tail -30
