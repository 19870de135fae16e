#!/bin/bash
# Decode v2 with speculative steps (few-row packed tiles take 128-key blocks
# where the tiles fit one wave): the serving tests, then serving_compare.py
# --only decode.  Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
T0=$(date +%s)
( FA4_DB=/tmp/sv.db timeout 330 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log ) &
( FA4_DB=/tmp/f8.db timeout 330 build/tests/test_gpu_fp8_serving > $O/fp8_serving.log 2>&1; echo "exit $?" >> $O/fp8_serving.log ) &
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
wait
for t in serving fp8_serving; do echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -8; done
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 1 2; do
FA4_DB=/tmp/c.db PYTHONUNBUFFERED=1 timeout 100 python3 bench/serving_compare.py --lib build/.libs/libfa4.so --only decode > $O/compare-r$r.txt 2>&1; echo "compare r$r rc=$?"
cut -c1-130 $O/compare-r$r.txt | tail -11
done
echo "total $(( $(date +%s) - T0 )) s"
