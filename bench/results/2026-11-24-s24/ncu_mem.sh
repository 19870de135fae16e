#!/bin/bash
# Is fp8 d128 16k bound by L2 -> SM traffic?  One launch each under ncu
# (clocks left alone): memory workload (L2 and DRAM throughput, L1/TEX and
# shared-memory wavefronts), speed of light, with the tensor pipe; the fp8
# default, a 3-warpgroup 192x64 fp8 tile (a third less K/V traffic per
# query row) and bf16's default.  Carries: _dev as build.
ln -sfn _dev build
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_DB=/tmp/ncu.db
NCU="ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,lts__t_sectors_srcunit_tex_op_read.sum,sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
S="--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
run() { name=$1; shift; timeout 150 $NCU build/bench/plan_bench --rounds 1 --reps 2 $S "$@" > $O/$name.txt 2>&1
  grep -E "Duration|SM Frequency|Memory Throughput|L2 Cache Throughput|DRAM Throughput|L1/TEX Cache Throughput|Compute \(SM\)|hmma|pipe_xu|lts__t_bytes|issue_active|L2 Hit|Mem Busy|Max Bandwidth|Mem Pipes" $O/$name.txt | sed "s/^/$name: /" | head -24; }
run fp8 --dtype fp8 --heuristic
run fp8-3wg --dtype fp8 --config "sm90 bm=192 bn=64 stages=4 swizzle=64 wgs=3 regs=32/160 pingpong=1 rescale=8"
run bf16 --heuristic
