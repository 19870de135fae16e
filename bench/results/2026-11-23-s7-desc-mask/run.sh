#!/bin/bash
# device run 2: descriptor stepping + bitmask causal masks (sm90): tests, ABAB timing, ncu 8k vs 16k
O=$OUT; export FA4_DB=/tmp/s7.db FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for t in test_gpu_forward test_gpu_fp8; do
  timeout 200 build/tests/$t > $O/$t.log 2>&1; echo "=== $t rc=$? ok=$(grep -c '^ok' $O/$t.log) not_ok=$(grep -c '^not ok' $O/$t.log)"; grep '^not ok' $O/$t.log | head -5
done
shapes=("--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64"
        "--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64 --causal"
        "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal"
        "--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128"
        "--batch 16 --seqlen-q 1024 --heads-q 16 --head-dim 128 --causal"
        "--batch 32 --seqlen-q 512 --heads-q 8 --head-dim 256 --causal"
        "--batch 32 --seqlen-q 512 --heads-q 32 --head-dim 64 --causal")
for s in "${shapes[@]}"; do
  echo "=== $s"
  for k in old new old new; do
    dir=kernels; [ $k = old ] && dir=_kold/kernels
    r=$(FA4_KERNEL_DIR=$dir timeout 100 build/bench/plan_bench --rounds 5 $s --heuristic 2>&1 | grep '^source=')
    echo "$k $(echo "$r" | grep -o 'ms=[0-9.]* min=[0-9.]* max=[0-9.]*')"
  done
done
echo "=== ncu d64 non-causal 8k (b2) vs 16k (b1), new kernels"
for b in "2 8192" "1 16384"; do set -- $b
  timeout 120 ncu --clock-control none --launch-skip 3 --launch-count 1 -k regex:fa4_fwd --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
   --metrics lts__t_sector_hit_rate.pct,dram__bytes_read.sum,smsp__cycles_active.avg,sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
   build/bench/plan_bench --rounds 1 --reps 2 --batch $1 --seqlen-q $2 --heads-q 32 --head-dim 64 --heuristic > $O/ncu-d64-$2.txt 2>&1
  grep -E "Duration|lts__t_sector_hit|dram__bytes_read|per_second|issue_active|hmma|DRAM Throughput|L2 Hit|Grid Size" $O/ncu-d64-$2.txt | sed "s/^/$2: /"
done
