#!/bin/bash
# Why the one-loop tiles (FA4_XTILE) measured 4-11% slower: the previous
# loop (off), the new loop that never fuses a boundary (nofuse), the fused
# boundary (on), and the fused boundary with the P V wait pinned behind the
# next tile's first exponentials (pin: ptxas hoisted it above them).
# plan_bench, processes alternating, two rounds.
ln -sfn _dev build
export FA4_SYSTEM_DB=
d64="sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=1"
d64d="sm90 bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=dynamic splits=1 pack_gqa=0 kv_split_warps=0 late_k=1"
for r in 1 2; do for mode in off nofuse2 off3 nofuse; do
  unset FA4_XTILE_OFF FA4_XTILE_NOFUSE FA4_XTILE_PIN
  case $mode in off) export FA4_XTILE_OFF=1;; nofuse) export FA4_XTILE_NOFUSE=1;; nofuse2) export FA4_XTILE_NOFUSE=2;; off3) export FA4_XTILE_OFF=1;; pin) export FA4_XTILE_PIN=1;; esac
  line="r$r $mode:"
  for shape in "32 512 16 128" "16 1024 16 128" "8 2048 16 128" "32 512 32 64"; do
    set -- $shape
    if [ $4 = 64 ]; then src=(--config "$d64" --config "$d64d"); else src=(--db _dev/rh.db); fi
    _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 --rounds 9 --reps 10 "${src[@]}" > /tmp/pb.txt 2>&1
    line="$line | d$4 $2 $(grep '^source' /tmp/pb.txt | sed 's/.*ms=\([0-9.]*\).*/\1/' | tr '\n' ' ')"
  done
  echo "$line"
done; done
