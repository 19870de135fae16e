#!/bin/bash
# Final tree: test_gpu_serving, then HEAD's kernels (_dev/kold) against
# these (_dev/knew) by plan_bench, separate processes alternating, two
# rounds.  Carries: _dev as build.
O=$OUT; mkdir -p $O; export FA4_SYSTEM_DB=
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
( FA4_DB=/tmp/s.db timeout 270 build/tests/test_gpu_serving > $O/serving.log 2>&1; echo "exit $?" >> $O/serving.log )
echo "serving: $(grep -c '^ok' $O/serving.log) ok, $(grep -c '^not ok' $O/serving.log) not ok, $(tail -1 $O/serving.log)"; grep -A2 '^not ok' $O/serving.log | head -12
F8="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=0 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 sched=plain splits=0 pack_gqa=0 pingpong=1 late_k=0"
CASES=(
"--head-dim 128 --heads-q 16 --dtype fp8|$F8"
"--head-dim 128 --heads-q 16|"
"--head-dim 128 --heads-q 16 --causal|"
"--head-dim 64 --heads-q 32|"
"--head-dim 128 --heads-q 16 --dtype fp16|"
"--head-dim 256 --heads-q 8|"
)
for r in 1 2; do
  for c in "${CASES[@]}"; do
    IFS='|' read -r shape cfg <<< "$c"
    for k in kold knew; do
      if [ -n "$cfg" ]; then src=(--config "$cfg"); else src=(--heuristic); fi
      t=$(FA4_DB=/tmp/$k.db FA4_KERNEL_DIR=$PWD/_dev/$k timeout 60 build/bench/plan_bench --batch 1 --seqlen-q 16384 $shape "${src[@]}" 2>&1 | grep '^source' | tail -1)
      echo "r$r [$shape] $k $(echo "$t" | grep -o 'ms=[0-9.]*') $(echo "$t" | grep -o ' bm=[0-9]* bn=[0-9]*' | head -1)"
    done
  done
done
