#!/bin/bash
# fp8 d128 causal under 8k: the default (128x192, two warpgroups) ran
# 0.92-0.95x bf16 at 2k (b8) and 1.08-1.13x at 4k.  Six other tiles in the
# same process (interleaved rounds), and bf16's seed row; two rounds.
ln -sfn _dev build
export FA4_SYSTEM_DB=
t="q_tiles=1 warps=0 cluster=1 exp2_emu=0 rescale=8 splits=1 pack_gqa=0 kv_split_warps=0"
cfgs=("bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 pingpong=1 sched=dynamic late_k=0"
      "bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 regs=24/240 pingpong=1 sched=dynamic late_k=1"
      "bm=128 bn=128 stages=2 swizzle=128 fused_kv=0 wgs=2 regs=24/240 pingpong=1 sched=plain late_k=0"
      "bm=192 bn=96 stages=4 swizzle=32 fused_kv=0 wgs=3 regs=32/160 pingpong=0 sched=plain late_k=0"
      "bm=128 bn=64 stages=4 swizzle=64 fused_kv=0 wgs=2 regs=24/240 pingpong=1 sched=dynamic late_k=0"
      "bm=192 bn=64 stages=4 swizzle=64 fused_kv=0 wgs=3 regs=32/160 pingpong=0 sched=plain late_k=0")
args=(--heuristic); for c in "${cfgs[@]}"; do args+=(--config "sm90 $c $t"); done
for r in 1 2; do
  for shape in "8 2048" "4 4096" "16 1024"; do set -- $shape
    _dev/bench/plan_bench --rounds 9 --reps 10 --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --dtype fp8 "${args[@]}" > /tmp/pb.txt 2>&1
    echo "r$r fp8 c b$1 s$2:"; grep '^source' /tmp/pb.txt | sed 's/source=\(.*\) ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/  \2 [\3-\4] \1/' | cut -c1-150
    grep 'skipped\|plan_bench:' /tmp/pb.txt | head -3
    _dev/bench/plan_bench --rounds 9 --reps 10 --batch $1 --seqlen-q $2 --heads-q 16 --head-dim 128 --causal --db _dev/rh.db > /tmp/pb.txt 2>&1
    echo "r$r bf16 c b$1 s$2: $(grep '^source' /tmp/pb.txt | sed 's/source=\([^ ]*\) ms=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\).*/\2 [\3-\4]/')"
  done
done
