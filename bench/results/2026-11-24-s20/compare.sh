#!/bin/bash
# This session's tree and seed: GQA 32/8 causal 16k re-tuned again over
# the seed (exhaustive, 55 s) with the tuner that keeps a winning config
# in use; then compare.py twice (back to back, one process, peers
# interleaved).  Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seedc.db > /dev/null 2>&1; echo import=$?
cp /tmp/seedc.db /tmp/seedt.db
FA4_DB=/tmp/t.db timeout 100 build/fa4-tune tune --batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8 --head-dim 128 --causal \
    --strategy exhaustive -j 16 --time-budget 55 --db /tmp/seedt.db > $O/gqa-tune.txt 2>&1
echo "gqa tune rc=$?"; grep -E "search:|confirmed:|stored:|fastest|repeat" $O/gqa-tune.txt | cut -c1-260
export FA4_DB=/tmp/c.db
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 1 2; do
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seedc.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt; echo "heuristic rows: $(grep -c '(heuristic)' $O/run$r.txt)"
done
