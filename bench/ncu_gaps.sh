#!/bin/bash
# bench/ncu_gaps.sh -- libfa4 against FA4-CuTe under ncu on the shapes where
# FA4-CuTe leads (d64 non-causal 16k, d128 causal 16k, GQA 32/8 causal 16k):
# instructions executed per pipe, issue activity, tensor-pipe use and stall
# reasons of one launch each (clocks left alone).
#
#   bench/ncu_gaps.sh LIBDIR OUT_DIR      (LIBDIR holds .libs/ and bench/plan_bench;
#                                          FA4_AOT_DIR names the FA4-CuTe kernels)
L=$1
OUT=$2
mkdir -p "$OUT"
SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
     --section WarpStateStats --section SchedulerStats --section LaunchStats"
METRICS="--metrics smsp__inst_executed.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_xu.sum,sm__inst_executed_pipe_uniform.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_fmaheavy.sum,sm__inst_executed_pipe_fmalite.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
lib() {   # NAME CONFIG plan_bench-shape...
    name=$1; cfg=$2; shift 2
    # shellcheck disable=SC2086
    ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd $SECTIONS $METRICS \
        "$L/bench/plan_bench" --rounds 1 --reps 2 "$@" --config "$cfg" > "$OUT/lib-$name.txt" 2>&1
    echo "lib-$name rc=$?"
}
peer() {  # NAME B S HQ HKV D CAUSAL
    name=$1; shift
    # shellcheck disable=SC2086
    ncu --clock-control none --profile-from-start off $SECTIONS $METRICS \
        python3 bench/ncu_peer.py "$@" > "$OUT/peer-$name.txt" 2>&1
    echo "peer-$name rc=$?"
}
D64="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 wgs=3 regs=32/160 rescale=8 pingpong=1 sched=plain splits=1"
C128="sm90 bm=128 bn=176 stages=2 swizzle=128 fused_kv=0 wgs=2 regs=24/240 rescale=8 pingpong=1 sched=plain splits=1"
lib d64-nc "$D64" --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64
peer d64-nc 1 16384 32 32 64 0
lib d128-c "$C128" --batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal
peer d128-c 1 16384 16 16 128 1
lib gqa-c "$C128" --batch 1 --seqlen-q 16384 --heads-q 32 --heads-kv 8 --head-dim 128 --causal
peer gqa-c 1 16384 32 8 128 1
for f in "$OUT"/*.txt; do
    echo "== $f"
    grep -E "^  [a-zA-Z_ ]*fwd|^  kernel|Duration|smsp__inst_executed.sum|pipe_[a-z]*\.sum|issue_active|Issue Slots Busy|No Eligible|Registers Per|Block Size|Grid Size|Tensor|pipe_fma_cycles|xu.avg|Warp Cycles Per Issued|Active Warps Per" "$f" | head -40
done
