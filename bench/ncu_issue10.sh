#!/bin/sh
# bench/ncu_issue10.sh -- hardware counters behind issue 10's two
# discrepancies, one kernel launch each under ncu (clocks left alone):
#   1. d256 b16 777 16 heads bf16: return_lse 0 vs 1, the same config;
#   2. fp16 b1 6000 64/1 d64 causal: the heuristic against the old
#      tuner's dynamic-scheduler winner.
#
#   bench/ncu_issue10.sh [BUILD_DIR] [OUT_DIR]
B=${1:-build}
OUT=${2:-ncu-issue10}
PB="$B/bench/plan_bench"
mkdir -p "$OUT"
NCU="ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4
     --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
     --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats"
run() {   # NAME plan_bench-args...
    name=$1; shift
    # shellcheck disable=SC2086
    $NCU "$PB" --rounds 1 --reps 2 "$@" > "$OUT/$name.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|DRAM Throughput|Registers Per|Achieved Occupancy|Issued Warp|No Eligible|Stall" "$OUT/$name.txt" | sed "s/^/$name: /" | head -20
}
D256="--batch 16 --seqlen-q 777 --heads-q 16 --head-dim 256"
C256="sm90 bm=128 bn=80 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 rescale=8"
run lse0 $D256 --config "$C256"
run lse1 $D256 --return-lse --config "$C256"
MQA="--dtype fp16 --batch 1 --seqlen-q 6000 --heads-q 64 --heads-kv 1 --head-dim 64 --causal"
run mqa-heuristic $MQA --heuristic
run mqa-dynamic $MQA --config "sm90 bm=192 bn=128 stages=4 swizzle=128 fused_kv=1 wgs=3 regs=32/160 sched=dynamic"
