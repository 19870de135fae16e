#!/bin/bash
# How long fp8's V^T copy takes beside the attention kernel (ncu, clocks
# left alone): fp8 d128 causal 16 x 1k and 8 x 2k, d64 non-causal 8 x 2k,
# d128 non-causal 1 x 16k; one launch of each kernel after warm-up.
ln -sfn _dev build
export FA4_SYSTEM_DB=
for row in "16 1024 16 128 1" "8 2048 16 128 1" "8 2048 32 64 0" "1 16384 16 128 0"; do set -- $row
  c=; [ $5 = 1 ] && c=--causal
  echo "== fp8 b$1 s$2 h$3 d$4 causal=$5"
  timeout 120 ncu --clock-control none --launch-skip 6 --launch-count 2 -k regex:fa4_ \
      --metrics gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
      _dev/bench/plan_bench --batch $1 --seqlen-q $2 --heads-q $3 --head-dim $4 $c --dtype fp8 --heuristic \
      --rounds 1 --reps 2 2>&1 | grep -E '^  fa4_|gpu__time|dram__|sm__thr|grid_size|==PROF==|ERR' | head -24
done
