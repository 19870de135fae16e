#!/bin/bash
# Softcap (cap 30) defaults through the public API: the previous default
# config on the running-max tree (_dev/kold) against the new heuristic on
# the current tree (_dev/knew), and the plain problem's default (no
# softcap) for the cost; separate processes alternating, two rounds.
# Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB= FA4_FAMILIES=sm90
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
R="swizzle=128 q_tiles=1 warps=0 cluster=1 rescale=8 fused_kv=0 exp2_emu=0"
W2="wgs=2 regs=24/240 bm=128"; W3="wgs=3 regs=32/160 bm=192"
CASES=(
"--batch 1 --seqlen-q 16384 --heads-q 32 --head-dim 64|sm90 $W3 bn=128 stages=2 $R pingpong=1 sched=plain splits=0 late_k=1"
"--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128|sm90 $W3 bn=80 stages=3 $R pingpong=0 sched=plain splits=0 late_k=0"
"--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 128 --causal|sm90 $W2 bn=176 stages=2 $R pingpong=1 sched=plain splits=1 late_k=1"
"--batch 1 --seqlen-q 16384 --heads-q 16 --head-dim 256|sm90 $W2 bn=80 stages=2 $R pingpong=1 sched=plain splits=0 late_k=1"
"--batch 1 --seqlen-q 16384 --heads-kv 8 --heads-q 32 --head-dim 128 --causal|"
"--batch 8 --seqlen-q 2048 --heads-q 16 --head-dim 128|"
)
for r in 1 2; do for c in "${CASES[@]}"; do
  s=${c%%|*}; cfg=${c#*|}
  t=$(FA4_DB=/tmp/n.db FA4_KERNEL_DIR=$PWD/_dev/knew timeout 90 build/bench/plan_bench $s --heuristic 2>&1 | grep "^source" | tail -1 | sed 's/ from=.*//')
  echo "r$r [$s] plain $t"
  if [ -n "$cfg" ]; then
  t=$(FA4_DB=/tmp/o.db FA4_KERNEL_DIR=$PWD/_dev/kold timeout 90 build/bench/plan_bench $s --softcap 30 --config "$cfg" 2>&1 | grep "^source" | tail -1 | sed 's/ from=.*//')
  echo "r$r [$s] cap-before $t"
  fi
  t=$(FA4_DB=/tmp/n.db FA4_KERNEL_DIR=$PWD/_dev/knew timeout 90 build/bench/plan_bench $s --softcap 30 --heuristic 2>&1 | grep "^source" | tail -1)
  echo "r$r [$s] cap-now $t"
done; done | tee $O/default.txt
