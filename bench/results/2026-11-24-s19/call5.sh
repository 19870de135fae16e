#!/bin/bash
# (1) compare.py's d64 non-causal 512 row: plan it with the re-tuned seed in
# a plain process and in one that imported torch first (diag512.py); time
# the seed's config and the heuristic's fallback with plan_bench.  (2) fp8
# d128 16k at these kernels: late_k on the max-free loop, and a coarse tune.
# Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/c5.db FA4_SYSTEM_DB=
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seed5.db > /dev/null 2>&1; echo import=$?
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site
python3 bench/results/2026-11-24-s19/diag512.py plain build/.libs/libfa4.so /tmp/seed5.db 2>&1 | tail -8
python3 bench/results/2026-11-24-s19/diag512.py torch build/.libs/libfa4.so /tmp/seed5.db 2>&1 | tail -8
C="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
for r in 1 2; do for bn in 128 64; do
  t=$(timeout 60 build/bench/plan_bench --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --config "${C/bn=128/bn=$bn}" 2>&1 | grep '^source' | tail -1)
  echo "r$r d64 512 b32 bn=$bn $(echo "$t" | grep -o 'ms=[0-9.]*')"
done; done
F8="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=0 pack_gqa=0 kv_split_warps=0"
for r in 1 2; do for lk in 0 1; do
  t=$(timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 --config "$F8 late_k=$lk" 2>&1 | grep '^source' | tail -1)
  echo "r$r fp8 late_k=$lk $(echo "$t" | grep -o 'ms=[0-9.]*')"
done; done
timeout 150 build/fa4-tune tune --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 \
   --strategy coarse -j 16 --time-budget 60 --db /tmp/fp8tune.db > $O/fp8tune.txt 2>&1; echo "fp8 tune rc=$?"
grep -E "^== |stored:|confirmed:" $O/fp8tune.txt | cut -c1-300
sed -n "/rank  median/,/search:/p" $O/fp8tune.txt | head -12 | cut -c1-260
