#!/bin/bash
# The ten seed rows whose machine code FA4_WG_RANGES changed, re-tuned
# (coarse) over the seed rehashed to these sources; the database exported
# as the new seed; then compare.py twice on it (back to back, one process,
# peers interleaved).  Carries: _dev as build, _dev/rh.db, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
T0=$(date +%s)
cp _dev/rh.db /tmp/tune.db
timeout 270 build/fa4-tune tune --problems bench/results/2026-11-24-s21/changed.json --strategy coarse -j 16 \
    --db /tmp/tune.db > $O/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - T0 )) s"; grep -E "^==|search:|confirmed|stored" $O/tune.txt | cut -c1-230
build/fa4-tune export --json $O/seed.json --db /tmp/tune.db > /dev/null 2>&1; echo "export rc=$?"
export FA4_DB=/tmp/c.db
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 1 2; do
PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/tune.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$? $(( $(date +%s) - T0 )) s"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt; echo "heuristic rows: $(grep -c '(heuristic)' $O/run$r.txt)"
done
