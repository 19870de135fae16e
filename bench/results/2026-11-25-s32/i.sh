#!/bin/bash
# (1) The Python package's fp8 softcap/sinks tests with this library (two
# new d64 cases on the polynomial tanh); (2) fp8 d128 16k cap 30 at shares
# 0 / 50 (the g.sh binaries), to see whether fp8 d128 is MUFU-bound too.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
PYTHONPATH=$PWD/python FA4_LIBRARY=$PWD/_dev/.libs/libfa4.so timeout 200 python3 python/tests/run.py -k "softcap" \
    --tap python/tests/test_gpu.py > $O/py-softcap.txt 2>&1
echo "python softcap rc=$? $(grep -c '^ok' $O/py-softcap.txt) ok, $(grep -c '^not ok' $O/py-softcap.txt) not ok"
grep -A3 '^not ok' $O/py-softcap.txt | head -20; grep "d64" $O/py-softcap.txt
run() { b=$1; shift; _dev/bench/$b "$@" --heuristic --rounds 9 --reps 10 2>&1 \
        | grep '^source' | sed 's/.* ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1 [\2-\3]/'; }
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8"
for t in 0 50 0 50; do echo "fp8 d128 16k cap30 t$t: $(run plan_bench_t$t $S --softcap 30)"; done
