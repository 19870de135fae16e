#!/bin/bash
# With --no-cache (lib/jit.c) and binaries stored only once loaded
# (lib/plan.c): test_gpu_serving and test_gpu_fp8 at once (correctness
# only); the d64 512 config that a second process refused, planned in
# three processes; compare.py twice with the re-tuned seed.
# Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
for t in serving fp8; do
  ( FA4_DB=/tmp/t9-$t.db timeout 300 build/tests/test_gpu_$t > $O/$t.log 2>&1; echo "exit $?" >> $O/$t.log ) &
done
wait
for t in serving fp8; do
  echo "$t: $(grep -c '^ok' $O/$t.log) ok, $(grep -c '^not ok' $O/$t.log) not ok, $(tail -1 $O/$t.log) $(grep '^1\.\.' $O/$t.log)"; grep -A3 '^not ok' $O/$t.log | head -12
done
C="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
for r in 1 2 3; do timeout 60 build/bench/plan_bench --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --config "$C" 2>&1 | grep -o "^plan_bench.*\|ms=[0-9.]*"; done
export FA4_DB=/tmp/c9.db
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed9.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
for r in 6 7; do
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seed9.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run$r.json" > "$O/run$r.txt" 2>&1
echo "run $r rc=$?"; grep -A5 "^geomean" $O/run$r.txt; grep "behind" $O/run$r.txt; echo "heuristic rows: $(grep -c '(heuristic)' $O/run$r.txt)"
done
