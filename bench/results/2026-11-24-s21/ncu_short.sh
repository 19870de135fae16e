#!/bin/bash
# cuDNN's kernels against libfa4's on the short rows cuDNN leads (batch 32 x 512:
# d64 causal, d256 causal, d128 non-causal): launch shape, occupancy, tensor pipe,
# stalls; one launch each, clocks left alone.  Carries: _dev as build, _peers.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
build/fa4-tune import db/seed/h100-sxm.json --db /tmp/seedc.db > /dev/null 2>&1; echo import=$?
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats"
M="--metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active"
lib() { name=$1; shift
  ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd $S $M \
    build/bench/plan_bench --rounds 1 --reps 2 --db /tmp/seedc.db "$@" > $O/lib-$name.txt 2>&1; echo "lib-$name rc=$?"; }
peer() { name=$1; shift
  ncu --clock-control none --profile-from-start off $S $M python3 bench/ncu_sdpa.py "$@" > $O/cudnn-$name.txt 2>&1; echo "cudnn-$name rc=$?"; }
lib d64c --batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --causal
peer d64c cudnn 32 512 32 32 64 1
lib d256c --batch 32 --seqlen-q 512 --heads-q 8 --head-dim 256 --causal
peer d256c cudnn 32 512 8 8 256 1
lib d128n --batch 32 --seqlen-q 512 --heads-q 16 --head-dim 128
peer d128n cudnn 32 512 16 16 128 0
lib d64n16k --batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64
for f in $O/*.txt; do echo "== $f"
  grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|Grid Size|Block Size|Registers Per|Cluster Size|Shared Memory Config|Dynamic Shared|Static Shared|Achieved Occupancy|Theoretical Occupancy|Block Limit|gmma|issue_active|warps_active|Issue Slots Busy|No Eligible|Active Warps Per|Warp Cycles Per Issued|SM Busy|Compute \(SM\) Throughput|Memory Throughput|Waves Per SM|cycles_active" $f | head -40
done
