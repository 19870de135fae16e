#!/bin/bash
# fp8 d128 causal 16k runs at 1.015-1.04 ms or at 1.11-1.12 ms from one
# process to the next.  Six processes, each timing the default and a
# 2-warpgroup grouped tile (128x192) interleaved, per-round times kept
# (--trace 1); bf16's seed row between them.
ln -sfn _dev build
export FA4_SYSTEM_DB=
t="q_tiles=1 warps=0 cluster=1 exp2_emu=0 rescale=8 splits=1 pack_gqa=0 kv_split_warps=0 late_k=0 sched=plain"
for r in 1 2 3 4 5 6; do
  _dev/bench/plan_bench --rounds 9 --reps 10 --trace 1 --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal --dtype fp8 \
     --heuristic --config "sm90 bm=128 bn=192 stages=3 swizzle=64 fused_kv=0 wgs=2 regs=24/240 pingpong=0 $t" > /tmp/pb.txt 2>&1
  echo "r$r fp8: $(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1=\2 [\3-\4]/' | tr '\n' ' ')"
  grep '^# round' /tmp/pb.txt | awk '{printf "%s:%s ", $5, $7} END{print ""}'
  _dev/bench/plan_bench --rounds 9 --reps 10 --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal --db _dev/rh.db > /tmp/pb.txt 2>&1
  echo "r$r bf16: $(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\1=\2 [\3-\4]/')"
done
