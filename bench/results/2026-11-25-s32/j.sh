#!/bin/bash
# The rule extended to fp8 up to d128: the Python package's fp8 softcap
# tests (d128 now on the polynomial too) and this build's fp8 d128 cap 30.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
PYTHONPATH=$PWD/python FA4_LIBRARY=$PWD/_dev/.libs/libfa4.so timeout 150 python3 python/tests/run.py -k "fp8_softcap" \
    --tap python/tests/test_gpu.py > $O/py-fp8-softcap.txt 2>&1
echo "rc=$?"; grep -E "ok [0-9]+ -|passed|failed" $O/py-fp8-softcap.txt
echo "fp8 d128 16k cap30 (this build): $(_dev/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 --softcap 30 --heuristic --rounds 9 --reps 10 2>&1 | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/')"
