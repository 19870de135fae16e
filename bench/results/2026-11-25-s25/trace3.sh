#!/bin/bash
# Timelines of the defaults (full config text, rescale=8): fp8 d128, bf16
# d128 (3 WGs), bf16 d64 (3 WGs, ping-pong), CTA 0's last tile; then ncu
# stall samples per SASS line for the fp8 default.
ln -sfn _dev build
export FA4_SYSTEM_DB=
out=${OUT:-/tmp}; mkdir -p $out/trace3
TB=_dev/bench/trace_bench   # plan_bench with trace_bench.patch, linked with -lcuda
KT=$PWD/_dev/ktrace/kernels
F8="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8 --rounds 5 --reps 10"
B16="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --rounds 5 --reps 10"
D64="--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --rounds 5 --reps 10"
CF="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
CB="sm90 bm=192 bn=80 stages=3 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=plain splits=0 pack_gqa=0 kv_split_warps=0 late_k=0"
CD="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=plain splits=0 pack_gqa=0 kv_split_warps=0 late_k=1"
for row in "f8|$F8|$CF" "b16|$B16|$CB" "d64|$D64|$CD"; do
  IFS='|' read -r name shape cfg <<< "$row"
  echo "== $name plain"; $TB $shape --config "$cfg" 2>&1 | grep '^source' | sed 's/config=.*//'
  echo "== $name trace"; FA4_KERNEL_DIR=$KT TRACE_OUT=$out/trace3/$name $TB $shape --config "$cfg" 2>&1 | grep '^source' | sed 's/config=.*//'
done
M="--section WarpStateStats --section SourceCounters --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio"
timeout 200 ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd $M -o /tmp/k1 \
  build/bench/plan_bench --rounds 1 --reps 2 $F8 --config "$CF" > /tmp/k1.log 2>&1
echo "ncu rc=$?"
ncu -i /tmp/k1.ncu-rep --page details --print-units base > $out/trace3/k1-details.txt 2>&1
ncu -i /tmp/k1.ncu-rep --page source --print-source sass --csv 2>/dev/null | gzip > $out/trace3/k1-sass.csv.gz
grep -E "Duration|stalled_(wait|selected|long|barrier|mio|dispatch|short|math|gmma|no_inst)" $out/trace3/k1-details.txt | head -12
