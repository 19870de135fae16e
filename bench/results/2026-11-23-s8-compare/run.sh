#!/bin/bash
# compare.py over the grid (+ GQA rows) with the re-tuned shipped seed, FA4-CuTe and
# FlashInfer from _peers (a copy of ../shared/peers), N runs back to back.
# Carries: _lite (build without tests), _peers.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s8.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
_lite/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site${PYTHONPATH:+:$PYTHONPATH} FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot
export PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for i in $(seq ${RUNS:-2}); do
    PYTHONUNBUFFERED=1 timeout ${LIMIT:-270} python3 bench/compare.py --lib _lite/.libs/libfa4.so --db /tmp/seed.db \
        --gqa --reps 10 --json "$O/run$i.json" > "$O/run$i.log" 2>&1
    echo "run $i rc=$?"; grep -A4 "^geomean" "$O/run$i.log"; grep -E "^peer" $O/run$i.log
done
grep -E "^128 .*16384" $O/run1.log | cut -c1-130
