#!/bin/bash
# Why the 4-block V^T copy ran 68.5 us against 36.5: launch stats,
# occupancy, memory sections of both copies; SASS of the new one.
ln -sfn _dev build
O=${OUT:-/tmp}; mkdir -p $O; export FA4_SYSTEM_DB=
for pb in plan_bench_old plan_bench; do
timeout 60 ncu --clock-control none --launch-skip 6 --launch-count 1 -k regex:fa4_v_ \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --export $O/$pb --force-overwrite \
    _dev/bench/$pb --batch 16 --seqlen-q 1024 --heads-q 16 --head-dim 128 --causal --dtype fp8 --heuristic \
    --rounds 1 --reps 2 > $O/ncu-$pb.txt 2>&1
grep -E "Duration|Registers|Shared Memory|Achieved Occ|Theoretical Occ|Block Limit|Stall|Local|Waves|DRAM Through|Memory Through|L2 Hit|L1/TEX Hit" $O/ncu-$pb.txt | sed "s/^/$pb /"
done
# the cubin the library compiled: from NVRTC's cache? dump SASS via cuobjdump on the process's module
ls ~/.cache 2>/dev/null
cuobjdump -sass -fun fa4_v_transpose _dev/vt.cubin > $O/vt.sass 2>&1 || nvdisasm _dev/vt.cubin > $O/vt.sass 2>&1
cuobjdump -res-usage _dev/vt.cubin 2>&1 | grep -A1 transpose
grep -cE "LDG" $O/vt.sass; grep -E "LDG|STG|LDL|STL|BAR|STS|LDS" $O/vt.sass | head -40
