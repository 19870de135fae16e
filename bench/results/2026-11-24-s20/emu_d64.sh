#!/bin/bash
# exp2 on the FMA pipe at d64 on the max-free loop (the sixteenth
# session's "no gain" was on the max-first loop): the seed's d64 16k
# configs with exp2_emu 0/6/12/18/25, separate processes, two rounds.
# Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
NC="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=E rescale=8 pingpong=1 sched=plain splits=0 pack_gqa=0 kv_split_warps=0 late_k=1"
CA="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=E rescale=8 pingpong=1 sched=plain splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
for r in 1 2; do
  for e in 0 6 12 18 25; do
    x=$(FA4_DB=/tmp/e.db timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --config "${NC/E/$e}" 2>&1 | grep '^source' | tail -1)
    echo "r$r d64 non-causal emu=$e $(echo "$x" | grep -o 'ms=[0-9.]*')"
  done
  for e in 0 12 25; do
    x=$(FA4_DB=/tmp/e.db timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --causal --config "${CA/E/$e}" 2>&1 | grep '^source' | tail -1)
    echo "r$r d64 causal emu=$e $(echo "$x" | grep -o 'ms=[0-9.]*')"
  done
done | tee $O/emu_d64.txt
