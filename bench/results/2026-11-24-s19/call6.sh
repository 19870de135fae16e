#!/bin/bash
# plan_bench's message for the d64 512 config that failed there (call5.sh),
# and the fp8 d128 16k tuned winner against the default through the public
# API (plan_bench, separate processes alternating, two rounds).  Carries: _dev.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_DB=/tmp/c6.db FA4_SYSTEM_DB=
C="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
timeout 60 build/bench/plan_bench --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --config "$C" 2>&1 | tail -5
timeout 60 build/bench/plan_bench --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --config "${C/fused_kv=0/fused_kv=1}" 2>&1 | tail -2
timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 512 --heads-q 32 --head-dim 64 --config "$C" 2>&1 | tail -2
FW="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
for r in 1 2; do
  for src in heuristic "$FW" "${FW/pingpong=0/pingpong=1}"; do
    if [ "$src" = heuristic ]; then a=(--heuristic); else a=(--config "$src"); fi
    t=$(timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 "${a[@]}" 2>&1 | grep '^source' | tail -1)
    echo "r$r fp8 $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o 'fused_kv=[01].*pingpong=[01] sched=[a-z]*' | sed 's/q_tiles.*exp2/exp2/')"
  done
  t=$(timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --heuristic 2>&1 | grep '^source' | tail -1)
  echo "r$r bf16 default $(echo "$t" | grep -o 'ms=[0-9.]*')"
done
