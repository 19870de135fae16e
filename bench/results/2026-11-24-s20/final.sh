#!/bin/bash
# The committed tree and seed: test_gpu_fp8 and test_gpu_fp8_serving at
# once (the softmax helpers are shared by the fp8 kernels), then
# compare.py once more (the second run with the re-tuned GQA row).
# Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for t in fp8 fp8_serving; do
  ( FA4_DB=/tmp/f-$t.db timeout 280 build/tests/test_gpu_$t > $O/$t.log 2>&1; echo "exit $?" >> $O/$t.log ) &
done
wait
for t in fp8 fp8_serving; do
  echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -12
done
export FA4_DB=/tmp/c.db
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seedf.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seedf.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run4.json" > "$O/run4.txt" 2>&1
echo "run 4 rc=$?"; grep -A5 "^geomean" $O/run4.txt; grep "behind" $O/run4.txt | sort -u; grep "32/8" $O/run4.txt | head
