#!/bin/bash
# fp8 d128 non-causal 16k: where a consumer warp waits (ncu warp-stall
# samples per SASS line, one launch, clocks left alone) for the heuristic
# config (ping-pong, late_k 0) and its late_k twin; then plan_bench of the
# nearby configs, two rounds.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/x.db
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --dtype fp8"
B="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 sched=plain splits=0 pack_gqa=0"
M="--section WarpStateStats --section SourceCounters --section SpeedOfLight --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
n=0
for v in "pingpong=1 late_k=0" "pingpong=1 late_k=1" "pingpong=0 late_k=0"; do
  n=$((n+1))
  timeout 150 ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd $M -o /tmp/k$n \
    build/bench/plan_bench --rounds 1 --reps 2 $S --config "$B $v" > /tmp/k$n.log 2>&1
  echo "== $v rc=$?"
  ncu -i /tmp/k$n.ncu-rep --page details --print-units base > $O/k$n-details.txt 2>&1
  ncu -i /tmp/k$n.ncu-rep --page source --print-source sass --csv 2>/dev/null | gzip > $O/k$n-sass.csv.gz
  grep -E "Duration|SM Frequency|Tensor|issue_active|pipe_xu" $O/k$n-details.txt | head -8
  grep -E "stalled_.*ratio" $O/k$n-details.txt | sort -k3 -g -r | head -8
done
for r in 1 2; do
  for v in "pingpong=1 late_k=0" "pingpong=1 late_k=1" "pingpong=0 late_k=0" "pingpong=0 late_k=1"; do
    t=$(timeout 60 build/bench/plan_bench $S --config "$B $v" 2>&1 | grep '^source' | tail -1 | sed 's/config=.*//')
    echo "r$r $v $t"
  done
done
