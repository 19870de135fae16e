#!/bin/bash
# compare.py over the d64/d128 grid and the GQA rows, twice in one call, with
# the re-tuned seed (late_k in the space); FA4-CuTe, FlashInfer from _peers.
# Carries: _lite, _peers.  Writes $OUT/run{1,2}.{txt,json}.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s13.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
_lite/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 1 2; do
PYTHONUNBUFFERED=1 timeout ${LIM:-260} python3 bench/compare.py --lib _lite/.libs/libfa4.so --db /tmp/seed.db \
    --dims 64,128 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$?"; grep -A4 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt
done
