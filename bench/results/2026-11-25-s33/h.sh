#!/bin/bash
# Softcap 50 on the serving paths (bench/serving, FA4_SOFTCAP): each shape's
# default (no share: dense batches only) beside 25% and 50% of the tanh on
# the FMA pipe, in one process; the plain shape for the cost.  d128, 32/8
# heads, pages of 64 rows.
ln -sfn _dev build
export FA4_SYSTEM_DB=
T="stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=plain splits=1 late_k=1"
run() { f=$1; cfg=$2
  _dev/bench/serving "$f" | tail -n +2 | sed 's/^/plain  /' | head -1
  FA4_SOFTCAP=50 FA4_CONFIGS="$cfg tanh_poly=25;$cfg tanh_poly=50" _dev/bench/serving "$f" | tail -n +2 | sed 's/^/cap50  /'; }
for r in 1 2; do
  echo "== round $r"
  run "chunk b8 q512 32/8 kv8k page64" "sm90 bm=128 bn=128 fused_kv=0 pingpong=1 pack_gqa=1 $T"
  run "chunk varlen b8 q512 kv8k page64" "sm90 bm=128 bn=128 fused_kv=0 pingpong=1 pack_gqa=1 $T"
  run "prefill varlen b4 q4k 32/8 page64" "sm90 bm=128 bn=128 fused_kv=1 pingpong=0 pack_gqa=1 $T"
  run "prefill varlen b4 q4k 32/8 page64 nc" "sm90 bm=128 bn=128 fused_kv=0 pingpong=1 pack_gqa=0 $T"
done
