#!/bin/bash
# The d64 back-to-back question: compare.py's d64 rows with one call per
# event pair (REPS=1) against the usual 10, and plan_bench on d64 non-causal
# 16k at reps 1 and 10, alternating; then a third full compare run.
# Carries: _dev as build, _peers.  Writes $OUT/{reps1,run3}.{txt,json}, pb.txt.
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/s15.db FA4_SYSTEM_DB=
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
cp=(python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seed.db)
PYTHONUNBUFFERED=1 timeout 150 "${cp[@]}" --dims 64 --seqlens 4096,8192,16384 --reps 1 --json $O/reps1.json > $O/reps1.txt 2>&1
PYTHONUNBUFFERED=1 timeout 150 "${cp[@]}" --dims 64 --seqlens 4096,8192,16384 --reps 10 --json $O/reps10.json > $O/reps10.txt 2>&1
for r in 1 2; do for reps in 1 10; do
  echo "r$r reps=$reps $(build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --db /tmp/seed.db --reps $reps --rounds 10 2>&1 | tail -1 | sed 's/config=.*//')"
done; done | tee $O/pb.txt
PYTHONUNBUFFERED=1 timeout 200 "${cp[@]}" --dims 64,128,256 --gqa --json $O/run3.json > $O/run3.txt 2>&1
grep -A5 "^geomean" $O/reps1.txt $O/reps10.txt $O/run3.txt; grep -E "^64 " $O/reps1.txt $O/reps10.txt | cut -c1-120
