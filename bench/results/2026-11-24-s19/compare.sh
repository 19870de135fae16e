#!/bin/bash
# compare.py over the d64/d128/d256 grid and the GQA rows, twice in one
# call, with the seed re-tuned at these kernels (tune.sh); SM clock sampled
# per library group.  Carries: _dev as build, _peers.  Writes
# $OUT/run{2,3}.{txt,json} (run 1: call2.sh, the stale seed).
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s19c.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed2.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 2 3; do
PYTHONUNBUFFERED=1 timeout 280 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seed2.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt
done
