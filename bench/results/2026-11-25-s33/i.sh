#!/bin/bash
# h.sh's serving gains across processes: the default alone (no share) in
# one process, the default beside 25% in the next, alternating, two
# rounds, cap 50.
ln -sfn _dev build
export FA4_SYSTEM_DB=
T="stages=2 swizzle=128 wgs=2 regs=24/240 rescale=8 sched=plain splits=1 late_k=1"
for r in 1 2; do
  for f in "chunk b8 q512 32/8 kv8k page64|sm90 bm=128 bn=128 fused_kv=0 pingpong=1 pack_gqa=1 $T" \
           "chunk varlen b8 q512 kv8k page64|sm90 bm=128 bn=128 fused_kv=0 pingpong=1 pack_gqa=1 $T" \
           "prefill varlen b4 q4k 32/8 page64 nc|sm90 bm=128 bn=128 fused_kv=0 pingpong=1 pack_gqa=0 $T"; do
    s=${f%%|*}; c=${f#*|}
    FA4_SOFTCAP=50 _dev/bench/serving "$s" | tail -n +2 | sed "s/^/r$r alone   /" | cut -c1-70
    FA4_SOFTCAP=50 FA4_CONFIGS="$c tanh_poly=25" _dev/bench/serving "$s" | tail -n +2 | sed "s/^/r$r with25  /" | cut -c1-70
  done
done
