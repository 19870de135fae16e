#!/bin/bash
# device run 5: compare.py over the grid with the shipped seed (sm90 v6 kernels), FA4-CuTe from _peers
O=$OUT; export FA4_DB=/tmp/s7.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site${PYTHONPATH:+:$PYTHONPATH} FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot
PYTHONUNBUFFERED=1 timeout 500 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seed.db --gqa --reps 10 \
   --json "$O/compare.json" > "$O/compare.log" 2>&1; echo rc=$?; grep -A6 "^geomean" "$O/compare.log"; grep -E "^peer|MISSING" $O/compare.log | head
