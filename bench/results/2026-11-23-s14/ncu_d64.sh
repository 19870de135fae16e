#!/bin/bash
# d64 non-causal 16k under ncu, one launch each, clocks left alone: the seed's
# config with the loop as landed, and with late_k=1 plus P packed before the
# rescale's branch (_kexp: early-pack.patch), whose SASS has FA4-CuTe's shape
# (about 13 exponentials before the P V wait, packs among the exponentials).
# Stall reasons per issued instruction, pipe use, per-line samples.
# Carries: _dev as build, _kexp.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/ncu.db
M="--section WarpStateStats --section SourceCounters --section SpeedOfLight --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
D64="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=0"
prof() { # name tree config
    FA4_KERNEL_DIR=$(pwd)/$2 ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd $M -o $O/$1 \
        build/bench/plan_bench --rounds 1 --reps 2 --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 \
        --config "$3" > $O/$1.log 2>&1
    echo "$1 rc=$?"
    ncu -i $O/$1.ncu-rep --page details --print-units base > $O/$1-details.txt 2>&1
    ncu -i $O/$1.ncu-rep --page source --print-source sass --csv 2>/dev/null | gzip > $O/$1-sass.csv.gz
    rm -f $O/$1.ncu-rep
    grep -E "Duration|SM Frequency|stalled_.*ratio|pipe_xu|issue_active|tensor_op" $O/$1-details.txt | sort -u | head -40
}
prof base kernels "$D64"
prof early _kexp/kernels "$D64 late_k=1"
