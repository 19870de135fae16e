#!/bin/bash
# Upper bound of taking the row max off the softmax's critical path: the
# kernels of _dev/kexp subtract a constant (0) instead of the running row
# max (wrong for general inputs, exact for plan_bench's uniform [-1, 1]
# inputs, whose scaled scores stay far below 2^8).  HEAD's kernels
# (embedded) against kexp, separate processes alternating, two rounds.
# kexp = HEAD's kernels/ with, in sm90/kernel.cuh, FA4_SOFTCAP_FIXED_MAX
# forced to 1, and in sm90/softmax.cuh softcap_fixed_max() returning
# -FA4_P_LOG2 when FA4_SOFTCAP is 0.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
F8="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 sched=plain splits=0 pack_gqa=0 pingpong=1"
CASES=(
"--head-dim 128 --heads-q 16 --dtype fp8|--config|$F8 late_k=0"
"--head-dim 128 --heads-q 16 --dtype fp8|--config|$F8 late_k=1"
"--head-dim 128 --heads-q 16 --dtype fp8 --causal|--config|$F8 late_k=1"
"--head-dim 128 --heads-q 16|--heuristic|"
"--head-dim 128 --heads-q 16 --causal|--heuristic|"
"--head-dim 64 --heads-q 32|--heuristic|"
"--head-dim 256 --heads-q 8|--heuristic|"
)
for r in 1 2; do
  for c in "${CASES[@]}"; do
    IFS='|' read -r shape src cfg <<< "$c"
    for k in head kexp; do
      kd=""; [ $k = kexp ] && kd=$PWD/_dev/kexp
      if [ -n "$cfg" ]; then
        t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$kd timeout 90 build/bench/plan_bench --batch 1 --seqlen-q 16384 $shape $src "$cfg" 2>&1 | grep '^source' | tail -1)
      else
        t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$kd timeout 90 build/bench/plan_bench --batch 1 --seqlen-q 16384 $shape $src 2>&1 | grep '^source' | tail -1)
      fi
      echo "r$r [$shape] $k $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o 'bm=[0-9]* bn=[0-9]*.*late_k=[01]' | sed 's/q_tiles.*pingpong/pp/')"
    done
  done
done
