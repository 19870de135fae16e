#!/bin/bash
# Final library: the Python package's tests, and a third compare.py run of
# the re-tuned non-causal rows with the shipped seed as committed.
# Carries: _lite, _peers.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11c.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
PYTHONPATH=$(pwd)/python FA4_LIBRARY=$(pwd)/_lite/.libs/libfa4.so timeout 200 python3 python/tests/run.py --tap > $O/python-tests.txt 2> $O/python-tests-stderr.txt
echo "python rc=$?: $(grep -c '^ok' $O/python-tests.txt) ok, $(grep -c '^not ok' $O/python-tests.txt) not ok"
grep '^not ok' $O/python-tests.txt | head -5
_lite/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed3.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --lib _lite/.libs/libfa4.so --db /tmp/seed3.db \
    --dims "" --row 2:8192:16:128:0 --row 1:16384:16:128:0 --row 4:4096:32/8:128:0 --row 1:16384:32/8:128:0 \
    --row 1:16384:16:128:1 --no-fa2 --no-flashinfer --gemm 0 --reps 10 --json $O/compare3.json > $O/compare3.txt 2>&1
echo "compare 3 rc=$?"; grep -E '^(64|128) ' $O/compare3.txt | cut -c1-100
