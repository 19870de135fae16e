#!/bin/bash
# fp8 on finite inputs (plan_bench with the N(0,1) fill): the default
# against its ping-pong / late_k / bn128 neighbours, and fp8 against bf16
# (each problem's default) in alternating processes, three rounds.
ln -sfn _dev build
export FA4_SYSTEM_DB= FA4_DB=/tmp/f8cfg.db
PB=_dev/bench/plan_bench_new
S16="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
B="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0"
# compile once
for v in "pingpong=0 late_k=0" "pingpong=1 late_k=0" "pingpong=0 late_k=1" "pingpong=1 late_k=1"; do
  $PB $S16 --dtype fp8 --rounds 1 --reps 1 --config "$B $v" > /dev/null 2>&1 &
done
$PB $S16 --dtype fp8 --rounds 1 --reps 1 --heuristic > /dev/null 2>&1 &
$PB $S16 --dtype fp8 --causal --rounds 1 --reps 1 --heuristic > /dev/null 2>&1 &
$PB $S16 --rounds 1 --reps 1 --heuristic > /dev/null 2>&1 &
$PB $S16 --causal --rounds 1 --reps 1 --heuristic > /dev/null 2>&1 &
wait
echo "== configs, fp8 d128 16k (one process, 4 sources alternating)"
for r in 1 2; do
  $PB $S16 --dtype fp8 --rounds 9 --config "$B pingpong=0 late_k=0" --config "$B pingpong=1 late_k=0" \
      --config "$B pingpong=0 late_k=1" --config "$B pingpong=1 late_k=1" 2>&1 | grep '^source' | sed 's/ from=.*//; s/source=sm90.*kv_split_warps=0 /cfg /'
done
echo "== fp8 vs bf16, defaults"
for r in 1 2 3; do
  for row in "fp8|--dtype fp8" "bf16|" "fp8 causal|--dtype fp8 --causal" "bf16 causal|--causal"; do
    IFS='|' read -r name opt <<< "$row"
    echo "r$r $name $($PB $S16 $opt --rounds 7 --heuristic 2>&1 | grep '^source' | sed 's/ from=.*//')"
  done
done
