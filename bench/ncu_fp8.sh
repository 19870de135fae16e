#!/bin/sh
# bench/ncu_fp8.sh -- where fp8 d128 spends its time next to bf16: one
# launch each under ncu (clocks left alone), d128 16k tokens non-causal,
# pipe utilisation (tensor, FMA, XU = MUFU), issue activity and stall
# reasons.
#
#   bench/ncu_fp8.sh [BUILD_DIR] [OUT_DIR]
B=${1:-build}
OUT=${2:-ncu-fp8}
PB="$B/bench/plan_bench"
mkdir -p "$OUT"
NCU="ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd
     --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
     --section WarpStateStats --section SchedulerStats --section LaunchStats
     --metrics sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active"
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
run() {   # NAME plan_bench-args...
    name=$1; shift
    # shellcheck disable=SC2086
    $NCU "$PB" --rounds 1 --reps 2 $S "$@" > "$OUT/$name.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|pipe_|issue_active|Issue Slots Busy|Executed Ipc Active|No Eligible|Registers Per|Stall" "$OUT/$name.txt" | sed "s/^/$name: /" | head -24
}
run bf16 --heuristic
run fp8 --dtype fp8 --heuristic
run fp8-bn128-sw128 --dtype fp8 --config "sm90 bm=128 bn=128 stages=2 swizzle=128 wgs=2 regs=24/240 pingpong=1 rescale=8"
