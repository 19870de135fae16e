#!/bin/bash
# compare.py over the whole grid (+ GQA rows) at this session's final library with the
# shipped seed (six rows re-tuned with the tail split, the rest tuned at earlier
# kernels: used as stale rows), FA4-CuTe and FlashInfer from _peers; run $1.
# Carries: _lite, _peers.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s11d.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
_lite/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
PYTHONUNBUFFERED=1 timeout 400 python3 bench/compare.py --lib _lite/.libs/libfa4.so --db /tmp/seed.db \
    --gqa --reps 10 --json "$O/run$1.json" > "$O/run$1.txt" 2>&1
echo "run $1 rc=$?"; grep -A4 "^geomean" $O/run$1.txt; grep "behind" $O/run$1.txt
