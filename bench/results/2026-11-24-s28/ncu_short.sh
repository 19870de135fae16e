#!/bin/bash
# Where do the short rows' cycles go?  At 512 keys a d128 tile of 128 rows
# takes about 3,700 cycles a key block against about 2,300 at 16k.  One
# launch each under ncu (clocks left alone), the shipped seed's configs:
# L2 throughput (128-row tiles read K/V from L2 at about 6-7 TB/s when the
# tensor cores run flat out), tensor pipe, issue.  Carries: _dev as build.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O/ncu; export FA4_SYSTEM_DB=
NCU="ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct"
run() { name=$1; shift; timeout 100 $NCU build/bench/plan_bench --rounds 1 --reps 2 --db _dev/rh.db "$@" > /tmp/$name.txt 2>&1
  grep -E "Duration|SM Frequency|L2 Cache Throughput|DRAM Throughput|hmma|lts__t_bytes|issue_active|hit_rate|L2 Hit" /tmp/$name.txt | sed "s/^/$name: /" | head -12; cp /tmp/$name.txt $O/ncu/ 2>/dev/null; }
run d128-512 --batch 32 --seqlen-q 512 --heads-q 16 --head-dim 128
run d128-2k --batch 8 --seqlen-q 2048 --heads-q 16 --head-dim 128
run d128-16k --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128
run d64-512 --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64
run d128c-512 --batch 32 --seqlen-q 512 --heads-q 16 --head-dim 128 --causal
run d256c-512 --batch 32 --seqlen-q 512 --heads-q 8 --head-dim 256 --causal
