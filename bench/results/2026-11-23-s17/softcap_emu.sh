#!/bin/bash
# Softcap (cap 30) under the constant max (_dev/knew): exp2 partly on the
# FMA pipe (exp2_emu) and late_k, configs alternating in one process per
# shape, two runs; d64 also on the running-max tree _dev/kold.
# Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_FAMILIES=sm90
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
R="swizzle=128 q_tiles=1 warps=0 cluster=1 rescale=8 fused_kv=0"
W2="wgs=2 regs=24/240 bm=128"; W3="wgs=3 regs=32/160 bm=192"
pb() { k=$1; shift; FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 120 build/bench/plan_bench --softcap 30 "$@" 2>&1 | grep "^source" | sed 's/ swizzle=128 q_tiles=1 warps=0 cluster=1 rescale=8//; s/ from=.*//'; }
S128="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
S64="--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64"
for r in 1 2; do
  echo "== r$r d128 nc knew"
  B="sm90 $W3 bn=80 stages=3 $R sched=plain splits=0"
  pb knew $S128 --config "$B pingpong=1 late_k=1 exp2_emu=0" --config "$B pingpong=1 late_k=1 exp2_emu=14" \
     --config "$B pingpong=1 late_k=1 exp2_emu=25" --config "$B pingpong=1 late_k=1 exp2_emu=40" \
     --config "$B pingpong=0 late_k=1 exp2_emu=25" --config "$B pingpong=1 late_k=0 exp2_emu=25" \
     --config "sm90 $W2 bn=176 stages=2 $R sched=plain splits=0 pingpong=1 late_k=1 exp2_emu=25"
  echo "== r$r d128 causal knew"
  B="sm90 $W3 bn=80 stages=3 $R sched=plain splits=1"
  pb knew $S128 --causal --config "$B pingpong=0 late_k=0 exp2_emu=0" --config "$B pingpong=1 late_k=1 exp2_emu=0" \
     --config "$B pingpong=1 late_k=1 exp2_emu=25" --config "$B pingpong=0 late_k=0 exp2_emu=25" \
     --config "sm90 $W2 bn=176 stages=2 $R sched=plain splits=1 pingpong=1 late_k=1 exp2_emu=0" \
     --config "sm90 $W2 bn=176 stages=2 $R sched=plain splits=1 pingpong=1 late_k=1 exp2_emu=25"
  B="sm90 $W3 bn=128 stages=2 $R pingpong=1 sched=plain splits=0"
  for k in knew kold; do
    echo "== r$r d64 nc $k"
    pb $k $S64 --config "$B late_k=1 exp2_emu=0" --config "$B late_k=1 exp2_emu=25" --config "$B late_k=1 exp2_emu=40" \
       --config "$B late_k=1 exp2_emu=50" --config "$B late_k=0 exp2_emu=0" --config "$B late_k=0 exp2_emu=40"
  done
done | tee $O/emu.txt
