#!/bin/bash
# compare.py over the d64/d128/d256 grid and the GQA rows, twice in one call,
# with the seed re-tuned at these kernels; SM clock sampled per library group.
# Carries: _dev as build, _peers.  Writes $OUT/run{1,2}.{txt,json}.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s15.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 1 2; do
PYTHONUNBUFFERED=1 timeout ${LIM:-280} python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seed.db \
    --dims ${DIMS:-64,128,256} --gqa --reps ${REPS:-10} --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt
done
