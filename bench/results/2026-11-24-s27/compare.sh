#!/bin/bash
# compare.py at the committed seed (d256 up to 2k keys under the persistent
# schedulers, the six rows re-tuned: d256tune.sh), back to back, one process.
# Carries: _dev as build, _dev/rh.db (the seed imported), _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
cp _dev/rh.db /tmp/tune.db
export FA4_DB=/tmp/c.db
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 1 2; do
PYTHONUNBUFFERED=1 timeout 170 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/tune.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$? $(( $(date +%s) - T0 )) s"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt; echo "heuristic rows: $(grep -c '(heuristic)' $O/run$r.txt)"
done
echo "total $(( $(date +%s) - T0 )) s"
