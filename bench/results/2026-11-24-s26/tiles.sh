#!/bin/bash
# Tile-boundary timelines (CTA 0's consumer warps, per tile: Q wait, first
# block, loop, epilogue, next-tile wait) for the seed's short rows, with the
# kernel tree _dev/ktile (tile marks); then fp8 against bf16 at 16k (each
# default, processes alternating, 3 rounds) and bench/serving --fp8.
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/tiles
TB=_dev/bench/trace_bench
KT=$PWD/_dev/ktile/kernels
R="sm90 q_tiles=1 warps=0 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pack_gqa=0 kv_split_warps=0"
rows=(
"d128nc|--batch 32 --seqlen-q 512 --heads-q 16 --head-dim 128|bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 pingpong=1 sched=persistent splits=1 late_k=1"
"d64c|--batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --causal|bm=128 bn=128 stages=3 swizzle=128 fused_kv=1 wgs=2 pingpong=1 sched=dynamic splits=1 late_k=1"
"d128c|--batch 32 --seqlen-q 512 --heads-q 16 --head-dim 128 --causal|bm=128 bn=128 stages=2 swizzle=128 fused_kv=0 wgs=2 pingpong=1 sched=dynamic splits=1 late_k=1"
"d256nc|--batch 32 --seqlen-q 512 --heads-q 8 --head-dim 256|bm=128 bn=64 stages=3 swizzle=128 fused_kv=1 wgs=2 pingpong=1 sched=plain splits=0 late_k=1"
"d128nc2k|--batch 8 --seqlen-q 2048 --heads-q 16 --head-dim 128|bm=128 bn=128 stages=2 swizzle=128 fused_kv=1 wgs=2 pingpong=1 sched=persistent splits=1 late_k=1"
)
for row in "${rows[@]}"; do
  IFS='|' read -r name shape cfg <<< "$row"
  cfg="$R $cfg"
  echo "== $name"
  $TB $shape --rounds 5 --reps 10 --config "$cfg" 2>&1 | grep '^source' | sed 's/config=.*//'
  FA4_KERNEL_DIR=$KT TRACE_OUT=$out/tiles/$name $TB $shape --rounds 5 --reps 10 --config "$cfg" 2>&1 | grep '^source' | sed 's/config=.*//'
done > $out/tiles/times.txt 2>&1
PB=_dev/bench/plan_bench
for r in 1 2 3; do
  for c in "" "--causal"; do
    for dt in "--dtype fp8" ""; do
      echo "== round $r $c $dt"
      $PB --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 $c $dt --rounds 7 --reps 10 --heuristic 2>&1 | grep '^source' | sed 's/config=.*//'
    done
  done
done > $out/fp8_ratio.txt 2>&1
timeout 200 _dev/bench/serving --fp8 > $out/serving_fp8.txt 2>&1; echo "serving rc=$?" >> $out/serving_fp8.txt
