#!/bin/bash
# GQA 32/8 causal 16k: exhaustive re-tune over the seed (55 s), exported
# as the next seed; the seed's config and the stored winner through
# plan_bench (separate processes alternating, three rounds); compare.py
# once with the exported seed.  Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seedt.db > /dev/null 2>&1; echo import=$?
FA4_DB=/tmp/t.db timeout 100 build/fa4-tune tune --batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8 --head-dim 128 --causal \
    --strategy exhaustive -j 16 --time-budget 55 --db /tmp/seedt.db > $O/gqa-tune2.txt 2>&1
echo "gqa tune rc=$?"; grep -E "search:|confirmed:|stored:|fastest" $O/gqa-tune2.txt | cut -c1-300
build/fa4-tune export --json $O/seed-gqa.json --db /tmp/seedt.db > /dev/null 2>&1; echo export=$?
OLD="sm90 bm=192 bn=64 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=1 pack_gqa=1 kv_split_warps=0 late_k=1"
NEW="sm90 bm=192 bn=80 stages=3 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=1 pack_gqa=1 kv_split_warps=0 late_k=1"
for r in 1 2 3; do for c in OLD NEW; do
  t=$(FA4_DB=/tmp/pb.db timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8 --head-dim 128 --causal --config "${!c}" 2>&1 | grep '^source' | tail -1)
  echo "r$r $c $(echo "$t" | grep -o 'ms=[0-9.]*')"
done; done | tee $O/gqa-ab.txt
export FA4_DB=/tmp/c.db
bash _peers/install.sh /tmp/peers-site > /dev/null 2>&1; echo peers=$?
export PYTHONPATH=/tmp/peers-site FA4_AOT_DIR=$(pwd)/_peers/fa4_sm90_aot PATH=/tmp/peers-site/bin:$PATH CUDA_HOME=/usr/local/cuda
build/fa4-tune import $O/seed-gqa.json --db /tmp/seedc.db > /dev/null 2>&1
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --lib build/.libs/libfa4.so --db /tmp/seedc.db \
    --dims 64,128,256 --gqa --reps 10 --json "$O/run3.json" > "$O/run3.txt" 2>&1
echo "run 3 rc=$?"; grep -A5 "^geomean" $O/run3.txt; grep "behind" $O/run3.txt | sort -u; grep "32/8" $O/run3.txt | head
